package tui

import (
	"fmt"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/collector/explain"
	"github.com/meshscope/meshscope/collector/horizon"
	"github.com/meshscope/meshscope/xdsclient"
)

// diffView (":diff A B") compares two viewpoints across all services and
// lists only the services where they differ. Raw addresses always differ
// between networks (each sees the other's gateway), so it compares what
// each one reaches: the pods behind every endpoint it gets (actual EDS when
// the viewpoint has a stream, else the prediction).
type diffView struct {
	a, b    string
	version uint64 // snapshot the rows were computed from
	list    []diffRow
	c       cursor
}

type diffRow struct {
	host         string
	port         int32
	onlyA, onlyB []string // pods reached from one viewpoint only
}

func (r diffRow) key() string { return fmt.Sprintf("%s:%d", r.host, r.port) }

func (v *diffView) title(m *Model) string {
	return fmt.Sprintf("Diff %s ↔ %s — %d service port(s) differ", v.a, v.b, len(v.list))
}

func (v *diffView) filterable() bool         { return false }
func (v *diffView) filterQuery() string      { return "" }
func (v *diffView) setFilter(*Model, string) {}
func (v *diffView) rows(m *Model) int        { return max(m.bodyHeight()-1, 1) }
func (v *diffView) keyAt(i int) string       { return v.list[i].key() }

// openDiff handles ":diff A B".
func (m *Model) openDiff(args []string) tea.Cmd {
	pair, ok := m.viewpointArgs("diff A B", args, 2, 2)
	if !ok {
		return nil
	}
	*m.diff = diffView{a: pair[0], b: pair[1]}
	m.push(viewDiff)
	return nil
}

// refresh recomputes the rows when a new snapshot arrived (actual EDS
// changes show on the next snapshot or reopen).
func (v *diffView) refresh(m *Model) {
	snap := m.ix.snap
	if snap == nil || (v.version == snap.Version && v.list != nil) {
		v.c.relocate(len(v.list), v.keyAt, v.rows(m))
		return
	}
	v.version = snap.Version
	vps := viewpointsFor(m.feed, snap)
	va, okA := findViewpoint(vps, v.a)
	vb, okB := findViewpoint(vps, v.b)
	v.list = v.list[:0:0]
	if okA && okB {
		for _, svc := range snap.Services {
			if explain.IsGatewayService(svc) {
				continue // each network reaches its own gateway pods: expected
			}
			for _, p := range svc.Ports {
				ra := reached(m, snap, svc.Hostname, p.Port, va)
				rb := reached(m, snap, svc.Hostname, p.Port, vb)
				onlyA, onlyB := minus(ra, rb), minus(rb, ra)
				if len(onlyA)+len(onlyB) > 0 {
					v.list = append(v.list, diffRow{host: svc.Hostname, port: p.Port, onlyA: onlyA, onlyB: onlyB})
				}
			}
		}
	}
	v.c.relocate(len(v.list), v.keyAt, v.rows(m))
}

// reached is the set of pods ("pod@cluster") a viewpoint's endpoints for
// one service port stand for.
func reached(m *Model, snap *collector.Snapshot, host string, port int32, vp xdsclient.Viewpoint) map[string]bool {
	ev, actual := explainFor(m.feed, snap, host, port, vp)
	out := map[string]bool{}
	// A pod is "pod@cluster" however it is reached (directly, or behind a
	// gateway); an endpoint meshscope cannot place is its address.
	key := func(pod, cluster, addr string) string {
		if pod == "" {
			return addr + "@" + orDash(cluster)
		}
		return pod + "@" + cluster
	}
	add := func(refs []horizon.Ref, pod, cluster, addr string) {
		if len(refs) == 0 {
			out[key(pod, cluster, addr)] = true
		}
		for _, r := range refs {
			out[key(r.Pod, r.Cluster, r.Address)] = true
		}
	}
	if actual {
		for _, e := range ev.Actual {
			add(e.StandsFor, e.Pod, e.Cluster, e.Address)
		}
	} else {
		for _, e := range ev.Predicted {
			add(e.StandsFor, e.Pod, e.Cluster, e.Address)
		}
	}
	return out
}

func minus(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func (v *diffView) key(m *Model, k tea.KeyPressMsg) (tea.Cmd, bool) {
	if m.scrollKey(k, v.rows(m), func(d int) { v.scroll(m, d) }) {
		return nil, true
	}
	switch {
	case key.Matches(k, m.keys.Enter):
		if len(v.list) > 0 {
			r := v.list[v.c.cur]
			// Side by side for that service.
			*m.compare = serviceView{host: r.host, compare: []string{v.a, v.b}}
			m.push(viewCompare)
		}
	default:
		return nil, false
	}
	return nil, true
}

func (v *diffView) scroll(m *Model, d int) {
	if len(v.list) > 0 {
		v.c.move(d, len(v.list), v.rows(m), v.keyAt)
	}
}

func (v *diffView) render(m *Model, w, h int) string {
	cols := layoutColumns([]column{
		{title: "SERVICE", w: 0, grow: 2},
		{title: "PORT", w: 6, right: true},
		{title: "ONLY FROM " + strings.ToUpper(v.a), w: 0, grow: 2},
		{title: "ONLY FROM " + strings.ToUpper(v.b), w: 0, grow: 2},
	}, w, 12)
	if len(v.list) == 0 {
		return padLines([]string{headerLine(cols, m.st.Header, w), m.st.OK.Render("  both viewpoints reach the same pods for every service")}, w, h)
	}
	lines := m.table(cols, len(v.list), &v.c, w, h, true, func(i int, sel bool) []string {
		r := v.list[i]
		return []string{
			cell(strings.TrimSuffix(r.host, ".svc.cluster.local"), cols[0].w, m.sel(m.st.Text, sel)),
			m.sel(m.st.Muted, sel).Render(fitRight(fmt.Sprint(r.port), cols[1].w)),
			cell(orDash(strings.Join(r.onlyA, ", ")), cols[2].w, m.sel(m.st.Warn, sel)),
			cell(orDash(strings.Join(r.onlyB, ", ")), cols[3].w, m.sel(m.st.Warn, sel)),
		}
	})
	return padLines(lines, w, h)
}
