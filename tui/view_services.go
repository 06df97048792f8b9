package tui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sahilm/fuzzy"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
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
	c      cursor
	sortBy sortKey
	// sorted are row ids (indexes into index.services) in sort order;
	// order are those that pass the filter.
	sorted []int32
	order  []int32
	filter fuzzyFilter
	ix     *index // the index sorted and filter were computed on
}

func (v *servicesView) title(m *Model) string {
	t := fmt.Sprintf("Services (%d", len(v.order))
	if v.filter.active() {
		t += fmt.Sprintf(" of %d", len(m.ix.services))
	}
	t += ") sorted by " + v.sortBy.String()
	if v.filter.active() {
		t += " · filter /" + v.filter.query
	}
	return t
}

func (v *servicesView) filterable() bool    { return true }
func (v *servicesView) filterQuery() string { return v.filter.query }

func (v *servicesView) keyAt(m *Model) func(int) string {
	return func(i int) string { return v.ix.services[v.order[i]].hostname }
}

// rows is the number of service rows on screen: the body less the header
// and the legend.
func (v *servicesView) rows(m *Model) int { return max(m.bodyHeight()-2, 1) }

// refresh re-sorts and re-filters after a new index, and puts the cursor
// back on the same hostname.
func (v *servicesView) refresh(m *Model) {
	if v.ix != m.ix {
		v.ix = m.ix
		v.resort()
		v.filter.set(v.filter.query, len(v.ix.services), v.name, false)
		v.applyFilter()
	}
	v.c.relocate(len(v.order), v.keyAt(m), v.rows(m))
}

func (v *servicesView) name(i int) string { return v.ix.services[i].hostname }

