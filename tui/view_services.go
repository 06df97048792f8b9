package tui

import (
	"fmt"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/meshscope/meshscope/internal/humanize"
	"github.com/meshscope/meshscope/model"
)

// sortKey orders the services view; s cycles through them.
type sortKey int

const (
	sortHostname sortKey = iota
	sortNamespace
	sortEndpoints
	sortProblems
	numSortKeys
)

func (s sortKey) String() string {
	return [...]string{"hostname", "namespace", "endpoints", "problems"}[s]
}

// servicesView lists one row per hostname across clusters.
type servicesView struct {
	// list.rows are row ids (indexes into index.services) in display
	// order: the sort order, or with a filter best match first.
	list   listState
	sortBy sortKey
	sorted []int32 // every row id, in sort order
	filter fuzzyFilter
	ix     *index // the index sorted and filter were computed on
	// changedOnly shows only the rows the what-if changes (the WhatIf
	// key); wi is the overlay the rows were marked from.
	changedOnly bool
	wi          *overlay
}

func newServicesView() *servicesView {
	v := &servicesView{ix: buildIndex(nil, nil, nil)}
	v.list.keyOf = func(i int32) string { return v.ix.services[i].hostname }
	return v
}

func (v *servicesView) title(vc viewContext) string {
	t := fmt.Sprintf("Services (%d) sorted by %s", len(v.list.rows), v.sortBy)
	if v.filter.active() {
		t = fmt.Sprintf("Services (%d of %d) · filter /%s, best match first", len(v.list.rows), len(vc.ix.services), v.filter.query)
	}
	switch {
	case v.wi == nil:
	case v.changedOnly:
		t += fmt.Sprintf(" · only the %d the what-if changes (d: all)", len(v.list.rows))
	default:
		t += fmt.Sprintf(" · the what-if changes %s (d: only those)", humanize.Count(len(v.wi.hosts), "service"))
	}
	return t
}

func (v *servicesView) filterQuery() string { return v.filter.query }

// rows is the number of service rows on screen: the body less the header
// and the legend.
func (v *servicesView) rows(vc viewContext) int { return max(vc.height-2, 1) }

// refresh re-sorts and re-filters after a new index, and puts the cursor
// back on the same hostname.
func (v *servicesView) refresh(vc viewContext, _ update) {
	if v.wi != vc.wi {
		v.wi = vc.wi
		v.changedOnly = v.changedOnly && v.wi != nil
	}
	if v.ix != vc.ix {
		v.ix = vc.ix
		v.resort()
		v.filter.set(v.filter.query, v.sorted, v.name, false)
	}
	v.list.show(v.shown(), v.rows(vc))
}

func (v *servicesView) name(i int) string { return v.ix.services[i].hostname }

func (v *servicesView) resort() {
	rows := v.ix.services
	v.sorted = identity(v.sorted, len(rows))
	switch v.sortBy {
	case sortHostname:
		// snapshot order is by hostname already
	case sortNamespace:
		sort.SliceStable(v.sorted, func(a, b int) bool {
			ra, rb := &rows[v.sorted[a]], &rows[v.sorted[b]]
			if ra.namespace != rb.namespace {
				return ra.namespace < rb.namespace
			}
			return ra.name < rb.name
		})
	case sortEndpoints:
		sort.SliceStable(v.sorted, func(a, b int) bool {
			return rows[v.sorted[a]].total > rows[v.sorted[b]].total
		})
	case sortProblems:
		sort.SliceStable(v.sorted, func(a, b int) bool {
			return rows[v.sorted[a]].rank < rows[v.sorted[b]].rank
		})
	}
}

// shown are the rows to show: in sort order, or with a filter the matches,
// best first.
func (v *servicesView) shown() []int32 {
	rows := v.sorted
	if v.filter.active() {
		rows = v.filter.matched
	}
	if !v.changedOnly || v.wi == nil {
		return rows
	}
	out := make([]int32, 0, len(v.wi.hosts))
	for _, id := range rows {
		if v.wi.of(v.ix.services[id].hostname) != nil {
			out = append(out, id)
		}
	}
	return out
}

