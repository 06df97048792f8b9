package tui

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/meshscope/meshscope/analysis/whatif"
	"github.com/meshscope/meshscope/internal/humanize"
	"github.com/meshscope/meshscope/model"
)

// The service view's what-if pane: for every port and viewpoint whose
// endpoints the what-if changes, the endpoints before → after as one
// list (removed −, added +, re-weighted ~, the unchanged ones after them),
// each network's share before → after and why; then the what-if's new and
// resolved problems of the service. One column of text: it reads the same
// at 80 columns as at 200, and scrolls.

// maxUnchanged bounds the unchanged endpoints listed under one change.
const maxUnchanged = 4

// showWhatIf says whether the view shows the what-if pane: asked for (d,
// or opened on a service the what-if changes) and still meaningful.
func (v *serviceView) showWhatIf() bool {
	return v.whatIf && v.compare == nil && v.wi.of(v.host) != nil
}

// renderWhatIf draws the pane in w×h: a title line that stays, the rest
// scrolled by v.off.
func (v *serviceView) renderWhatIf(vc viewContext, w, h int) string {
	hc := v.wi.of(v.host)
	views := len(hc.changes)
	what := v.wi.what()
	if v.wi.cluster != "" {
		what += " in " + v.wi.cluster
	}
	head := vc.st.Warn.Reverse(true).Render(" WHAT-IF ") +
		vc.st.Muted.Render(fmt.Sprintf(" %s · %s change · d live columns · esc back", what, humanize.Count(views, "view")))
	body := v.whatIfLines(vc, hc, w)
	rows := max(h-1, 0)
	v.off = min(v.off, max(len(body)-rows, 0))
	lines := []string{padLines([]string{head}, w, 1)}
	end := min(v.off+rows, len(body))
	lines = append(lines, body[v.off:end]...)
	return padLines(lines, w, h)
}

// whatIfLines is the pane's body, every line at most w cells.
func (v *serviceView) whatIfLines(vc viewContext, hc *hostChange, w int) []string {
	var out []string
	if rep := v.wi.rep; vc.ix.snap != nil && vc.ix.snap.Version != rep.SnapshotVersion {
		// The live mesh moves on under the overlay; the answer does not.
		out = append(out, wrapIndent(vc.st.Muted, " ", "   ",
			fmt.Sprintf("as of snapshot %d (%s; live: %d) · :whatif again to recompute",
				rep.SnapshotVersion, rep.SnapshotTime.UTC().Format("15:04:05"), vc.ix.snap.Version), w)...)
	}
	if v.svc == nil {
		out = append(out, vc.st.Warn.Render(fit(" the service exists only after the change", w)))
	}
	for i, c := range hc.changes {
		if i > 0 || len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, changeLines(vc, c, w)...)
	}
	added, resolved := v.wi.problemsOf(v.host)
	for _, part := range []struct {
		title    string
		ps       []model.Problem
		resolved bool
	}{{"NEW PROBLEMS (what-if)", added, false}, {"RESOLVED PROBLEMS (what-if)", resolved, true}} {
		if len(part.ps) == 0 {
			continue
		}
		out = append(out, vc.paintAll(sectionHead(fmt.Sprintf("%s (%d)", part.title, len(part.ps)), w))...)
		for _, p := range part.ps {
			st := vc.st.Of(severityToken(p.Severity))
			if part.resolved {
				st = vc.st.OK
			}
			out = append(out, wrapIndent(st, fmt.Sprintf(" ! %s %s: ", p.Severity, kindText(p)), "   ", p.Sentence, w)...)
		}
	}
	return out
}

// changeLines is one port and viewpoint's change.
func changeLines(vc viewContext, c whatif.ServiceChange, w int) []string {
	what := "from " + c.Where() + " (" + c.Proxy + ")"
	if c.Port != 0 {
		what = fmt.Sprintf(":%d %s", c.Port, what)
	}
	title := vc.st.Header.Render(" " + what)
	switch {
	case c.LostAll:
		title += " " + vc.st.Error.Render("LOSES EVERY ENDPOINT")
	case c.LostRemote:
		title += " " + vc.st.Error.Render("LOSES EVERY REMOTE ENDPOINT")
	}
	out := []string{padLines([]string{title}, w, 1)}
	if len(c.UnchangedIn) > 0 {
		out = append(out, wrapIndent(vc.st.Muted, "   unchanged in ", "     ", strings.Join(c.UnchangedIn, "; "), w)...)
	}
	if c.NoClient && (c.LostAll || c.LostRemote) {
		out = append(out, wrapIndent(vc.st.Muted, "   ", "   ", "no client runs where this is seen: not failing --fail-on lost", w)...)
	}
	counts := fmt.Sprintf("   endpoints %d → %d", len(c.Before), len(c.After))
	var diff []string
	for _, d := range []struct {
		n    int
		sign string
	}{{len(c.Removed), "−"}, {len(c.Added), "+"}, {len(c.Reweighted), "~"}} {
		if d.n > 0 {
			diff = append(diff, fmt.Sprintf("%s%d", d.sign, d.n))
		}
	}
	if len(diff) > 0 {
		counts += " (" + strings.Join(diff, " ") + ")"
	}
	out = append(out, vc.st.Muted.Render(fit(counts, w)))
	before := map[string]whatif.Endpoint{}
	for _, e := range c.Before {
		before[e.Key()] = e
	}
	moved := map[string]bool{}
	for _, e := range c.Removed {
		out = append(out, wrapIndent(vc.st.Error, "   − ", "     ", e.String(), w)...)
	}
	for _, e := range c.Added {
		moved[e.Key()] = true
		out = append(out, wrapIndent(vc.st.OK, "   + ", "     ", e.String(), w)...)
	}
	for _, e := range c.Reweighted {
		moved[e.Key()] = true
		text := e.String()
		if old, ok := before[e.Key()]; ok {
			text += ", was " + old.String()
		}
		out = append(out, wrapIndent(vc.st.Warn, "   ~ ", "     ", text, w)...)
	}
	same := 0
	for _, e := range c.After {
		if moved[e.Key()] {
			continue
		}
		if same++; same <= maxUnchanged {
			out = append(out, wrapIndent(vc.st.Text, "     ", "     ", e.String(), w)...)
		}
	}
	if same > maxUnchanged {
		out = append(out, vc.st.Muted.Render(fit(fmt.Sprintf("     … %d more unchanged", same-maxUnchanged), w)))
	}
	if s := whatif.ShareText(c.SharesBefore, c.SharesAfter); s != "" {
		out = append(out, wrapIndent(vc.st.Text, "   share ", "         ", s, w)...)
	}
	for _, e := range c.After {
		if e.HealthWhy != "" {
			out = append(out, wrapIndent(vc.st.Warn, "   health ", "          ", e.Address+": "+e.HealthWhy, w)...)
		}
	}
	for _, why := range c.Why {
		out = append(out, wrapIndent(vc.st.Muted, "   why   ", "         ", why, w)...)
	}
	return out
}

// wrapIndent wraps text after a first-line prefix, later lines indented,
// all in st, each at most w cells.
func wrapIndent(st lipgloss.Style, first, rest, text string, w int) []string {
	var out []string
	for i, l := range wrap(text, max(w-ansi.StringWidth(first), 8)) {
		p := rest
		if i == 0 {
			p = first
		}
		out = append(out, st.Render(fit(p+l, w)))
	}
	return out
}