func (v *servicesView) resort() {
	rows := v.ix.services
	if cap(v.sorted) >= len(rows) {
		v.sorted = v.sorted[:len(rows)]
	} else {
		v.sorted = make([]int32, len(rows))
	}
	for i := range v.sorted {
		v.sorted[i] = int32(i)
	}
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

func (v *servicesView) applyFilter() {
	if !v.filter.active() {
		v.order = v.sorted
		return
	}
	out := make([]int32, 0, len(v.filter.matched))
	for _, id := range v.sorted {
		if v.filter.match(int(id)) {
			out = append(out, id)
		}
	}
	v.order = out
}

func (v *servicesView) setFilter(m *Model, q string) {
	if v.ix == nil {
		v.ix = m.ix
		v.resort()
	}
	v.filter.set(q, len(v.ix.services), v.name, true)
	v.applyFilter()
	// While the user types, the cursor goes to the best match (as in fzf);
	// the rows keep their sort order. Scoring is bounded to keep a
	// keystroke cheap on huge meshes.
	if q != "" && len(v.order) > 0 && len(v.order) <= 5000 {
		if best := v.bestMatch(q); best != "" {
			v.c.key = best
		}
	}
	v.c.relocate(len(v.order), v.keyAt(m), v.rows(m))
}

// bestMatch is the hostname among the filtered rows that sahilm/fuzzy
// scores highest for q.
func (v *servicesView) bestMatch(q string) string {
	names := make(hostSource, len(v.order))
	for i, id := range v.order {
		names[i] = v.ix.services[id].hostname
	}
	if ms := fuzzy.FindFrom(q, names); len(ms) > 0 {
		return names[ms[0].Index]
	}
	return ""
}

// hostSource adapts a slice of hostnames to fuzzy.Source.
type hostSource []string

func (h hostSource) String(i int) string { return h[i] }
func (h hostSource) Len() int            { return len(h) }

// selectHost puts the cursor on a hostname (clearing a filter that hides it).
func (v *servicesView) selectHost(m *Model, host string) {
	v.refresh(m)
	if !v.filter.match(v.ix.byHost[host]) {
		v.setFilter(m, "")
	}
	v.c.key = host
	v.c.relocate(len(v.order), v.keyAt(m), v.rows(m))
}

func (v *servicesView) key(m *Model, k tea.KeyPressMsg) (tea.Cmd, bool) {
	h := v.rows(m)
	switch {
	case key.Matches(k, m.keys.Up):
		v.scroll(m, -1)
	case key.Matches(k, m.keys.Down):
		v.scroll(m, 1)
	case key.Matches(k, m.keys.PageUp):
		v.scroll(m, -h)
	case key.Matches(k, m.keys.PageDown):
		v.scroll(m, h)
	case key.Matches(k, m.keys.Top):
		v.scroll(m, -1<<30)
	case key.Matches(k, m.keys.Bottom):
		v.scroll(m, 1<<30)
	case key.Matches(k, m.keys.Sort):
		v.sortBy = (v.sortBy + 1) % numSortKeys
		v.resort()
		v.applyFilter()
		v.c.relocate(len(v.order), v.keyAt(m), h)
	case key.Matches(k, m.keys.Enter):
		if len(v.order) > 0 {
			m.openService(v.ix.services[v.order[v.c.cur]].hostname)
		}
	default:
		return nil, false
	}
	return nil, true
}

func (v *servicesView) scroll(m *Model, d int) {
	if len(v.order) > 0 {
		v.c.move(d, len(v.order), v.rows(m), v.keyAt(m))
	}
}

func (v *servicesView) render(m *Model, w, h int) string {
	if m.ix.snap == nil {
		return padLines([]string{"", m.st.Warn.Render("  waiting for clusters…")}, w, h)
	}
	if v.ix != m.ix {
		v.refresh(m)
	}
	ix := v.ix
	netW := max(len("EPS ")+len(strings.Join(ix.networks, "/")), 9)
	cols := []column{{title: "HOSTNAME", w: 0}}
	wide := w >= 110
	verdictW := 16
	if wide {
		verdictW = 24
	}
	if wide {
		cols = append(cols, column{title: "NAMESPACE", w: 14})
	}
	cols = append(cols,
		column{title: "PORTS", w: 11},
		column{title: "CLUSTERS", w: max(len(ix.clusterIDs), 8)},
		column{title: "EPS " + strings.Join(ix.networks, "/"), w: min(netW, 24), right: true},
		column{title: "VERDICT", w: verdictW},
	)
	cols = layoutColumns(cols, w, 20)
	if len(v.order) == 0 {
		msg := "  no services"
		if v.filter.active() {
			msg = "  no service matches /" + v.filter.query
		}
		return padLines([]string{headerLine(cols, m.st.Header, w), m.st.Muted.Render(msg)}, w, h)
	}
	lines := m.table(cols, len(v.order), &v.c, w, h-1, true, func(i int, sel bool) []string {
		id := v.order[i]
		r := &ix.services[id]
		bytes := matchedBytes(v.filter.query, r.hostname)
		out := []string{highlight(r.hostname, cols[0].w, runePositions(r.hostname, bytes), m.sel(m.st.Text, sel), m.sel(m.st.Match, sel))}
		k := 1
		if wide {
			out = append(out, cell(r.namespace, cols[1].w, m.sel(m.st.Muted, sel)))
			k = 2
		}
		out = append(out,
			cell(orDash(r.ports), cols[k].w, m.sel(m.st.Text, sel)),
			cell(r.presence, cols[k+1].w, m.sel(m.st.Text, sel)),
			m.sel(m.st.Text, sel).Render(fitRight(r.epsText, cols[k+2].w)),
			cell(r.badge(), cols[k+3].w, m.sel(m.verdictStyle(r), sel)),
		)
		return out
	})
	for len(lines) < h-1 {
		lines = append(lines, "")
	}
	lines = append(lines, m.st.Muted.Render(fit(" "+v.legend(), w)))
	return padLines(lines, w, h)
}

// legend says which cluster each presence mark stands for.
func (v *servicesView) legend() string {
	var b strings.Builder
	b.WriteString("CLUSTERS marks: ")
	for i, id := range v.ix.clusterIDs {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%d=%s", i+1, id)
	}
	b.WriteString(" · s sort · / filter · enter open")
	return b.String()
}

func (m *Model) verdictStyle(r *svcRow) lipgloss.Style {
	switch {
	case r.rank == 0:
		return m.st.Error
	case r.rank == 1:
		return m.st.Warn
	case r.verdict == "match":
		return m.st.OK
	}
	return m.st.Muted
}

// openService opens the service view on a hostname.
func (m *Model) openService(host string) {
	m.services.c.key = host
	m.service.open(m, host)
	m.push(viewService)
}
