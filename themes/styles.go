package themes

import "charm.land/lipgloss/v2"

// Styles are ready-made lipgloss styles for every token, built once per theme
// so views never assemble colours themselves (and a theme change is one
// NewStyles call followed by a redraw).
type Styles struct {
	// Theme is the theme these styles were built from.
	Theme *Theme

	Text, Muted, Accent    lipgloss.Style
	OK, Warn, Error        lipgloss.Style
	Local, Gateway, Leaked lipgloss.Style
	Forced, Dropped        lipgloss.Style
	Border                 lipgloss.Style // separators drawn as text (│ ─)
	Selection, Header      lipgloss.Style
	StatusBar, Match       lipgloss.Style
	Pane, FocusedPane      lipgloss.Style // bordered boxes, unfocused and focused
	byToken                map[Token]lipgloss.Style
}

// NewStyles builds the styles for a theme.
func NewStyles(t *Theme) Styles {
	s := Styles{Theme: t, byToken: make(map[Token]lipgloss.Style, len(allTokens))}
	for _, tok := range allTokens {
		s.byToken[tok] = styleOf(t.spec(tok))
	}
	g := func(tok Token) lipgloss.Style { return s.byToken[tok] }
	s.Text, s.Muted, s.Accent = g(Text), g(Muted), g(Accent)
	s.OK, s.Warn, s.Error = g(OK), g(Warn), g(Error)
	s.Local, s.Gateway, s.Leaked = g(Local), g(Gateway), g(Leaked)
	s.Forced, s.Dropped = g(Forced), g(Dropped)
	s.Border = g(Border)
	s.Selection, s.Header = g(Selection), g(Header)
	s.StatusBar, s.Match = g(StatusBar), g(Match)

	s.Pane = lipgloss.NewStyle().Border(lipgloss.RoundedBorder())
	s.FocusedPane = s.Pane
	if c := t.spec(Border).FG; c != nil {
		s.Pane = s.Pane.BorderForeground(c)
	}
	if c := t.spec(Accent).FG; c != nil {
		s.FocusedPane = s.FocusedPane.BorderForeground(c)
	}
	if t.colorless() {
		// Without colour, focus must show in the shape of the border.
		s.FocusedPane = s.FocusedPane.Border(lipgloss.ThickBorder())
	}
	return s
}

// Of returns the style of any token, for code that picks the token at run
// time (e.g. from an endpoint's kind). Unknown tokens get a plain style.
func (s Styles) Of(tok Token) lipgloss.Style {
	if st, ok := s.byToken[tok]; ok {
		return st
	}
	return lipgloss.NewStyle()
}

// styleOf turns a Spec into a style. Nil colours are left unset rather than
// set to NoColor so that styles combine: s.Leaked.Inherit(s.Selection) is a
// leaked endpoint in the selected row, with the row's background.
func styleOf(sp spec) lipgloss.Style {
	st := lipgloss.NewStyle()
	if sp.FG != nil {
		st = st.Foreground(sp.FG)
	}
	if sp.BG != nil {
		st = st.Background(sp.BG)
	}
	if sp.Bold {
		st = st.Bold(true)
	}
	if sp.Faint {
		st = st.Faint(true)
	}
	if sp.Italic {
		st = st.Italic(true)
	}
	if sp.Underline {
		st = st.Underline(true)
	}
	if sp.Reverse {
		st = st.Reverse(true)
	}
	if sp.Strikethrough {
		st = st.Strikethrough(true)
	}
	return st
}
