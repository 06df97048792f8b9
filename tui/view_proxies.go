package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"k8s.io/apimachinery/pkg/types"

	"github.com/meshscope/meshscope/analysis/fleet"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/themes"
)

// proxiesView (:proxies) is `meshscope proxies` live: every real proxy of
// the mesh from every istiod's /debug/syncz joined with the pods that run
// one (fleetIndex, built off the update loop), in the CLI's order
// (cluster, namespace, name); enter opens the proxy's cluster; "/" filters with the CLI's flags as terms
// (state=STALE,NACK cluster=cluster2 ns=sample cp=none probes=no) and
// words; below, the selected proxy's state per xDS type, its injected
// identity against its pod's, and its versions.
type proxiesView struct {
	list listState // rows: indexes into fx.rows
	fx   *fleetIndex
	// filter is list.query parsed.
	filter proxyFilter
}

func newProxiesView() *proxiesView {
	v := &proxiesView{}
	v.list.keyOf = func(i int32) string { return v.fx.rows[i].key }
	return v
}

// proxyDetail is the height of the selected proxy's pane.
const proxyDetail = 7

func (v *proxiesView) rows(vc viewContext) int { return max(vc.height-2-proxyDetail, 1) }

func (v *proxiesView) title(vc viewContext) string {
	fx := vc.fleet
	if fx == nil || fx.snap == nil {
		return "Proxies"
	}
	all, off := fx.notInSync()
	t := fmt.Sprintf("Proxies (%d, %d not in sync)", all, off)
	if v.list.query != "" {
		t += fmt.Sprintf(" · %d shown · /%s", len(v.list.rows), v.list.query)
	}
	return t
}

func (v *proxiesView) refresh(vc viewContext, _ update) {
	if vc.fleet != v.fx {
		v.fx = vc.fleet
	}
	v.list.rows = v.list.rows[:0]
	if v.fx != nil {
		for i := range v.fx.rows {
			if v.filter.keep(&v.fx.rows[i]) {
				v.list.rows = append(v.list.rows, int32(i))
			}
		}
	}
	v.list.show(v.list.rows, v.rows(vc))
}

func (v *proxiesView) filterQuery() string { return v.list.query }

func (v *proxiesView) setFilter(vc viewContext, q string) {
	v.list.query = q
	v.filter = parseProxyFilter(q)
	v.refresh(vc, update{})
}

func (v *proxiesView) key(vc viewContext, k tea.KeyPressMsg) (tea.Cmd, bool) {
	if !key.Matches(k, vc.keys.Enter) {
		return nil, v.list.scrollKey(vc.keys, k, v.rows(vc))
	}
	// enter: the proxy's cluster in the clusters view (its sync state, its
	// control plane, what reads it).
	if id, ok := v.list.selected(); ok && vc.ix.snap != nil && vc.ix.snap.ClusterByID(v.fx.rows[id].p.Cluster) != nil {
		return navigate(selectClusterMsg{id: v.fx.rows[id].p.Cluster}), true
	}
	return nil, true
}

func (v *proxiesView) scroll(vc viewContext, d int) { v.list.moveBy(d, v.rows(vc)) }

