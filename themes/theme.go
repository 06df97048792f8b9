package themes

import "image/color"

// spec is what a theme says about one token: colours and text attributes.
// A nil colour means "the terminal's own" (no escape code is written), which
// is how mono and NO_COLOR stay colourless and how default keeps the user's
// text colour.
type spec struct {
	FG, BG color.Color

	Bold, Faint, Italic, Underline, Reverse, Strikethrough bool
}

// Theme is a resolved theme: every token has a Spec and light/dark choices
// have already been made for the background it was loaded for.
type Theme struct {
	// Name is what the user asked for (--theme, the cycle key), or "mono"
	// when NO_COLOR forced it.
	Name string
	// Description is the theme file's one-line description, if any.
	Description string
	// Source says where the theme came from: "built-in", the path of a
	// user's file, or "NO_COLOR" when the environment overrode the choice.
	// Shown in the status bar so a surprising look can be explained.
	Source string
	// Dark is the background the light/dark pairs were resolved for.
	Dark bool
	// Tokens holds a Spec for every token in Tokens().
	Tokens map[Token]spec
}

// spec returns the spec of one token (the zero Spec, i.e. plain terminal
// text, for a token the theme does not hold, which Load never returns).
func (t *Theme) spec(tok Token) spec {
	return t.Tokens[tok]
}

// colorless reports whether no token sets a colour (mono, NO_COLOR). Styles
// uses it to keep focus visible by shape instead of colour.
func (t *Theme) colorless() bool {
	for _, s := range t.Tokens {
		if s.FG != nil || s.BG != nil {
			return false
		}
	}
	return true
}
