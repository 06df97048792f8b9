package themes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// dir is where user themes live: $XDG_CONFIG_HOME/meshscope/themes, or
// ~/.config/meshscope/themes when XDG_CONFIG_HOME is unset. ~/.config is used
// on every OS (not os.UserConfigDir's ~/Library/...) because that is where
// terminal users look for a CLI's config. Empty if no home can be found.
func dir() string {
	// The XDG spec says a relative XDG_CONFIG_HOME is invalid and must be ignored.
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "meshscope", "themes")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".config", "meshscope", "themes")
}

// noColor reports whether the user asked for no colour (https://no-color.org:
// any non-empty value counts).
func noColor() bool { return os.Getenv("NO_COLOR") != "" }

// Load returns the theme called name, resolved for a dark or light terminal
// background (isDark: from tea.BackgroundColorMsg.IsDark()).
//
//   - NO_COLOR set to anything non-empty wins over every choice: the result is
//     mono, with Source "NO_COLOR".
//   - "" means Default.
//   - A name containing a path separator or ending in .yaml/.yml is a file
//     path (LoadFile), so `--theme ./mine.yaml` works while trying a theme out.
//   - Otherwise a user file Dir()/NAME.yaml is preferred over a built-in of
//     the same name, so a user can adjust even "default"; `extends` always
//     means a built-in, so such a file can still start from the original.
func Load(name string, isDark bool) (*Theme, error) {
	if noColor() {
		t, err := loadBuiltin("mono", isDark)
		if err != nil {
			return nil, err
		}
		t.Source = "NO_COLOR"
		return t, nil
	}
	if name == "" {
		name = Default
	}
	if looksLikePath(name) {
		return loadFile(name, isDark)
	}
	userPath := ""
	if dir := dir(); dir != "" {
		userPath = filepath.Join(dir, name+".yaml")
		switch _, err := os.Stat(userPath); {
		case err == nil:
			return loadFile(userPath, isDark)
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("theme %q: %w", name, err)
		}
	}
	if isBuiltin(name) {
		return loadBuiltin(name, isDark)
	}
	msg := fmt.Sprintf("theme %q not found: not a built-in (%s)", name, strings.Join(builtinNames, ", "))
	if userPath != "" {
		msg += " and no file " + userPath
	}
	return nil, errors.New(msg)
}

// loadFile loads a user theme from a file; its name is the file name without
// the extension. A theme without `extends` starts from the built-in default.
func loadFile(path string, isDark bool) (*Theme, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("theme: %w", err)
	}
	tf, err := parseFile(src, path)
	if err != nil {
		return nil, err
	}
	tokens, err := resolve(tf, isDark, true, nil)
	if err != nil {
		return nil, err
	}
	base := filepath.Base(path)
	return &Theme{
		Name:        strings.TrimSuffix(base, filepath.Ext(base)),
		Description: tf.description,
		Source:      path,
		Dark:        isDark,
		Tokens:      tokens,
	}, nil
}

func loadBuiltin(name string, isDark bool) (*Theme, error) {
	tf, err := builtinFile(name)
	if err != nil {
		return nil, err
	}
	tokens, err := resolve(tf, isDark, false, []string{name})
	if err != nil {
		return nil, err
	}
	return &Theme{Name: name, Description: tf.description, Source: "built-in", Dark: isDark, Tokens: tokens}, nil
}

// resolve applies a file over its base. User files default to extending
// "default" so a file that sets one token is a complete theme; built-ins
// must be complete on their own (or extend another built-in). chain holds
// the built-ins already being resolved, to refuse cycles.
func resolve(tf *themeFile, isDark, user bool, chain []string) (map[Token]spec, error) {
	ext := tf.extends
	if ext == "" && user {
		ext = Default
	}
	tokens := map[Token]spec{}
	if ext != "" {
		if !isBuiltin(ext) {
			return nil, &fileError{File: tf.file, Problems: []problem{{Line: tf.extendsLine,
				Msg: fmt.Sprintf("extends: unknown built-in theme %q (built-ins: %s)", ext, strings.Join(builtinNames, ", "))}}}
		}
		if contains(chain, ext) {
			return nil, &fileError{File: tf.file, Problems: []problem{{Line: tf.extendsLine,
				Msg: fmt.Sprintf("extends: cycle %s -> %s", strings.Join(chain, " -> "), ext)}}}
		}
		btf, err := builtinFile(ext)
		if err != nil {
			return nil, err
		}
		if tokens, err = resolve(btf, isDark, false, append(chain, ext)); err != nil {
			return nil, err
		}
	}
	for tok, p := range tf.tokens {
		tokens[tok] = p.apply(tokens[tok], isDark)
	}
	var missing []string
	for _, tok := range allTokens {
		if _, ok := tokens[tok]; !ok {
			missing = append(missing, string(tok))
		}
	}
	if len(missing) > 0 {
		return nil, &fileError{File: tf.file, Problems: []problem{{
			Msg: fmt.Sprintf("tokens not set: %s (set them, or use extends)", strings.Join(missing, ", "))}}}
	}
	return tokens, nil
}

// apply lays a patch over a spec: only what the file said changes.
func (p patch) apply(s spec, isDark bool) spec {
	if p.fg != nil {
		s.FG = p.fg.resolve(isDark)
	}
	if p.bg != nil {
		s.BG = p.bg.resolve(isDark)
	}
	for name, v := range p.attrs {
		switch name {
		case "bold":
			s.Bold = v
		case "faint":
			s.Faint = v
		case "italic":
			s.Italic = v
		case "underline":
			s.Underline = v
		case "reverse":
			s.Reverse = v
		case "strikethrough":
			s.Strikethrough = v
		}
	}
	return s
}

// Names lists the themes Load accepts: built-ins in their fixed order, then
// the user's themes from Dir() sorted by name. A user file that shadows a
// built-in is listed once, in the built-in's place. Meant for the key that
// cycles themes and for --theme completion; an unreadable directory just
// contributes nothing (the error would surface when a theme is loaded).
func Names() []string {
	names := builtins()
	dir := dir()
	if dir == "" {
		return names
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return names
	}
	var user []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".yaml") {
			continue
		}
		n = strings.TrimSuffix(n, ".yaml")
		if n == "" || strings.HasPrefix(n, ".") || isBuiltin(n) {
			continue
		}
		user = append(user, n)
	}
	sort.Strings(user)
	return append(names, user...)
}

// Next returns the name after current in names, wrapping around; the first
// name if current is not in the list. For the theme-cycling key.
func Next(names []string, current string) string {
	if len(names) == 0 {
		return current
	}
	for i, n := range names {
		if n == current {
			return names[(i+1)%len(names)]
		}
	}
	return names[0]
}

func looksLikePath(name string) bool {
	return strings.ContainsAny(name, `/\`) || strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")
}