func (v *proxiesView) render(vc viewContext, w, h int) string {
	if vc.ix.snap == nil {
		return vc.waiting(w, h)
	}
	fx := v.fx
	if fx == nil {
		return padLines([]string{"", vc.st.Warn.Render("  reading the proxies…")}, w, h)
	}
	notes := proxyNotes(fx, v.filter.bad)
	cols, wide, mid := proxyColumns(w)
	noteLines := make([]string, len(notes))
	for i, n := range notes {
		noteLines[i] = " " + vc.st.Warn.Render(fit(n, w-2))
	}
	table := h - 1 - proxyDetail - len(notes)
	if len(v.list.rows) == 0 {
		empty := []string{vc.st.Muted.Render("  no proxies: no pod meshscope watches runs one, and no istiod lists one")}
		if len(vc.ix.snap.Unread()) > 0 {
			empty = vc.emptyLines("  no proxies", w)
		}
		if v.list.query != "" {
			empty = []string{vc.st.Muted.Render("  no proxy matches /" + v.list.query + " (esc clears)")}
		}
		return padLines(append(append([]string{headerLine(cols, vc.st.Header, w)}, empty...), noteLines...), w, h)
	}
	lines := vc.table(cols, &v.list, w, table, true, func(i int32, sel bool) []string {
		cells := proxyCells(&fx.rows[i], wide, mid)
		out := make([]string, len(cells))
		for j, c := range cells {
			out[j] = cell(c.text, cols[j].w, vc.sel(vc.st.Of(c.tok), sel))
		}
		return out
	})
	for len(lines) < table {
		lines = append(lines, "")
	}
	lines = append(lines, vc.st.Border.Render(fit("", w)))
	if id, ok := v.list.selected(); ok {
		lines = append(lines, v.detail(vc, &fx.rows[id], w)...)
	}
	for len(lines) < h-len(notes) {
		lines = append(lines, "")
	}
	return padLines(append(lines[:h-len(notes)], noteLines...), w, h)
}

// proxyNotes are at most two lines on what the proxies view could not read:
// a filter term it did not understand, a feed without syncz, an istiod
// whose proxies were not read.
func proxyNotes(fx *fleetIndex, badFilter string) []string {
	var notes []string
	if !fx.served {
		notes = append(notes, "This feed reads no istiod /debug/syncz: every pod with a proxy is UNKNOWN (give --istiod-debug-address).")
	}
	for _, r := range fx.f.Unread {
		at := ""
		if r.Address != "" { // "" when the port-forward to it failed: its error says so
			at = " at " + r.Address
		}
		notes = append(notes, fmt.Sprintf("cannot read istiod %s's connected proxies%s: %v", r.ControlPlane, at, r.Err))
	}
	if fx.served {
		for _, cp := range fx.f.Missing {
			notes = append(notes, fmt.Sprintf("istiod %s's proxies were not read (--context %s, or --istiod-debug-address %s=HOST:PORT): a pod no istiod read lists is UNKNOWN.", cp, cp, cp))
		}
	}
	if badFilter != "" {
		notes = append([]string{fmt.Sprintf("filter term %q not understood: cluster= ns= cp= state= probes=no, or words", badFilter)}, notes...)
	}
	return notes[:min(len(notes), 2)]
}

// proxyColumns are the proxies table's columns for a width: the per-type
// ones only where there is room (wide; the pane below shows them for the
// selected proxy anyway), the version where there is some (mid).
func proxyColumns(w int) (cols []column, wide, mid bool) {
	cols = []column{
		{title: "PROXY", w: 0, grow: 3},
		{title: "CLUSTER", w: 9},
		{title: "KIND", w: 8},
		{title: "ISTIOD", w: 9},
		{title: "STATE", w: 13},
	}
	wide = w >= 150
	if wide {
		for _, t := range proxyTypes {
			cols = append(cols, column{title: t, w: 8})
		}
	}
	mid = w >= 100
	if mid {
		cols = append(cols, column{title: "VERSION", w: 15})
	}
	cols = append(cols, column{title: "IDENTITY", w: 0, grow: 2})
	return layoutColumns(cols, w, 12), wide, mid
}

// proxyCells are one proxy's cells, one per column of proxyColumns.
func proxyCells(r *proxyRow, wide, mid bool) []span {
	p := r.p
	kind := string(p.Kind)
	if p.Probe {
		kind += "*"
	}
	idTok := themes.Text
	if len(p.Drift) > 0 {
		idTok = themes.Error
	}
	out := []span{sp(themes.Accent, p.ID), sp(themes.Text, orDash(p.Cluster)), sp(themes.Muted, kind), sp(themes.Text, orDash(p.ControlPlane)),
		sp(fleetStateToken(r.state), r.state)}
	if wide {
		for j := range proxyTypes {
			out = append(out, sp(fleetStateToken(r.types[j]), r.types[j]))
		}
	}
	if mid {
		out = append(out, sp(themes.Muted, r.version))
	}
	return append(out, sp(idTok, r.identity))
}

