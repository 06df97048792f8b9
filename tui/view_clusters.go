package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/meshscope/meshscope/collector"
)

// clustersView is the first screen: every cluster with its sync state, and
// below it the networks with their gateways.
type clustersView struct {
	focus int // 0: clusters, 1: gateways
	cl    cursor
	gw    cursor
	gws   []gwRow
}

type gwRow struct {
	key, network, gateway, cluster, source string
	stands                                 int
	none                                   bool
	hostname                               bool
}

func (v *clustersView) title(m *Model) string {
	if m.ix.snap == nil {
		return "Clusters"
	}
	return fmt.Sprintf("Clusters (%d) · networks (%d)", len(m.ix.clusterIDs), len(m.ix.networks))
}

func (v *clustersView) filterable() bool         { return false }
func (v *clustersView) filterQuery() string      { return "" }
func (v *clustersView) setFilter(*Model, string) {}

func (v *clustersView) clusterKey(m *Model) func(int) string {
	return func(i int) string { return m.ix.snap.Clusters[i].ID }
}

func (v *clustersView) gwKey(i int) string { return v.gws[i].key }

func (v *clustersView) nClusters(m *Model) int {
	if m.ix.snap == nil {
		return 0
	}
	return len(m.ix.snap.Clusters)
}

// heights splits the body between the two panes.
func (v *clustersView) heights(m *Model, h int) (int, int) {
	// clusters pane: title + header + rows + detail line.
	want := v.nClusters(m) + 3
	top := min(want, max(h*3/5, 6))
	if h-top < 4 {
		top = max(h-4, 3)
	}
	return top, h - top
}

func (v *clustersView) refresh(m *Model) {
	v.gws = gatewayRows(m.ix)
	top, bottom := v.heights(m, m.bodyHeight())
	if n := v.nClusters(m); n > 0 {
		v.cl.relocate(n, v.clusterKey(m), top-3)
	}
	if len(v.gws) > 0 {
		v.gw.relocate(len(v.gws), v.gwKey, bottom-2)
	}
}

