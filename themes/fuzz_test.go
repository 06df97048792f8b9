package themes

import (
	"errors"
	"strings"
	"testing"
)

// FuzzThemeFile: any theme file loads (parse, then resolve over its base)
// or gives a *FileError listing at least one problem, each a sentence
// printed as "file[:line]: message" — never a panic. A theme that loads
// holds a Spec for every token and builds its styles.
func FuzzThemeFile(f *testing.F) {
	for _, name := range builtinNames {
		src, err := builtinFS.ReadFile("builtin/" + name + ".yaml")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src, false)
	}
	for _, s := range []string{
		"description: Deep blue accents\nextends: dark\ntokens:\n  accent: \"#0af\"\n  selection: {bg: 17}\n  ok: {light: \"2\", dark: \"#00ff7f\"}\n  leaked: {bold: false, underline: true}\n",
		"tokens:\n  accent: &a \"#123456\"\n  ok: *a\n  error: {fg: {light: red, dark: 9}, bold: yes}\n",
		"extends: nope\n",
		"extends: default\nextends: dark\n",
		"accent: \"#fff\"\n",
		"tokens: [1, 2]\n",
		"tokens:\n  accent: \"#ggg\"\n  nosuch: red\n",
		"- a\n",
		"{{{",
		"",
	} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, src []byte, isDark bool) {
		const file = "fuzz.yaml"
		tf, err := parseFile(src, file)
		var tokens map[Token]spec
		if err == nil {
			tokens, err = resolve(tf, isDark, true, nil)
		}
		if err != nil {
			var fe *fileError
			if !errors.As(err, &fe) || len(fe.Problems) == 0 {
				t.Fatalf("not a FileError with problems: %#v", err)
			}
			for _, p := range fe.Problems {
				if strings.TrimSpace(p.Msg) == "" || p.Line < 0 {
					t.Fatalf("problem without a message or with line %d: %#v", p.Line, p)
				}
			}
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, file+":") {
					t.Fatalf("error line does not start with the file name: %q", line)
				}
			}
			return
		}
		for _, tok := range allTokens {
			if _, ok := tokens[tok]; !ok {
				t.Fatalf("loaded theme lacks token %s", tok)
			}
		}
		st := NewStyles(&Theme{Name: "fuzz", Dark: isDark, Tokens: tokens})
		for _, tok := range allTokens {
			st.Of(tok).Render("x")
		}
	})
}
