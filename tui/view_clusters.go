package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/meshscope/meshscope/internal/humanize"
	"github.com/meshscope/meshscope/model"
)

// clustersView is the first screen: every cluster with its sync state
// (and, for the selected one, where its ID comes from, its warnings and
// its root CA), the control planes (their istiods and which clusters each
// reads), and the networks with their gateways.
type clustersView struct {
	focus int       // focusClusters, focusControlPlanes or focusGateways
	cl    listState // rows: indexes into the snapshot's clusters
	cp    listState // rows: indexes into ix.cps
	gw    listState // rows: indexes into gws
	gws   []gwRow
	ix    *index          // what the rows were built from
	snap  *model.Snapshot // ix.snap: what cl's rows index
}

type gwRow struct {
	key, network, gateway, cluster, source string
	stands                                 int
	none                                   bool
	hostname                               bool
}

// The panes of the clusters view, in tab order.
const (
	focusClusters = iota
	focusControlPlanes
	focusGateways
	numPanes
)

func newClustersView() *clustersView {
	v := &clustersView{}
	v.cl.keyOf = func(i int32) string { return v.snap.Clusters[i].ID }
	v.cp.keyOf = func(i int32) string { return v.ix.cps[i].id }
	v.gw.keyOf = func(i int32) string { return v.gws[i].key }
	return v
}

func (v *clustersView) title(vc viewContext) string {
	if vc.ix.snap == nil {
		return "Clusters"
	}
	return fmt.Sprintf("Clusters (%d) · networks (%d)", len(vc.ix.clusterIDs), len(vc.ix.networks))
}

// clusterDetail is the number of lines about the selected cluster.
const clusterDetail = 4

// heights splits the body between the three panes: clusters (title,
// header, rows and the selected cluster's detail), control planes (title,
// header, rows) and gateways (the rest).
func (v *clustersView) heights(vc viewContext, h int) (top, mid, bottom int) {
	if n := len(v.cp.rows); n > 0 {
		// Title, header, rows, and the selected istiod's settings.
		mid = min(n+3, max(h/4, 4))
	}
	want := len(v.cl.rows) + 2 + clusterDetail
	top = min(want, max((h-mid)*3/5, 2+clusterDetail+1))
	if h-mid-top < 4 {
		top = max(h-mid-4, 2+clusterDetail)
	}
	return top, mid, max(h-top-mid, 0)
}

// clusterRows is how many cluster rows the top pane shows.
func clusterRows(top int) int { return max(top-2-clusterDetail, 1) }

func (v *clustersView) refresh(vc viewContext, _ update) {
	if v.ix != vc.ix {
		v.ix, v.snap = vc.ix, vc.ix.snap
		v.gws = gatewayRows(vc.ix)
		n := 0
		if v.snap != nil {
			n = len(v.snap.Clusters)
		}
		v.cl.rows = identity(v.cl.rows, n)
		v.cp.rows = identity(v.cp.rows, len(vc.ix.cps))
		v.gw.rows = identity(v.gw.rows, len(v.gws))
	}
	top, mid, bottom := v.heights(vc, vc.height)
	v.cl.show(v.cl.rows, clusterRows(top))
	v.cp.show(v.cp.rows, max(mid-3, 1))
	v.gw.show(v.gw.rows, bottom-2)
}

// selectCluster puts the cursor on a cluster (from the problems view).
func (v *clustersView) selectCluster(vc viewContext, id string) {
	v.focus = focusClusters
	v.refresh(vc, update{})
	top, _, _ := v.heights(vc, vc.height)
	v.cl.selectKey(id, clusterRows(top))
}

func gatewayRows(ix *index) []gwRow {
	if ix.snap == nil {
		return nil
	}
	var rows []gwRow
	seen := map[string]bool{}
	add := func(n string) {
		gws := ix.snap.GatewaysFor(n)
		if len(gws) == 0 {
			rows = append(rows, gwRow{key: n + "|", network: n, gateway: "no gateway", none: true, stands: ix.standsFor[n], source: "-", cluster: "-"})
			return
		}
		for _, g := range gws {
			addr := model.HostPort(g.Address, g.Port)
			if g.Port == 0 && g.HBONEPort != 0 {
				addr = fmt.Sprintf("%s:%d (hbone)", g.Address, g.HBONEPort)
			}
			if g.Name != "" {
				// A DNS name istiod resolves: show the name with each address.
				addr = g.Name + " → " + addr
			}
			src := g.Source()
			cl := g.Cluster
			if cl == "" {
				cl = "-"
			}
			rows = append(rows, gwRow{key: n + "|" + addr, network: n, gateway: addr, cluster: cl, source: src, stands: ix.standsFor[n], hostname: g.Hostname})
		}
	}
	for _, n := range ix.snap.Networks {
		seen[n.Name] = true
		add(n.Name)
	}
	for _, g := range ix.snap.Gateways { // gateways of a network not listed
		if !seen[g.Network] {
			seen[g.Network] = true
			add(g.Network)
		}
	}
	return rows
}

