package themes

import (
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
)

func TestStylesFollowTheTheme(t *testing.T) {
	isolate(t)
	th, err := Load("catppuccin-mocha", true)
	if err != nil {
		t.Fatal(err)
	}
	st := NewStyles(th)
	named := map[Token]lipgloss.Style{
		Text: st.Text, Muted: st.Muted, Accent: st.Accent, OK: st.OK, Warn: st.Warn, Error: st.Error,
		Local: st.Local, Gateway: st.Gateway, Leaked: st.Leaked, Forced: st.Forced, Dropped: st.Dropped,
		Border: st.Border, Selection: st.Selection, Header: st.Header, StatusBar: st.StatusBar, Match: st.Match,
	}
	if len(named) != len(allTokens) {
		t.Fatalf("Styles has %d token fields, want %d", len(named), len(allTokens))
	}
	for tok, s := range named {
		sp := th.spec(tok)
		if hex(s.GetForeground()) != hex(sp.FG) && sp.FG != nil {
			t.Errorf("%s fg = %s, want %s", tok, hex(s.GetForeground()), hex(sp.FG))
		}
		if sp.BG != nil && hex(s.GetBackground()) != hex(sp.BG) {
			t.Errorf("%s bg = %s, want %s", tok, hex(s.GetBackground()), hex(sp.BG))
		}
		if s.GetBold() != sp.Bold || s.GetUnderline() != sp.Underline || s.GetStrikethrough() != sp.Strikethrough {
			t.Errorf("%s attributes differ from the spec", tok)
		}
		if st.Of(tok).Render("x") != s.Render("x") {
			t.Errorf("Of(%s) differs from the field", tok)
		}
	}
	if got := st.Of("nope").Render("x"); got != "x" {
		t.Errorf("Of(unknown) = %q, want plain", got)
	}
	if hex(st.Pane.GetBorderTopForeground()) != "#585b70" || hex(st.FocusedPane.GetBorderTopForeground()) != "#cba6f7" {
		t.Errorf("pane borders: %s / %s", hex(st.Pane.GetBorderTopForeground()), hex(st.FocusedPane.GetBorderTopForeground()))
	}
	// Tokens without a background combine with the selection bar.
	if bg := st.Leaked.Inherit(st.Selection).GetBackground(); hex(bg) != "#45475a" {
		t.Errorf("leaked in selection has bg %s", hex(bg))
	}
}

func TestMonoRendersNoColor(t *testing.T) {
	isolate(t)
	th, err := Load("mono", true)
	if err != nil {
		t.Fatal(err)
	}
	st := NewStyles(th)
	for _, tok := range allTokens {
		out := st.Of(tok).Render("x")
		if strings.Contains(out, "38;") || strings.Contains(out, "48;") || strings.Contains(out, "[3") {
			t.Errorf("mono %s renders a colour: %q", tok, out)
		}
	}
	if !strings.Contains(st.Selection.Render("x"), "7m") {
		t.Errorf("mono selection is not reversed: %q", st.Selection.Render("x"))
	}
	// Focus must still show without colour: the focused pane changes shape.
	if st.FocusedPane.GetBorderStyle() == st.Pane.GetBorderStyle() {
		t.Error("mono focused pane looks like an unfocused one")
	}
	if dark, _ := Load("dark", true); NewStyles(dark).FocusedPane.GetBorderStyle() != NewStyles(dark).Pane.GetBorderStyle() {
		t.Error("colour themes should show focus by colour, keeping the border shape")
	}
}