// detail is the selected proxy's pane: where it runs and is connected,
// each xDS type's state (with when istiod sent it and the proxy's NACK),
// the identity it was injected with against its pod's, its versions.
func (v *proxiesView) detail(vc viewContext, r *proxyRow, w int) []string {
	p := r.p
	var out []string
	line := func(label, text string, st lipgloss.Style) {
		out = append(out, " "+vc.st.Muted.Render(fmt.Sprintf("%-9s", label))+" "+st.Render(fit(text, max(w-12, 1))))
	}
	where := string(p.Kind) + " " + types.NamespacedName{Namespace: p.Namespace, Name: p.Name}.String()
	if p.Probe {
		where += " — one of meshscope's own impersonated proxies (not counted)"
	} else if p.Cluster != "" {
		where += " in " + p.Cluster
	}
	if p.Pod != nil && p.Pod.Node != "" {
		where += " on node " + p.Pod.Node
	}
	line("proxy", where, vc.st.Accent)
	switch {
	case p.ControlPlane != "":
		conn := "istiod " + p.ControlPlane
		if p.ConnectedAs != "" && p.ConnectedAs != p.Cluster {
			conn += " (told it CLUSTER_ID " + p.ConnectedAs + ")"
		}
		conn += ": " + r.state
		line("connected", conn, vc.st.Of(fleetStateToken(r.state)))
	case p.State == fleet.Disconnected:
		line("connected", "to no istiod meshscope reads: it runs on the last config it got", vc.st.Error)
	default:
		line("connected", "unknown: not every istiod's proxies were read", vc.st.Warn)
	}
	var types []string
	for _, t := range p.Types {
		s := t.Type + " " + string(t.State)
		if !t.SentAt.IsZero() {
			s += " (sent " + age(vc.now(), t.SentAt) + " ago)"
		}
		if t.Error != "" {
			s += ": " + t.Error
		}
		types = append(types, s)
	}
	if len(types) == 0 {
		types = []string{"-"}
		if p.Kind == model.ProxyAmbient {
			// Ambient mode: the pod runs no proxy; its node's ztunnel does.
			types = []string{"none of its own: its node's ztunnel serves it, and its state is that ztunnel's"}
		}
	}
	tl := wrap(strings.Join(types, " · "), max(w-12, 1))
	for i, l := range tl[:min(len(tl), 2)] {
		label := ""
		if i == 0 {
			label = "xDS"
		}
		line(label, l, vc.st.Text)
	}
	switch {
	case len(p.Drift) > 0:
		var ds []string
		for _, d := range p.Drift {
			ds = append(ds, fmt.Sprintf("injected with %s %s, its pod is on %s now", d.Field, fleet.QuoteEmpty(d.Injected), fleet.QuoteEmpty(d.Derived)))
		}
		line("identity", strings.Join(ds, "; ")+": it gets the wrong split horizon until restarted", vc.st.Error)
	case p.Pod != nil && p.Pod.Injected != nil:
		in := p.Pod.Injected
		line("identity", fmt.Sprintf("injected with network %s, cluster %s: as its pod's today", fleet.QuoteEmpty(in.Network), fleet.QuoteEmpty(in.ClusterID)), vc.st.OK)
	default:
		line("identity", "-", vc.st.Muted)
	}
	ver := "proxy " + orDash(p.Version)
	if p.IstiodVersion != "" {
		ver += ", istiod " + p.IstiodVersion
	}
	if p.StaleFor > 0 {
		ver += fmt.Sprintf(" · waiting on a push sent %s ago", p.StaleFor.Round(time.Second))
	}
	line("versions", ver, vc.st.Muted)
	return out
}