func (v *clustersView) key(vc viewContext, k tea.KeyPressMsg) (tea.Cmd, bool) {
	switch {
	case key.Matches(k, vc.keys.Tab):
		d := 1
		if k.String() == "shift+tab" {
			d = numPanes - 1
		}
		v.focus = (v.focus + d) % numPanes
		if v.focus == focusControlPlanes && len(v.cp.rows) == 0 {
			v.focus = (v.focus + d) % numPanes
		}
		return nil, true
	case key.Matches(k, vc.keys.Enter):
		// A cluster or a control plane opens the problems that concern
		// it, if any.
		var id string
		switch v.focus {
		case focusClusters:
			if i, ok := v.cl.selected(); ok {
				id = v.snap.Clusters[i].ID
			}
		case focusControlPlanes:
			if i, ok := v.cp.selected(); ok {
				id = vc.ix.cps[i].cluster // problems name the primary
			}
		}
		if id == "" {
			return nil, true
		}
		for _, p := range vc.ix.problems {
			if p.Cluster == id {
				return navigate(selectProblemMsg{key: problemKey(p)}), true
			}
		}
		return flash("no problems for cluster "+id, false), true
	}
	top, _, _ := v.heights(vc, vc.height)
	if d, ok := scrollDelta(vc.keys, k, clusterRows(top)); ok {
		v.scroll(vc, d)
		return nil, true
	}
	return nil, false
}

func (v *clustersView) scroll(vc viewContext, d int) {
	top, mid, bottom := v.heights(vc, vc.height)
	switch v.focus {
	case focusClusters:
		v.cl.moveBy(d, clusterRows(top))
	case focusControlPlanes:
		v.cp.moveBy(d, max(mid-2, 1))
	default:
		v.gw.moveBy(d, bottom-2)
	}
}

func (v *clustersView) render(vc viewContext, w, h int) string {
	snap := vc.ix.snap
	if snap == nil {
		return padLines([]string{"", vc.st.Warn.Render("  waiting for clusters…"), vc.st.Muted.Render("  the collector is connecting to the clusters; the first snapshot appears here")}, w, h)
	}
	top, mid, bottom := v.heights(vc, h)
	lines := make([]string, 0, h)
	lines = append(lines, vc.paneTitle(fmt.Sprintf("Clusters — %d of %d synced", vc.ix.synced, len(snap.Clusters)), v.focus == focusClusters, w))
	idW, netW := len("CLUSTER"), len("NETWORK")
	for _, c := range snap.Clusters {
		idW = max(idW, ansi.StringWidth(c.ID))
		netW = max(netW, ansi.StringWidth(c.Network))
	}
	cols := []column{{title: "CLUSTER", w: min(idW, 24)}, {title: "SOURCE", w: 0, grow: 2}}
	wide := w >= 120
	if wide {
		cols = append(cols, column{title: "SERVER", w: 0, grow: 2})
	}
	cols = append(cols,
		column{title: "NETWORK", w: min(netW, 16)},
		column{title: "STATE", w: 0, grow: 3},
		column{title: "SYNCED", w: 6, right: true},
		column{title: "EVENT", w: 6, right: true},
		column{title: "SVC/EPS/PODS", w: 14, right: true},
	)
	if w >= 100 {
		cols = append(cols, column{title: "SECRET", w: secretW}, column{title: "ROOT CA", w: rootW})
	}
	cols = layoutColumns(cols, w, 8)
	rows := v.table(vc, cols, w, top-1-clusterDetail, wide)
	lines = append(lines, rows...)
	for len(lines) < top-clusterDetail {
		lines = append(lines, "")
	}
	lines = append(lines, v.detail(vc, w)...)
	if mid > 0 {
		lines = append(lines, v.controlPlanes(vc, w, mid)...)
	}
	lines = append(lines, vc.paneTitle("Networks & gateways — "+humanize.Count(len(snap.Networks), "network")+", "+humanize.Count(len(snap.Gateways), "gateway"), v.focus == focusGateways, w))
	gwW := len("GATEWAY")
	for _, g := range v.gws {
		gwW = max(gwW, ansi.StringWidth(g.gateway))
	}
	gwW = min(gwW, 32)
	gcols := layoutColumns([]column{
		{title: "NETWORK", w: min(netW, 16)},
		{title: "GATEWAY", w: gwW},
		{title: "CLUSTER", w: min(idW, 24)},
		{title: "SOURCE", w: 0, grow: 2},
		{title: "STANDS FOR", w: 14, right: true},
	}, w, 10)
	glines := vc.table(gcols, &v.gw, w, bottom-1, v.focus == focusGateways, func(i int32, sel bool) []string {
		g := v.gws[i]
		gst := vc.st.Gateway
		gw := g.gateway
		if g.none {
			gst = vc.st.Muted
		}
		if g.hostname {
			gst = vc.st.Warn
			gw += " (DNS name: no address, istiod drops it)"
		}
		return []string{
			cell(g.network, gcols[0].w, vc.sel(vc.st.Text, sel)),
			cell(gw, gcols[1].w, vc.sel(gst, sel)),
			cell(g.cluster, gcols[2].w, vc.sel(vc.st.Text, sel)),
			cell(g.source, gcols[3].w, vc.sel(vc.st.Muted, sel)),
			vc.sel(vc.st.Text, sel).Render(fitRight(fmt.Sprintf("%d endpoints", g.stands), gcols[4].w)),
		}
	})
	lines = append(lines, glines...)
	return padLines(lines, w, h)
}

