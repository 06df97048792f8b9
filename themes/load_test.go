package themes

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestUserThemeOverridesItsBase(t *testing.T) {
	dir := isolate(t)
	writeTheme(t, dir, "ocean", `
description: Deep blue accents
extends: dark
tokens:
  accent: "#0af"          # only the colour: dark's accent had no attributes
  error: "#f00"           # dark's error is bold: the file keeps that
  selection: {bg: 17}     # only the background; fg stays dark's
  ok: {light: "2", dark: "#00ff7f"}
  leaked: {bold: false, underline: true}
`)
	th, err := Load("ocean", true)
	if err != nil {
		t.Fatal(err)
	}
	base, err := Load("dark", true)
	if err != nil {
		t.Fatal(err)
	}
	if th.Name != "ocean" || th.Description != "Deep blue accents" || th.Source != filepath.Join(dir, "ocean.yaml") {
		t.Errorf("Name=%q Description=%q Source=%q", th.Name, th.Description, th.Source)
	}
	checks := []struct {
		what, got, want string
	}{
		{"accent fg", hex(th.spec(Accent).FG), "#00aaff"},
		{"error fg", hex(th.spec(Error).FG), "#ff0000"},
		{"selection bg", hex(th.spec(Selection).BG), hex(ansi(17))},
		{"selection fg", hex(th.spec(Selection).FG), hex(base.spec(Selection).FG)},
		{"ok fg (dark)", hex(th.spec(OK).FG), "#00ff7f"},
		{"warn fg (untouched)", hex(th.spec(Warn).FG), hex(base.spec(Warn).FG)},
		{"leaked fg (untouched)", hex(th.spec(Leaked).FG), hex(base.spec(Leaked).FG)},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %s, want %s", c.what, c.got, c.want)
		}
	}
	if !th.spec(Error).Bold {
		t.Error("error lost dark's bold: a colour-only override must keep attributes")
	}
	if l := th.spec(Leaked); l.Bold || !l.Underline {
		t.Errorf("leaked attrs = bold %v underline %v, want false/true", l.Bold, l.Underline)
	}

	light, err := Load("ocean", false)
	if err != nil {
		t.Fatal(err)
	}
	if got := hex(light.spec(OK).FG); got != hex(ansi(2)) {
		t.Errorf("ok on light = %s, want ANSI 2", got)
	}
}

func TestUserThemeWithoutExtendsStartsFromDefault(t *testing.T) {
	dir := isolate(t)
	writeTheme(t, dir, "tiny", "tokens:\n  accent: \"#123456\"\n")
	for _, dark := range []bool{false, true} {
		th, err := Load("tiny", dark)
		if err != nil {
			t.Fatal(err)
		}
		def, _ := Load("default", dark)
		if got := hex(th.spec(Accent).FG); got != "#123456" {
			t.Errorf("accent = %s", got)
		}
		for _, tok := range allTokens {
			if tok == Accent {
				continue
			}
			if !reflect.DeepEqual(th.spec(tok), def.spec(tok)) {
				t.Errorf("dark=%v: %s = %+v, want default's %+v", dark, tok, th.spec(tok), def.spec(tok))
			}
		}
	}
}

func TestEmptyUserFileIsDefault(t *testing.T) {
	dir := isolate(t)
	writeTheme(t, dir, "blank", "# nothing yet\n")
	th, err := Load("blank", true)
	if err != nil {
		t.Fatal(err)
	}
	def, _ := Load("default", true)
	if !reflect.DeepEqual(th.Tokens, def.Tokens) {
		t.Error("an empty theme file should look exactly like default")
	}
}

func TestUserFileShadowsBuiltinAndExtendsTheOriginal(t *testing.T) {
	dir := isolate(t)
	// default.yaml extending default: the user's file wins for the name,
	// extends still means the built-in (no cycle).
	writeTheme(t, dir, "default", "extends: default\ntokens:\n  accent: \"#abcdef\"\n")
	th, err := Load("", true)
	if err != nil {
		t.Fatal(err)
	}
	if th.Source != filepath.Join(dir, "default.yaml") || hex(th.spec(Accent).FG) != "#abcdef" {
		t.Errorf("Source=%q accent=%s", th.Source, hex(th.spec(Accent).FG))
	}
	if got := Names(); strings.Count(strings.Join(got, " "), "default") != 1 {
		t.Errorf("Names() = %v, want default once", got)
	}
}

