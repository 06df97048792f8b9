package themes

import (
	"embed"
	"fmt"
)

// Built-in themes are YAML files embedded in the binary, in the very schema
// users write, so each one doubles as a worked example and the parser is
// exercised by every start of the program.
//
//go:embed builtin/*.yaml
var builtinFS embed.FS

// Default is the theme used when none is named.
const Default = "default"

// builtinNames is the order themes are listed and cycled in: the adaptive
// default first, mono last (it is the NO_COLOR fallback, rarely chosen).
var builtinNames = []string{"default", "light", "dark", "high-contrast", "catppuccin-mocha", "mono"}

// builtins returns the names of the built-in themes in cycling order.
func builtins() []string {
	return append([]string(nil), builtinNames...)
}

func isBuiltin(name string) bool { return contains(builtinNames, name) }

// builtinFile parses one embedded theme. A failure here is a bug in this
// package (the tests load every built-in), but it is returned, not panicked,
// so a broken build degrades to an error on screen.
func builtinFile(name string) (*themeFile, error) {
	path := "builtin/" + name + ".yaml"
	src, err := builtinFS.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("built-in theme %q: %w", name, err)
	}
	return parseFile(src, path)
}