// selectCluster puts the cursor on a cluster (from the problems view).
func (v *clustersView) selectCluster(m *Model, id string) {
	v.focus = 0
	v.cl.key = id
	v.refresh(m)
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
			addr := fmt.Sprintf("%s:%d", g.Address, g.Port)
			if g.Port == 0 && g.HBONEPort != 0 {
				addr = fmt.Sprintf("%s:%d (hbone)", g.Address, g.HBONEPort)
			}
			src := string(g.From)
			if g.Service != "" {
				src = "service " + g.Service
			}
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

func (v *clustersView) key(m *Model, k tea.KeyPressMsg) (tea.Cmd, bool) {
	top, bottom := v.heights(m, m.bodyHeight())
	switch {
	case key.Matches(k, m.keys.Tab):
		v.focus = 1 - v.focus
		return nil, true
	case key.Matches(k, m.keys.Up):
		v.scroll(m, -1)
	case key.Matches(k, m.keys.Down):
		v.scroll(m, 1)
	case key.Matches(k, m.keys.PageUp):
		v.scroll(m, -max(top-3, 1))
	case key.Matches(k, m.keys.PageDown):
		v.scroll(m, max(top-3, 1))
	case key.Matches(k, m.keys.Top):
		v.scroll(m, -1<<30)
	case key.Matches(k, m.keys.Bottom):
		v.scroll(m, 1<<30)
	case key.Matches(k, m.keys.Enter):
		// A cluster opens the problems that concern it, if any.
		if v.focus == 0 && v.nClusters(m) > 0 {
			id := m.ix.snap.Clusters[v.cl.cur].ID
			for _, p := range m.ix.problems {
				if p.Cluster == id {
					m.push(viewProblems)
					m.problems.selectKey(m, problemKey(p))
					return nil, true
				}
			}
			m.setFlash("no problems for cluster "+id, false)
		}
	default:
		return nil, false
	}
	_ = bottom
	return nil, true
}

func (v *clustersView) scroll(m *Model, d int) {
	top, bottom := v.heights(m, m.bodyHeight())
	if v.focus == 0 {
		if n := v.nClusters(m); n > 0 {
			v.cl.move(d, n, top-3, v.clusterKey(m))
		}
		return
	}
	if len(v.gws) > 0 {
		v.gw.move(d, len(v.gws), bottom-2, v.gwKey)
	}
}

func (v *clustersView) render(m *Model, w, h int) string {
	snap := m.ix.snap
	if snap == nil {
		return padLines([]string{"", m.st.Warn.Render("  waiting for clusters…"), m.st.Muted.Render("  the collector is connecting to the clusters; the first snapshot appears here")}, w, h)
	}
	top, bottom := v.heights(m, h)
	lines := make([]string, 0, h)
	lines = append(lines, m.paneTitle(fmt.Sprintf("Clusters — %d of %d synced", m.ix.synced, len(snap.Clusters)), v.focus == 0, w))
	now := m.now()
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
	cols = layoutColumns(cols, w, 8)
	rows := v.table(m, cols, w, top-2)
	lines = append(lines, rows...)
	for len(lines) < top-1 {
		lines = append(lines, "")
	}
	lines = append(lines, v.detail(m, w))
	lines = append(lines, m.paneTitle("Networks & gateways — "+plural(len(snap.Networks), "network")+", "+plural(len(snap.Gateways), "gateway"), v.focus == 1, w))
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
	glines := m.table(gcols, len(v.gws), &v.gw, w, bottom-1, v.focus == 1, func(i int, sel bool) []string {
		g := v.gws[i]
		gst := m.st.Gateway
		gw := g.gateway
		if g.none {
			gst = m.st.Muted
		}
		if g.hostname {
			gst = m.st.Warn
			gw += " (DNS name: ignored)"
		}
		return []string{
			cell(g.network, gcols[0].w, m.sel(m.st.Text, sel)),
			cell(gw, gcols[1].w, m.sel(gst, sel)),
			cell(g.cluster, gcols[2].w, m.sel(m.st.Text, sel)),
			cell(g.source, gcols[3].w, m.sel(m.st.Muted, sel)),
			m.sel(m.st.Text, sel).Render(fitRight(fmt.Sprintf("%d endpoints", g.stands), gcols[4].w)),
		}
	})
	lines = append(lines, glines...)
	_ = now
	return padLines(lines, w, h)
}

func (v *clustersView) table(m *Model, cols []column, w, h int) []string {
	snap := m.ix.snap
	now := m.now()
	wide := len(cols) == 8
	return m.table(cols, len(snap.Clusters), &v.cl, w, h, v.focus == 0, func(i int, sel bool) []string {
		c := snap.Clusters[i]
		state := string(c.State)
		if c.Reason != "" {
			state += ": " + c.Reason
		} else if len(c.Warnings) > 0 {
			state += " (" + fmt.Sprint(len(c.Warnings)) + " warnings)"
		}
		stst := m.stateStyle(string(c.State))
		if c.State == collector.StateSynced && len(c.Warnings) > 0 {
			stst = m.st.Warn
		}
		if op := istiodOpinion(m.feed, c); op != "" {
			// e.g. meshscope: unreachable, istiod: still "synced" (#33799);
			// first, so a long reason cannot hide it.
			state = string(c.State) + " (" + op + ")" + strings.TrimPrefix(state, string(c.State))
			stst = m.st.Error
		}
		net := c.Network
		if net == "" {
			net = "-"
		}
		out := []string{
			cell(c.ID, cols[0].w, m.sel(m.st.Text, sel)),
			cell(sourceText(c.Source), cols[1].w, m.sel(m.st.Muted, sel)),
		}
		k := 2
		if wide {
			out = append(out, cell(orDash(c.Server), cols[2].w, m.sel(m.st.Muted, sel)))
			k = 3
		}
		counts := fmt.Sprintf("%d/%d/%d", c.Counts.Services, c.Counts.Endpoints, c.Counts.Pods)
		out = append(out,
			cell(net, cols[k].w, m.sel(m.st.Text, sel)),
			cell(state, cols[k+1].w, m.sel(stst, sel)),
			m.sel(m.st.Muted, sel).Render(fitRight(age(now, c.SyncedAt), cols[k+2].w)),
			m.sel(m.st.Muted, sel).Render(fitRight(age(now, c.LastEventAt), cols[k+3].w)),
			m.sel(m.st.Text, sel).Render(fitRight(counts, cols[k+4].w)),
		)
		return out
	})
}

// detail is one line about the selected cluster: what does not fit in
// the table (server, full reason, warnings).
func (v *clustersView) detail(m *Model, w int) string {
	snap := m.ix.snap
	if len(snap.Clusters) == 0 {
		return m.st.Muted.Render(fit("  no clusters yet", w))
	}
	c := snap.Clusters[v.cl.cur]
	parts := []string{c.ID, sourceText(c.Source), orDash(c.Server)}
	if c.Reason != "" {
		parts = append(parts, c.Reason)
	}
	if len(c.Warnings) > 0 {
		parts = append(parts, "warnings: "+strings.Join(c.Warnings, "; "))
	}
	if c.WatchErrors > 0 || c.Reconnects > 0 {
		parts = append(parts, fmt.Sprintf("watch errors %d, reconnects %d", c.WatchErrors, c.Reconnects))
	}
	if op := istiodOpinion(m.feed, c); op != "" {
		parts = append(parts, op+": its endpoints from "+c.ID+" may be stale")
	}
	return m.st.Muted.Render(fit("  "+strings.Join(parts, " · "), w))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
