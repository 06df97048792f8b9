package themes

import (
	"image/color"
	"strconv"

	"charm.land/lipgloss/v2"
)

// colorHelp ends every "is not a color" error, so the fix is in the message.
const colorHelp = "(use #rgb, #rrggbb or an ANSI number 0-255)"

// noneWord is the colour value that means "the terminal's own colour". It
// lets a user theme take a colour away from the theme it extends.
const noneWord = "none"

// parseColor turns one YAML scalar into a colour. ok is false when s is not
// one of the accepted forms; a nil colour with ok true means "none".
//
// The check is ours and strict, not lipgloss.Color's: lipgloss silently maps
// anything it cannot read to "no colour" and reads numbers above 255 as RGB,
// and a typo should be an error, not a missing colour.
func parseColor(s string) (c color.Color, ok bool) {
	switch {
	case s == noneWord:
		return nil, true
	case len(s) > 0 && s[0] == '#':
		if (len(s) != 4 && len(s) != 7) || !isHex(s[1:]) {
			return nil, false
		}
		return lipgloss.Color(s), true
	default:
		if s == "" || !isDigits(s) {
			return nil, false
		}
		n, err := strconv.Atoi(s)
		if err != nil || n > 255 {
			return nil, false
		}
		// lipgloss maps 0-15 to the basic palette and 16-255 to the
		// indexed one, which is what "ANSI number" means to users.
		return lipgloss.Color(strconv.Itoa(n)), true
	}
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// adaptive is a colour that may differ between light and dark terminals.
// A plain colour has light == dark.
type adaptive struct {
	light, dark color.Color
}

// resolve picks the colour for the terminal's background, through lipgloss's
// own helper so the choice is made the same way as in the rest of the UI.
func (a adaptive) resolve(isDark bool) color.Color {
	return lipgloss.LightDark(isDark)(a.light, a.dark)
}
