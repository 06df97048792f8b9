package themes

import "strings"

// Token is the name of one semantic role a colour plays on screen. Tokens
// describe meaning ("a leaked endpoint"), not places ("the services table"),
// so that a theme stays valid whatever views are added later.
type Token string

// The tokens, in the order they are documented and listed in errors.
const (
	Text      Token = "text"      // ordinary text
	Muted     Token = "muted"     // secondary text: timestamps, hints, zero counts
	Accent    Token = "accent"    // focus and emphasis: the focused pane, key names in help
	OK        Token = "ok"        // healthy: synced, match, ACK
	Warn      Token = "warn"      // needs a look: syncing, skew, stale
	Error     Token = "error"     // broken: error state, NACK, lost stream
	Local     Token = "local"     // an endpoint reached directly in the proxy's own network
	Gateway   Token = "gateway"   // an endpoint rewritten to a network gateway
	Leaked    Token = "leaked"    // an endpoint from another network that should have been rewritten
	Forced    Token = "forced"    // an endpoint forced through a gateway (forced-gateway)
	Dropped   Token = "dropped"   // an endpoint left out of EDS, with a reason
	Border    Token = "border"    // pane borders and separators (foreground is the line colour)
	Selection Token = "selection" // the row under the cursor (fg and bg)
	Header    Token = "header"    // pane titles and table headers
	StatusBar Token = "statusbar" // the status bar at the bottom (fg and bg)
	Match     Token = "match"     // characters matched by the fuzzy search
)

// allTokens is the canonical order; keep it in step with the constants above
// and with docs/themes.md (a test checks both).
var allTokens = []Token{
	Text, Muted, Accent, OK, Warn, Error,
	Local, Gateway, Leaked, Forced, Dropped,
	Border, Selection, Header, StatusBar, Match,
}

// known reports whether s names a token.
func known(s string) bool {
	for _, t := range allTokens {
		if string(t) == s {
			return true
		}
	}
	return false
}

// tokenList is the "known: ..." part of error messages.
func tokenList() string {
	names := make([]string, len(allTokens))
	for i, t := range allTokens {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}
