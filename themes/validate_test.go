package themes

import (
	"errors"
	"strings"
	"testing"
)

// Each validation error's exact wording: these messages are the theme
// author's only documentation at the moment something goes wrong.
func TestValidationErrors(t *testing.T) {
	known := "text, muted, accent, ok, warn, error, local, gateway, leaked, forced, dropped, border, selection, header, statusbar, match"
	help := "(use #rgb, #rrggbb or an ANSI number 0-255)"
	cases := []struct {
		name, body string
		want       []string // "LINE: message", one per problem, in order
	}{
		{"unknown token", "tokens:\n  acent: \"#fff\"\n",
			[]string{`2: unknown token "acent" (known: ` + known + `)`}},
		{"short hex", "tokens:\n  accent: \"#12\"\n",
			[]string{`2: token accent: "#12" is not a color ` + help}},
		{"bad hex digit", "tokens:\n  accent: \"#12345g\"\n",
			[]string{`2: token accent: "#12345g" is not a color ` + help}},
		{"ansi out of range", "tokens:\n  accent: 256\n",
			[]string{`2: token accent: "256" is not a color ` + help}},
		{"negative ansi", "tokens:\n  accent: -1\n",
			[]string{`2: token accent: "-1" is not a color ` + help}},
		{"colour name", "tokens:\n  accent: red\n",
			[]string{`2: token accent: "red" is not a color ` + help}},
		{"bool as colour", "tokens:\n  accent: true\n",
			[]string{`2: token accent: "true" is not a color ` + help}},
		{"unquoted hex is a comment", "tokens:\n  accent: #ff0000\n",
			[]string{`2: token accent: no value; quote hex colors ("#ff0000"): unquoted, # starts a YAML comment`}},
		{"nested fg/bg", "tokens:\n  selection:\n    fg: \"#fff\"\n    bg: \"#xyz\"\n",
			[]string{`4: token selection.bg: "#xyz" is not a color ` + help}},
		{"light/dark value", "tokens:\n  ok: {light: \"2\", dark: \"#0f\"}\n",
			[]string{`2: token ok.dark: "#0f" is not a color ` + help}},
		{"half a pair", "tokens:\n  ok: {dark: \"2\"}\n",
			[]string{`2: token ok: a light/dark pair needs both light and dark`}},
		{"unknown key in token", "tokens:\n  error: {fg: \"1\", blink: true}\n",
			[]string{`2: token error: unknown key "blink" (known: fg, bg, bold, faint, italic, underline, reverse, strikethrough; or light and dark for a color)`}},
		{"unknown key in pair", "tokens:\n  error:\n    fg: {light: \"1\", dim: \"2\"}\n",
			[]string{`3: token error.fg: unknown key "dim" (known: light, dark)`}},
		{"bad bool", "tokens:\n  error: {bold: yes}\n",
			[]string{`2: token error.bold: "yes" is not true or false`}},
		{"list value", "tokens:\n  error: [1, 2]\n",
			[]string{`2: token error: expected a color, a light/dark pair, or a mapping of fg, bg and attributes`}},
		{"token at top level", "accent: \"#fff\"\n",
			[]string{`1: "accent" is a token: put it under tokens:`}},
		{"unknown field", "name: mine\ncolors: {}\n",
			[]string{`1: unknown field "name" (known: description, extends, tokens)`,
				`2: unknown field "colors" (known: description, extends, tokens)`}},
		{"duplicate token", "tokens:\n  ok: \"2\"\n  ok: \"3\"\n",
			[]string{`3: token ok is set twice (first on line 2)`}},
		{"tokens not a mapping", "tokens: \"#fff\"\n",
			[]string{`1: tokens: expected a mapping of token name to color (known tokens: ` + known + `)`}},
		{"root not a mapping", "- accent\n",
			[]string{`1: a theme file is a mapping with the fields description, extends and tokens`}},
		{"extends unknown", "extends: solarized\n",
			[]string{`1: extends: unknown built-in theme "solarized" (built-ins: default, light, dark, high-contrast, catppuccin-mocha, mono)`}},
		{"extends empty", "extends:\n",
			[]string{`1: extends: expected the name of a built-in theme (default, light, dark, high-contrast, catppuccin-mocha, mono)`}},
		{"yaml syntax", "tokens:\n  accent: \"#fff\n",
			[]string{`2: found unexpected end of stream`}},
		{"every problem at once", "tokens:\n  acent: \"1\"\n  ok: \"#12\"\n  warn: {bold: maybe}\n",
			[]string{`2: unknown token "acent" (known: ` + known + `)`,
				`3: token ok: "#12" is not a color ` + help,
				`4: token warn.bold: "maybe" is not true or false`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := isolate(t)
			path := writeTheme(t, dir, "bad", c.body)
			_, err := Load("bad", true)
			if err == nil {
				t.Fatal("no error")
			}
			var want []string
			for _, w := range c.want {
				want = append(want, path+":"+w)
			}
			if got := err.Error(); got != strings.Join(want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
			}
			var fe *fileError
			if !errors.As(err, &fe) || fe.File != path || len(fe.Problems) != len(c.want) {
				t.Errorf("not a *FileError for %s with %d problems: %#v", path, len(c.want), err)
			}
		})
	}
}

// The accepted colour forms, so a tightening of the checks cannot reject
// what docs/themes.md promises.
func TestColorForms(t *testing.T) {
	for in, want := range map[string]string{
		"#abc": "#aabbcc", "#ABCDEF": "#abcdef", "#000000": "#000000",
		"0": hex(ansi(0)), "15": hex(ansi(15)), "255": hex(ansi(255)), "none": "none",
	} {
		c, ok := parseColor(in)
		if !ok || hex(c) != want {
			t.Errorf("parseColor(%q) = %s, %v; want %s", in, hex(c), ok, want)
		}
	}
	for _, bad := range []string{"", "#", "#ab", "#abcd", "#abcdefa", "256", "-1", "+1", "1.5", "0x10", "red", "None"} {
		if _, ok := parseColor(bad); ok {
			t.Errorf("parseColor(%q) accepted", bad)
		}
	}
}

// YAML anchors let a theme name a colour once; aliases must resolve.
func TestAnchorsAndAliases(t *testing.T) {
	dir := isolate(t)
	writeTheme(t, dir, "anchored", `
tokens:
  accent: &brand "#7c3aed"
  header: {fg: *brand, bold: true}
  match: *brand
`)
	th, err := Load("anchored", true)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []Token{Accent, Header, Match} {
		if got := hex(th.spec(tok).FG); got != "#7c3aed" {
			t.Errorf("%s = %s", tok, got)
		}
	}
}
