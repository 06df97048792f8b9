package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/meshscope/meshscope/analysis/ambient"
	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/internal/humanize"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// serviceView shows, for one service port (or one DestinationRule subset
// of it), what every viewpoint gets: one column per viewpoint with the
// actual endpoints (kind, weight, Envoy's share, locality, health, what
// each stands for), the split over networks, the predicted ones not sent,
// the dropped ones with reasons, and explain's sentences for every
// difference; above the columns, the problems doctor finds for the service.
type serviceView struct {
	// compare names two viewpoints for the compare view (":compare A B");
	// empty for the service view (every viewpoint).
	compare []string
	host    string
	port    int // index into the service's ports
	// subset is the DestinationRule subset shown ("" for the whole
	// service), one of subsets (SubsetNames, cycled with the Subset key).
	subset   string
	subsets  []string
	problems []model.Problem // doctor's problems of this service
	focus    int             // focused viewpoint column
	off      int             // first line shown of the columns
	ix       *index
	vps      []xdsclient.Viewpoint
	views    []explain.View
	svc      *model.Service
	// ztunnel shows the ztunnel view (ambient mode: one column per control
	// plane, view_ambient.go) instead of the sidecar viewpoints; amb holds
	// its columns. A service whose pods all run in ambient mode opens so.
	ztunnel bool
	amb     []ambient.Explanation
	// whatIf shows the what-if's endpoints before → after instead of the
	// live columns (view_service_whatif.go); wi is the overlay it was
	// last refreshed with.
	whatIf bool
	wi     *overlay
}

// minColumn is the narrowest viewpoint column.
const minColumn = 38

// open shows a hostname: from every viewpoint, or side by side from a
// pair of viewpoints (compare, by name).
func (v *serviceView) open(vc viewContext, host string, compare []string) {
	*v = serviceView{host: host, compare: compare, wi: vc.wi}
	if i, ok := vc.ix.byHost[host]; ok && compare == nil {
		v.ztunnel = vc.ix.services[i].mode == ambient.ModeAmbient
	}
	// A service the what-if changes opens on its before → after: that is
	// what its Δ mark led here for.
	v.whatIf = vc.wi.of(host) != nil
	v.refresh(vc, update{})
}

// ncols is the number of columns: ztunnels or viewpoints.
func (v *serviceView) ncols() int {
	if v.ztunnel {
		return len(v.amb)
	}
	return len(v.views)
}

// col renders column i (see column and ztunnelColumn).
func (v *serviceView) col(vc viewContext, i, w int) []string {
	if v.ztunnel {
		return v.ztunnelColumn(vc, i, w)
	}
	return v.column(vc, i, w)
}

func (v *serviceView) title(viewContext) string {
	what := v.host
	if v.subset != "" {
		what += " · subset " + v.subset
	}
	if v.compare != nil {
		return "Compare " + strings.Join(v.compare, " ⇄ ") + " · " + what
	}
	if v.showWhatIf() {
		return "Service " + what + " · before → after"
	}
	return "Service " + what
}

