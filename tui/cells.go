package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/meshscope/meshscope/analysis/fleet"
	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/themes"
)

// The render step apart from styling (as k9s's internal/render): a view
// first turns its data into lines of spans — text with the theme token it
// means (ok, warn, a gateway endpoint) — and only paint turns tokens into
// the theme's styles. The rows can then be tested as text, and a theme
// change repaints without rebuilding them.

// span is text with the theme token it is drawn in.
type span struct {
	text string
	tok  themes.Token
}

// line is one screen line of spans; an empty line is a blank line.
type line []span

// sp is a span.
func sp(tok themes.Token, text string) span { return span{text: text, tok: tok} }

// one is a line of one span.
func one(tok themes.Token, text string) line { return line{sp(tok, text)} }

// text is the line's plain text.
func (l line) text() string {
	var b strings.Builder
	for _, s := range l {
		b.WriteString(s.text)
	}
	return b.String()
}

// paint draws a line in the theme.
func (vc viewContext) paint(l line) string {
	var b strings.Builder
	for _, s := range l {
		b.WriteString(vc.st.Of(s.tok).Render(s.text))
	}
	return b.String()
}

// paintAll draws lines in the theme.
func (vc viewContext) paintAll(ls []line) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = vc.paint(l)
	}
	return out
}

// kindToken is the token of an endpoint's kind.
func kindToken(k horizon.Kind) themes.Token {
	switch k {
	case horizon.Local:
		return themes.Local
	case horizon.Gateway:
		return themes.Gateway
	case horizon.Leaked:
		return themes.Leaked
	case horizon.Forced:
		return themes.Forced
	}
	return themes.Muted
}

// severityToken is the token of a problem's severity: errors and warnings,
// the rest muted.
func severityToken(s model.Severity) themes.Token {
	switch s {
	case model.SeverityError:
		return themes.Error
	case model.SeverityWarning:
		return themes.Warn
	}
	return themes.Muted
}

// fleetStateToken is the token of a proxy's sync state as the proxies view
// writes it (a state, maybe followed by detail; "NOT SENT …").
func fleetStateToken(s string) themes.Token {
	switch fleet.State(strings.Fields(s + " ")[0]) {
	case fleet.Synced:
		return themes.OK
	case fleet.Stale, fleet.Unknown, fleet.NotSent:
		return themes.Warn
	case fleet.Rejected, fleet.Disconnected:
		return themes.Error
	}
	if strings.HasPrefix(s, "NOT SENT") {
		return themes.Warn
	}
	return themes.Muted
}

// truncateLine cuts l to w cells, the last kept span ending in an ellipsis
// when anything was cut.
func truncateLine(l line, w int) line {
	if ansi.StringWidth(l.text()) <= w {
		return l
	}
	var out line
	left := w - 1 // room for the ellipsis
	for _, s := range l {
		sw := ansi.StringWidth(s.text)
		if sw <= left {
			out, left = append(out, s), left-sw
			continue
		}
		return append(out, sp(s.tok, ansi.Truncate(s.text, left, "")+"…"))
	}
	return out
}

// clusterStateToken is the token of a cluster's sync state.
func clusterStateToken(s model.State) themes.Token {
	switch s {
	case model.StateSynced:
		return themes.OK
	case model.StateSyncing, model.StateConnecting:
		return themes.Warn
	case model.StateError, model.StateTimeout:
		return themes.Error
	}
	return themes.Muted
}