func (v *clustersView) table(vc viewContext, cols []column, w, h int, wide bool) []string {
	snap := vc.ix.snap
	now := vc.now()
	return vc.table(cols, &v.cl, w, h, v.focus == focusClusters, func(i int32, sel bool) []string {
		c := snap.Clusters[i]
		state := string(c.State)
		if c.Reason != "" {
			state += ": " + c.Reason
		} else if len(c.Warnings) > 0 {
			state += " (" + fmt.Sprint(len(c.Warnings)) + " warnings)"
		}
		stst := vc.st.Of(clusterStateToken(c.State))
		if c.State == model.StateSynced && len(c.Warnings) > 0 {
			stst = vc.st.Warn
		}
		if op := istiodOpinion(vc.feed, c); op != "" {
			// e.g. meshscope: unreachable, istiod: still "synced" (istiod
			// keeps a dead remote cluster's last state); first, so a long
			// reason cannot hide it.
			state = string(c.State) + " (" + op + ")" + strings.TrimPrefix(state, string(c.State))
			stst = vc.st.Error
		}
		net := c.Network
		if net == "" {
			net = "-"
		}
		out := []string{
			cell(c.ID, cols[0].w, vc.sel(vc.st.Text, sel)),
			cell(sourceText(c.Source), cols[1].w, vc.sel(vc.st.Muted, sel)),
		}
		k := 2
		if wide {
			out = append(out, cell(orDash(c.Server), cols[2].w, vc.sel(vc.st.Muted, sel)))
			k = 3
		}
		counts := fmt.Sprintf("%d/%d/%d", c.Counts.Services, c.Counts.Endpoints, c.Counts.Pods)
		out = append(out,
			cell(net, cols[k].w, vc.sel(vc.st.Text, sel)),
			cell(state, cols[k+1].w, vc.sel(stst, sel)),
			vc.sel(vc.st.Muted, sel).Render(fitRight(age(now, c.SyncedAt), cols[k+2].w)),
			vc.sel(vc.st.Muted, sel).Render(fitRight(age(now, c.LastEventAt), cols[k+3].w)),
			vc.sel(vc.st.Text, sel).Render(fitRight(counts, cols[k+4].w)),
		)
		if len(cols) > k+6 {
			t, st := secretCell(vc, c.ID)
			out = append(out, cell(t, cols[k+5].w, vc.sel(st, sel)))
			t, st = rootCell(vc, c.ID)
			out = append(out, cell(t, cols[k+6].w, vc.sel(st, sel)))
		}
		return out
	})
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