// findViewpoint finds a viewpoint by its name, or by a unique part of it
// (a network, a cluster).
func findViewpoint(vps []xdsclient.Viewpoint, name string) (xdsclient.Viewpoint, bool) {
	var found []xdsclient.Viewpoint
	for _, vp := range vps {
		s := vp.String()
		if s == name {
			return vp, true
		}
		if vp.Network == name || vp.Cluster == name || strings.Contains(s, name) {
			found = append(found, vp)
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return xdsclient.Viewpoint{}, false
}

// refresh recomputes the views from the index and the feed's actual EDS
// (not for new events other than EDS pushes: they change nothing here).
func (v *serviceView) refresh(vc viewContext, u update) {
	if v.host == "" || (len(u.entries) > 0 && !u.eds && !u.wds && !u.index && v.ix == vc.ix) {
		return
	}
	if v.wi != vc.wi {
		// A new what-if that changes the service shows at once.
		v.wi, v.off = vc.wi, 0
		v.whatIf = v.wi.of(v.host) != nil
	}
	if v.ix != vc.ix {
		v.subsets = horizon.SubsetNames(vc.ix.snap, v.host)
		if !slices.Contains(v.subsets, v.subset) {
			v.subset = ""
		}
		v.problems = v.problems[:0]
		for _, p := range vc.ix.problems {
			if p.Service == v.host || slices.Contains(p.Services, v.host) {
				v.problems = append(v.problems, p)
			}
		}
	}
	v.ix = vc.ix
	v.svc = vc.ix.snap.Service(v.host)
	v.views = v.views[:0]
	if v.ztunnel {
		v.amb = nil
		if v.svc != nil {
			v.amb = explainZtunnels(vc.feed, vc.ix.planes, vc.status, v.svc)
		}
		v.focus = min(max(v.focus, 0), max(len(v.amb)-1, 0))
		return
	}
	v.vps = vc.viewpoints()
	if v.compare != nil {
		var pair []xdsclient.Viewpoint
		for _, name := range v.compare {
			if vp, ok := findViewpoint(v.vps, name); ok {
				pair = append(pair, vp)
			}
		}
		v.vps = pair
	}
	if v.svc == nil || len(v.svc.Ports) == 0 {
		return
	}
	v.port = min(max(v.port, 0), len(v.svc.Ports)-1)
	port := v.svc.Ports[v.port].Port
	for _, vp := range v.vps {
		ev, actual := explainFor(vc.feed, vc.ix.planes, vc.ix.hops, v.host, v.subset, port, vp)
		if !actual {
			ev.Error = streamText(vc.status, vp.String(), ev.EDSCluster, vc.feed)
		}
		v.views = append(v.views, ev)
	}
	v.focus = min(max(v.focus, 0), max(len(v.views)-1, 0))
}

// streamText says why a viewpoint has no EDS for a cluster yet: its
// stream's state, or — on a stream whose CDS has come — that istiod sends
// the proxy no such cluster (a subset no DestinationRule it sees declares).
func streamText(status []xdsclient.StreamStatus, vp, name string, feed Feed) string {
	if s, ok := streamOf(status, vp); ok {
		// A connected stream has had its first answer, CDS.
		if sf, ok := feed.(sentFeed); ok && s.State == xdsclient.StateConnected && !s.Stale {
			if _, sent := sf.Cluster(vp, name); !sent {
				return "istiod sends this proxy no cluster " + name + " (not in its CDS)"
			}
		}
		return "no EDS received yet (stream " + streamStateText(s) + ")"
	}
	return "no EDS received yet (no xDS stream for this viewpoint)"
}

// streamOf is a viewpoint's stream status.
func streamOf(status []xdsclient.StreamStatus, vp string) (xdsclient.StreamStatus, bool) {
	for _, s := range status {
		if s.Viewpoint == vp {
			return s, true
		}
	}
	return xdsclient.StreamStatus{}, false
}

// staleText says why what a viewpoint holds may be out of date: its
// stream is down, and since when nothing came.
func staleText(now time.Time, s xdsclient.StreamStatus) string {
	t := "stale: stream " + string(s.State)
	if s.Reason != "" {
		t = "stale: no stream (" + s.Reason + ")"
	}
	if !s.LastPush.IsZero() {
		t += ", last push " + age(now, s.LastPush) + " ago"
	}
	return t
}

func (v *serviceView) key(vc viewContext, k tea.KeyPressMsg) (tea.Cmd, bool) {
	n := v.ncols()
	switch {
	case key.Matches(k, vc.keys.Left):
		v.focus = max(v.focus-1, 0)
	case key.Matches(k, vc.keys.Right), key.Matches(k, vc.keys.Tab):
		if n > 0 {
			if k.String() == "shift+tab" {
				v.focus = (v.focus + n - 1) % n
			} else if key.Matches(k, vc.keys.Tab) {
				v.focus = (v.focus + 1) % n
			} else {
				v.focus = min(v.focus+1, n-1)
			}
		}
	case key.Matches(k, vc.keys.Ztunnel):
		if v.compare != nil || !vc.ix.ambient {
			return nil, false
		}
		v.ztunnel = !v.ztunnel
		v.focus, v.off = 0, 0
		v.refresh(vc, update{})
	case key.Matches(k, vc.keys.NextPort), key.Matches(k, vc.keys.PrevPort):
		if v.svc != nil && len(v.svc.Ports) > 1 {
			d := 1
			if key.Matches(k, vc.keys.PrevPort) {
				d = len(v.svc.Ports) - 1
			}
			v.port = (v.port + d) % len(v.svc.Ports)
			v.off = 0
			v.refresh(vc, update{})
		}
	case key.Matches(k, vc.keys.Subset):
		if len(v.subsets) == 0 {
			return flash("no DestinationRule declares subsets for "+v.host, false), true
		}
		// "" (the whole service), then each subset in turn.
		next := (slices.Index(v.subsets, v.subset) + 2) % (len(v.subsets) + 1)
		v.subset = append([]string{""}, v.subsets...)[next]
		v.off = 0
		v.refresh(vc, update{})
	case key.Matches(k, vc.keys.WhatIf):
		switch {
		case v.compare != nil:
			return nil, false
		case v.wi == nil:
			return flash("no what-if shown: :whatif FILE lays a change over the mesh", false), true
		case v.wi.of(v.host) == nil:
			return flash("the what-if changes no endpoint of "+v.host+" from any viewpoint", false), true
		}
		v.whatIf = !v.whatIf
		v.off = 0
	case key.Matches(k, vc.keys.Enter):
		if len(v.problems) > 0 {
			return navigate(selectProblemMsg{key: problemKey(v.problems[0])}), true
		}
		return flash("doctor finds no problem for "+v.host, false), true
	default:
		d, ok := scrollDelta(vc.keys, k, vc.height-3)
		if !ok {
			return nil, false
		}
		v.scroll(vc, d) // clamped when drawn
	}
	return nil, true
}

func (v *serviceView) scroll(_ viewContext, d int) {
	v.off = max(v.off+d, 0) // clamped when drawn
}

func (v *serviceView) render(vc viewContext, w, h int) string {
	if v.ix != vc.ix {
		v.refresh(vc, update{})
	}
	if v.showWhatIf() {
		return v.renderWhatIf(vc, w, h)
	}
	if v.svc == nil {
		return padLines([]string{"", vc.st.Warn.Render("  service " + v.host + " is not in the latest snapshot")}, w, h)
	}
	lines := []string{v.portLine(vc, w)}
	lines = append(lines, v.problemLines(vc, w)...)
	if len(v.svc.Ports) == 0 && !v.ztunnel {
		lines = append(lines, vc.st.Muted.Render("  the service has no ports"))
		return padLines(lines, w, h)
	}
	if v.ncols() == 0 {
		empty := vc.emptyLines("  no viewpoints: the mesh has no network yet", w)
		if v.ztunnel {
			empty = []string{vc.st.Muted.Render("  no control plane to ask as a ztunnel (give --xds-address or --context)")}
		}
		return padLines(append(lines, empty...), w, h)
	}
	// Which columns fit, around the focused one.
	n := v.ncols()
	k := min(n, max(1, (w+1)/(minColumn+1)))
	first := min(max(v.focus-k/2, 0), n-k)
	cw := (w - (k - 1)) / k
	cols := make([][]string, k)
	longest := 0
	for i := 0; i < k; i++ {
		cols[i] = v.col(vc, first+i, cw)
		longest = max(longest, len(cols[i]))
	}
	body := h - len(lines)
	head := 2 // viewpoint name and verdict stay while scrolling
	v.off = min(v.off, max(longest-body, 0))
	sep := vc.st.Border.Render("│")
	for r := 0; r < body; r++ {
		var b strings.Builder
		for i := 0; i < k; i++ {
			if i > 0 {
				b.WriteString(sep)
			}
			idx := r
			if r >= head {
				idx = r + v.off
			}
			if idx < len(cols[i]) {
				b.WriteString(padLines([]string{cols[i][idx]}, cw, 1))
			} else {
				b.WriteString(strings.Repeat(" ", cw))
			}
		}
		lines = append(lines, b.String())
	}
	return padLines(lines, w, h)
}

func (v *serviceView) portLine(vc viewContext, w int) string {
	var b strings.Builder
	if v.compare == nil && v.wi.of(v.host) != nil {
		// The live columns of a service the what-if changes: say so, first.
		b.WriteString(vc.st.Warn.Reverse(true).Render(" Δ what-if: d ") + " ")
	}
	if v.ztunnel {
		b.WriteString(vc.st.Accent.Render(" [ztunnel · WDS]"))
		b.WriteString(vc.st.Muted.Render(fmt.Sprintf(" %s · %s · one view per istiod, whatever the ztunnel's network · w sidecar view · ←/→ control plane · esc back",
			v.svc.Namespace, humanize.Count(len(v.amb), "control plane"))))
		return padLines([]string{b.String()}, w, 1)
	}
	b.WriteString(vc.st.Muted.Render(" port "))
	for i, p := range v.svc.Ports {
		t := fmt.Sprintf("%d", p.Port)
		if p.Name != "" {
			t += "/" + p.Name
		}
		if i == v.port {
			b.WriteString(vc.st.Accent.Render("[" + t + "]"))
		} else {
			b.WriteString(vc.st.Muted.Render(" " + t + " "))
		}
		b.WriteString(" ")
	}
	if len(v.subsets) > 0 {
		b.WriteString(vc.st.Muted.Render(" subset "))
		for _, ss := range append([]string{""}, v.subsets...) {
			t := ss
			if t == "" {
				t = "all"
			}
			if ss == v.subset {
				b.WriteString(vc.st.Accent.Render("[" + t + "]"))
			} else {
				b.WriteString(vc.st.Muted.Render(" " + t + " "))
			}
		}
		b.WriteString(" ")
	}
	what := v.svc.Namespace
	if v.svc.Source != "" && v.svc.Source != model.SourceKube {
		what += " · " + string(v.svc.Source)
	}
	hint := fmt.Sprintf(" %s · %d viewpoints · [ ] port · ", what, len(v.views))
	if len(v.subsets) > 0 {
		hint += "S subset · "
	}
	hint += "←/→ viewpoint · "
	if v.compare == nil && vc.ix.ambient {
		hint += "w ztunnel view · "
	}
	b.WriteString(vc.st.Muted.Render(hint + "esc back"))
	return padLines([]string{b.String()}, w, 1)
}

// maxProblemLines bounds the lines of problems above the columns.
const maxProblemLines = 2

// problemLines are doctor's problems of the service, one line each, errors
// first; enter opens them in the problems view.
func (v *serviceView) problemLines(vc viewContext, w int) []string {
	var out []string
	for i, p := range v.problems {
		if i == maxProblemLines-1 && len(v.problems) > maxProblemLines {
			out = append(out, vc.st.Muted.Render(fit(fmt.Sprintf(" … %d more problems of this service (enter: problems view)", len(v.problems)-i), w)))
			break
		}
		st := vc.st.Of(severityToken(p.Severity))
		head := fmt.Sprintf(" ! %s %s: ", p.Severity, kindText(p))
		out = append(out, st.Render(head)+vc.st.Text.Render(fit(p.Sentence, max(w-ansi.StringWidth(head), 0))))
	}
	return out
}