func TestLoadByPath(t *testing.T) {
	isolate(t)
	p := writeTheme(t, t.TempDir(), "trial", "extends: light\n")
	th, err := Load(p, false)
	if err != nil {
		t.Fatal(err)
	}
	if th.Name != "trial" || th.Source != p {
		t.Errorf("Name=%q Source=%q", th.Name, th.Source)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml"), false); err == nil ||
		!strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: err = %v", err)
	}
}

func TestLoadUnknownName(t *testing.T) {
	dir := isolate(t)
	_, err := Load("solarised", true)
	want := `theme "solarised" not found: not a built-in (default, light, dark, high-contrast, catppuccin-mocha, mono) and no file ` +
		filepath.Join(dir, "solarised.yaml")
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant  %s", err, want)
	}
}

func TestNoColorForcesMono(t *testing.T) {
	dir := isolate(t)
	writeTheme(t, dir, "loud", "tokens:\n  text: \"#ff00ff\"\n")
	for _, v := range []string{"1", "0", "true", "anything"} {
		t.Setenv("NO_COLOR", v)
		for _, asked := range []string{"", "dark", "catppuccin-mocha", "loud", "does-not-exist"} {
			th, err := Load(asked, true)
			if err != nil {
				t.Fatalf("NO_COLOR=%q Load(%q): %v", v, asked, err)
			}
			if th.Name != "mono" || th.Source != "NO_COLOR" || !th.colorless() {
				t.Errorf("NO_COLOR=%q Load(%q) = %s from %s (colorless %v)", v, asked, th.Name, th.Source, th.colorless())
			}
		}
	}
	t.Setenv("NO_COLOR", "") // empty means not set, per no-color.org
	if th, err := Load("dark", true); err != nil || th.Name != "dark" {
		t.Errorf("NO_COLOR empty: got %v, %v", th, err)
	}
}

func TestNames(t *testing.T) {
	dir := isolate(t)
	want := []string{"default", "light", "dark", "high-contrast", "catppuccin-mocha", "mono"}
	if got := Names(); !reflect.DeepEqual(got, want) { // no user dir yet
		t.Errorf("Names() = %v, want %v", got, want)
	}
	writeTheme(t, dir, "zebra", "")
	writeTheme(t, dir, "alpha", "")
	writeTheme(t, dir, "dark", "") // shadows the built-in: listed once
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	want = append(want, "alpha", "zebra")
	if got := Names(); !reflect.DeepEqual(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	for _, n := range Names() {
		if _, err := Load(n, true); err != nil {
			t.Errorf("listed theme %q does not load: %v", n, err)
		}
	}
}

func TestNext(t *testing.T) {
	names := []string{"a", "b", "c"}
	for cur, want := range map[string]string{"a": "b", "c": "a", "zz": "a"} {
		if got := Next(names, cur); got != want {
			t.Errorf("Next(%q) = %q, want %q", cur, got, want)
		}
	}
	if got := Next(nil, "x"); got != "x" {
		t.Errorf("Next(nil) = %q", got)
	}
}

func TestDir(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/xdg")
	if got, want := dir(), filepath.Join("/xdg", "meshscope", "themes"); got != want {
		t.Errorf("Dir() = %q, want %q", got, want)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, x := range []string{"", "relative/path"} { // unset, or invalid per XDG
		t.Setenv("XDG_CONFIG_HOME", x)
		if got, want := dir(), filepath.Join(home, ".config", "meshscope", "themes"); got != want {
			t.Errorf("XDG_CONFIG_HOME=%q: Dir() = %q, want %q", x, got, want)
		}
	}
}
