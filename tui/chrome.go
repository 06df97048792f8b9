package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/meshscope/meshscope/xdsclient"
)

// The chrome: what the root draws around the current view.

func (m *Model) header(w int) string {
	title := m.current().title(m.vc())
	if m.showHelp {
		title = "Help"
	}
	left := " meshscope │ " + title
	if m.wi.ov != nil {
		// On every screen, at both ends: what is shown is not the live
		// mesh alone.
		left = " meshscope │ WHAT-IF │ " + title
	}
	right := ""
	switch {
	case m.flash != "":
		right = m.flash + " "
	default:
		right = "? help  : command  / filter  q quit "
	}
	lw := ansi.StringWidth(left)
	rw := ansi.StringWidth(right)
	if lw+rw+1 > w {
		if m.flash == "" {
			right, rw = "", 0 // the key hints give way to the title
		} else {
			right = ansi.Truncate(right, max(w-20, 0), "…")
			rw = ansi.StringWidth(right)
		}
	}
	left = fit(left, max(w-rw, 0))
	rst := m.st.Muted
	if m.flash != "" {
		rst = m.st.Warn
		if m.flashErr {
			rst = m.st.Error
		}
	}
	return m.st.Header.Render(left) + rst.Render(right)
}

// helpBody is the "?" screen: the key map, then the command table.
func (m *Model) helpBody(w, h int) string {
	m.help.SetWidth(w - 2)
	full := m.help.FullHelpView(m.keys.FullHelp())
	lines := []string{""}
	for _, l := range strings.Split(full, "\n") {
		lines = append(lines, " "+l)
	}
	lines = append(lines, "", m.st.Header.Render(" Commands"))
	for _, l := range commandHelp() {
		lines = append(lines, " "+m.st.Text.Render(l))
	}
	lines = append(lines, "", m.st.Muted.Render(" Viewpoints A, B: a name, or a unique part of one (a network, a cluster). Any key closes help."))
	return padLines(lines, w, h)
}

// streamStateText is a stream's state in a few words: "connected",
// "disconnected,stale", "no stream: why,stale".
func streamStateText(s xdsclient.StreamStatus) string {
	t := string(s.State)
	if s.Reason != "" {
		t = "no stream: " + s.Reason
	}
	if s.Stale {
		t += ",stale"
	}
	return t
}

// statusParts are the status bar's items: on the left the contexts, the
// clusters synced and the streams up (with what is wrong with the others),
// on the right the age of the last push, a pause and the theme.
func (m *Model) statusParts() (left, right []string) {
	if t, _ := m.whatIfStatus(); t != "" {
		// First: the part a narrow terminal cuts last (statusBar draws
		// it apart, in its own style).
		left = append(left, t)
	}
	if len(m.opts.Contexts) > 0 {
		left = append(left, "ctx "+strings.Join(m.opts.Contexts, ","))
	}
	if w := m.waitingText(); w != "" {
		// Before the counts: the one thing a person at an unsettled
		// screen needs, and the part a narrow terminal cuts last.
		left = append(left, w)
	}
	if m.ix.snap == nil {
		left = append(left, "waiting for clusters…")
	} else {
		left = append(left, fmt.Sprintf("clusters %d/%d synced", m.ix.synced, len(m.ix.clusterIDs)))
	}
	if len(m.status) > 0 {
		ok := 0
		var bad []string
		for _, s := range m.status {
			if s.State == xdsclient.StateConnected && !s.Stale {
				ok++
				continue
			}
			bad = append(bad, s.Viewpoint+" "+streamStateText(s))
		}
		t := fmt.Sprintf("xds %d/%d up", ok, len(m.status))
		if len(bad) > 0 {
			t += " (" + strings.Join(bad, "; ") + ")"
		}
		left = append(left, t)
	}
	last := m.lastPush
	for _, s := range m.status {
		if s.LastPush.After(last) {
			last = s.LastPush
		}
	}
	if !last.IsZero() {
		right = append(right, "push "+age(m.now(), last)+" ago")
	}
	if m.events.paused {
		right = append(right, "events paused")
	}
	right = append(right, "theme "+m.themeName)
	return left, right
}

func (m *Model) statusBar(w int) string {
	left, right := m.statusParts()
	if t, isErr := m.whatIfStatus(); t != "" {
		// The what-if's banner (or its error) stands out from the bar.
		st := m.st.Warn.Reverse(true).Bold(true)
		if isErr {
			st = m.st.Error.Reverse(true).Bold(true)
		}
		if lines := m.whatIfErrLines(w); lines != nil {
			// A long error takes the lines it needs, whole: it names a
			// file and line to fix.
			for i, l := range lines {
				lines[i] = st.Render(fit(" "+l, w))
			}
			return strings.Join(lines, "\n")
		}
		seg := fit(" "+t+" ", min(ansi.StringWidth(t)+2, w))
		rest := w - ansi.StringWidth(seg)
		if rest <= 0 {
			return st.Render(seg)
		}
		return st.Render(seg) + m.statusRest(left[1:], right, rest)
	}
	return m.statusRest(left, right, w)
}

// maxErrLines bounds the status bar's lines for a what-if's error.
const maxErrLines = 3

// whatIfErrLines is a what-if error too long for one line of the status
// bar, wrapped (nil when it fits, or there is none).
func (m *Model) whatIfErrLines(w int) []string {
	if m.wi.err == "" || ansi.StringWidth(m.wi.err)+2 <= w {
		return nil
	}
	lines := wrap(m.wi.err, max(w-2, 1))
	if len(lines) > maxErrLines {
		lines = lines[:maxErrLines]
		lines[maxErrLines-1] = ansi.Truncate(lines[maxErrLines-1], max(w-3, 1), "") + "…"
	}
	return lines
}

// statusHeight is the status bar's number of lines.
func (m *Model) statusHeight() int { return max(len(m.whatIfErrLines(m.width)), 1) }

// statusRest draws the status bar's items in w cells.
func (m *Model) statusRest(left, right []string, w int) string {
	r := strings.Join(right, " │ ") + " "
	rw := ansi.StringWidth(r)
	if rw > w-20 {
		return m.st.StatusBar.Render(fit(" "+strings.Join(append(left, right...), " │ "), w))
	}
	return m.st.StatusBar.Render(fit(" "+strings.Join(left, " │ "), w-rw) + r)
}

// tooSmall is the screen of a terminal below the minimum size: what is
// wrong with it, the way on, and the status bar's items one per line, so
// that a cluster or a stream in trouble is still seen.
func (m *Model) tooSmall() string {
	w, h := max(m.width, 0), max(m.height, 0)
	ww := max(w, 1)
	var lines []string
	for _, l := range wrap(fmt.Sprintf("terminal too small (need %d×%d, have %d×%d)", minWidth, minHeight, m.width, m.height), ww) {
		lines = append(lines, m.st.Warn.Render(l))
	}
	for _, l := range wrap("enlarge it, or press q to quit", ww) {
		lines = append(lines, m.st.Muted.Render(l))
	}
	lines = append(lines, "")
	left, right := m.statusParts()
	for _, p := range append(left, right...) {
		for _, l := range wrap(p, ww) {
			lines = append(lines, m.st.Text.Render(l))
		}
	}
	return padLines(lines, w, h)
}