func (v *servicesView) setFilter(vc viewContext, q string) {
	if v.ix != vc.ix {
		v.refresh(vc, update{})
	}
	v.filter.set(q, v.sorted, v.name, true)
	rows := v.shown()
	// While the user types, the cursor goes to the best match (as in fzf):
	// the first row.
	if q != "" && len(rows) > 0 {
		v.list.key = v.list.keyOf(rows[0])
	}
	v.list.show(rows, v.rows(vc))
}

// selectedHost is the hostname under the cursor (with no rows, the one it
// was on; "" for none).
func (v *servicesView) selectedHost() string {
	if id, ok := v.list.selected(); ok {
		return v.ix.services[id].hostname
	}
	return v.list.key
}

// selectHost puts the cursor on a hostname (clearing a filter that hides it).
func (v *servicesView) selectHost(vc viewContext, host string) {
	v.refresh(vc, update{})
	if i, ok := v.ix.byHost[host]; ok && !v.filter.match(i) {
		v.setFilter(vc, "")
	}
	if v.changedOnly && v.wi.of(host) == nil {
		v.changedOnly = false
		v.list.show(v.shown(), v.rows(vc))
	}
	v.list.selectKey(host, v.rows(vc))
}

func (v *servicesView) key(vc viewContext, k tea.KeyPressMsg) (tea.Cmd, bool) {
	h := v.rows(vc)
	switch {
	case key.Matches(k, vc.keys.Sort):
		v.sortBy = (v.sortBy + 1) % numSortKeys
		v.resort()
		v.filter.set(v.filter.query, v.sorted, v.name, false)
		v.list.show(v.shown(), h)
	case key.Matches(k, vc.keys.Enter):
		if id, ok := v.list.selected(); ok {
			return navigate(openServiceMsg{host: v.ix.services[id].hostname}), true
		}
	case key.Matches(k, vc.keys.WhatIf):
		if v.wi == nil {
			return flash("no what-if shown: :whatif FILE lays a change over the mesh", false), true
		}
		v.changedOnly = !v.changedOnly
		v.list.show(v.shown(), h)
	default:
		return nil, v.list.scrollKey(vc.keys, k, h)
	}
	return nil, true
}

func (v *servicesView) scroll(vc viewContext, d int) { v.list.moveBy(d, v.rows(vc)) }

