package themes

import (
	"image/color"
	"strconv"
	"testing"
)

func TestBuiltinsLoadAndSetEveryToken(t *testing.T) {
	isolate(t)
	for _, name := range builtins() {
		t.Run(name, func(t *testing.T) {
			// Every token is written out in the file itself: a built-in is
			// also the example users copy, so it must not rely on a base.
			tf, err := builtinFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if tf.extends != "" {
				t.Errorf("built-in extends %q; built-ins should be complete", tf.extends)
			}
			for _, tok := range allTokens {
				if _, ok := tf.tokens[tok]; !ok {
					t.Errorf("token %s not set in builtin/%s.yaml", tok, name)
				}
			}
			if tf.description == "" {
				t.Error("no description")
			}
			for _, dark := range []bool{false, true} {
				th, err := Load(name, dark)
				if err != nil {
					t.Fatalf("Load(%q, %v): %v", name, dark, err)
				}
				if th.Name != name || th.Source != "built-in" || th.Dark != dark {
					t.Errorf("got Name=%q Source=%q Dark=%v", th.Name, th.Source, th.Dark)
				}
				if len(th.Tokens) != len(allTokens) {
					t.Errorf("%d tokens, want %d", len(th.Tokens), len(allTokens))
				}
				checkVisible(t, th)
			}
		})
	}
}

// checkVisible: in colour themes the state and kind tokens have a foreground
// and the bars have a background; mono has no colour at all, and its
// emphasised tokens use only bold, underline and reverse.
func checkVisible(t *testing.T, th *Theme) {
	t.Helper()
	if th.Name == "mono" {
		if !th.colorless() {
			t.Error("mono sets a colour")
		}
		for tok, s := range th.Tokens {
			if s.Faint || s.Italic || s.Strikethrough {
				t.Errorf("mono %s uses an attribute other than bold/underline/reverse", tok)
			}
		}
		for _, tok := range []Token{Selection, StatusBar} {
			if !th.spec(tok).Reverse {
				t.Errorf("mono %s is not reversed", tok)
			}
		}
		for _, tok := range []Token{Accent, Warn, Error, Gateway, Leaked, Forced, Header, Match} {
			s := th.spec(tok)
			if !s.Bold && !s.Underline && !s.Reverse {
				t.Errorf("mono %s is indistinguishable from text", tok)
			}
		}
		return
	}
	for _, tok := range []Token{Muted, Accent, OK, Warn, Error, Local, Gateway, Leaked, Forced, Dropped, Border, Header, Match} {
		if th.spec(tok).FG == nil {
			t.Errorf("%s (dark=%v): %s has no foreground", th.Name, th.Dark, tok)
		}
	}
	for _, tok := range []Token{Selection, StatusBar} {
		if th.spec(tok).BG == nil {
			t.Errorf("%s (dark=%v): %s has no background", th.Name, th.Dark, tok)
		}
	}
}

func TestDefaultAdaptsToBackground(t *testing.T) {
	isolate(t)
	light, err := Load("default", false)
	if err != nil {
		t.Fatal(err)
	}
	dark, err := Load("", true) // "" means default
	if err != nil {
		t.Fatal(err)
	}
	if dark.Name != "default" {
		t.Fatalf(`Load("") loaded %q`, dark.Name)
	}
	for _, tok := range []Token{Accent, OK, Selection} {
		l, d := light.spec(tok), dark.spec(tok)
		if hex(l.FG) == hex(d.FG) && hex(l.BG) == hex(d.BG) {
			t.Errorf("%s is the same on light and dark backgrounds", tok)
		}
	}
	if got := hex(dark.spec(Accent).FG); got != hex(ansi(12)) {
		t.Errorf("dark accent = %s, want ANSI 12", got)
	}
	if got := hex(light.spec(Accent).FG); got != hex(ansi(4)) {
		t.Errorf("light accent = %s, want ANSI 4", got)
	}
	if light.spec(Text).FG != nil {
		t.Error("default text should be the terminal's own colour")
	}
}

func TestCatppuccinMochaPalette(t *testing.T) {
	isolate(t)
	th, err := Load("catppuccin-mocha", true)
	if err != nil {
		t.Fatal(err)
	}
	// Official Mocha values: text, mauve, green, yellow, red, blue, surface1, mantle.
	want := map[string]string{
		"text": "#cdd6f4", "accent": "#cba6f7", "ok": "#a6e3a1", "warn": "#f9e2af",
		"error": "#f38ba8", "gateway": "#89b4fa", "selection.bg": "#45475a", "statusbar.bg": "#181825",
	}
	got := map[string]string{
		"text": hex(th.spec(Text).FG), "accent": hex(th.spec(Accent).FG), "ok": hex(th.spec(OK).FG),
		"warn": hex(th.spec(Warn).FG), "error": hex(th.spec(Error).FG), "gateway": hex(th.spec(Gateway).FG),
		"selection.bg": hex(th.spec(Selection).BG), "statusbar.bg": hex(th.spec(StatusBar).BG),
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %s, want %s", k, got[k], w)
		}
	}
}

// ansi is the colour parseColor gives for an ANSI number.
func ansi(n int) color.Color {
	c, ok := parseColor(strconv.Itoa(n))
	if !ok {
		panic(n)
	}
	return c
}