func (v *servicesView) render(vc viewContext, w, h int) string {
	if vc.ix.snap == nil {
		return vc.waiting(w, h)
	}
	ix := v.ix
	netW := max(len("EPS ")+len(strings.Join(ix.networks, "/")), 9)
	cols := []column{{title: "HOSTNAME", w: 0}}
	wide := w >= 110
	verdictW := 16
	if wide {
		verdictW = 24
	}
	portsW := 10
	if wide {
		cols = append(cols, column{title: "NAMESPACE", w: 14})
		portsW = 11
	}
	cols = append(cols,
		column{title: "PORTS", w: portsW},
		column{title: "CLUSTERS", w: max(len(ix.clusterIDs)+len(" +SE"), 8)},
		column{title: "EPS " + strings.Join(ix.networks, "/"), w: min(netW, 24), right: true},
	)
	if ix.ambient {
		// The data-plane mode, only in a mesh that uses ambient mode.
		cols = append(cols, column{title: "MODE", w: 7})
	}
	cols = append(cols, column{title: "VERDICT", w: verdictW})
	if v.wi != nil {
		// The what-if's mark, first: the eye finds it down the left edge.
		cols = append(markCols(v.wi), cols...)
	}
	cols = layoutColumns(cols, w, 20)
	if len(v.list.rows) == 0 {
		lines := vc.emptyLines("  no services", w)
		switch {
		case v.filter.active():
			lines = []string{vc.st.Muted.Render("  no service matches /" + v.filter.query)}
		case v.changedOnly:
			lines = []string{vc.st.Muted.Render("  the what-if changes no service's endpoints (d: all services)")}
		}
		return padLines(append([]string{headerLine(cols, vc.st.Header, w)}, lines...), w, h)
	}
	var mark []string
	if v.wi != nil {
		mark, cols = []string{""}, cols[1:]
	}
	lines := vc.table(append(markCols(v.wi), cols...), &v.list, w, h-1, true, func(id int32, sel bool) []string {
		r := &ix.services[id]
		if mark != nil {
			mark[0] = whatIfMark(vc, v.wi.of(r.hostname), sel)
		}
		bytes := matchedBytes(v.filter.query, r.hostname)
		out := append(mark, highlight(r.hostname, cols[0].w, runePositions(r.hostname, bytes), vc.sel(vc.st.Text, sel), vc.sel(vc.st.Match, sel)))
		k := 1
		if wide {
			out = append(out, cell(r.namespace, cols[1].w, vc.sel(vc.st.Muted, sel)))
			k = 2
		}
		out = append(out,
			cell(orDash(r.ports), cols[k].w, vc.sel(vc.st.Text, sel)),
			cell(r.presence, cols[k+1].w, vc.sel(vc.st.Text, sel)),
			vc.sel(vc.st.Text, sel).Render(fitRight(r.epsText, cols[k+2].w)),
		)
		if ix.ambient {
			out = append(out, cell(modeText(r.mode), cols[k+3].w, vc.sel(vc.st.Muted, sel)))
			k++
		}
		return append(out, cell(r.badge(), cols[k+3].w, vc.sel(vc.verdictStyle(r), sel)))
	})
	for len(lines) < h-1 {
		lines = append(lines, "")
	}
	lines = append(lines, vc.st.Muted.Render(fit(" "+v.legend(), w)))
	return padLines(lines, w, h)
}

// legend says which cluster each presence mark stands for, and the marks
// of services from ServiceEntries.
func (v *servicesView) legend() string {
	var b strings.Builder
	b.WriteString("CLUSTERS marks: ")
	for i, id := range v.ix.clusterIDs {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%d=%s", i+1, id)
		if c := v.ix.snap.Clusters[i]; c.State != model.StateSynced && c.State != model.StateRemoved && !c.SyncedAt.IsZero() {
			// It synced once and is out of touch now: its marks and
			// endpoints are as last seen.
			fmt.Fprintf(&b, " (%s: as last seen)", c.State)
		}
	}
	b.WriteString(", SE ServiceEntry, +SE both · s sort · / filter · enter open")
	if v.wi != nil {
		// First: a narrow terminal cuts the end of the line.
		wi := "Δ what-if changes its endpoints, Δ! loses them all (or all remote) · d only Δ"
		if n := len(v.wi.hosts) - v.wi.inIndex(v.ix); n > 0 {
			wi += fmt.Sprintf(" · %d more exist only after the change", n)
		}
		return wi + " · " + b.String()
	}
	return b.String()
}

// markCols is the what-if's mark column (none without an overlay).
func markCols(wi *overlay) []column {
	if wi == nil {
		return nil
	}
	return []column{{title: "Δ", w: markWidth}}
}

// markWidth is the what-if mark's width: "Δ!" for a service that loses
// endpoints, so that it shows without colour too (NO_COLOR, mono).
const markWidth = 2

// whatIfMark is a row's what-if mark: Δ when the change moves its
// endpoints, Δ! in the error style when it loses them all (or all remote).
func whatIfMark(vc viewContext, h *hostChange, sel bool) string {
	switch {
	case h == nil:
		return cell("", markWidth, vc.sel(vc.st.Text, sel))
	case h.lost():
		return cell("Δ!", markWidth, vc.sel(vc.st.Error, sel))
	}
	return cell("Δ", markWidth, vc.sel(vc.st.Warn, sel))
}
