package tui

import (
	"fmt"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// diffView (":diff A B") compares two viewpoints across all services and
// lists only the services where they differ. Raw addresses always differ
// between networks (each sees the other's gateway), so it compares what
// each one reaches: the pods behind every endpoint it gets (actual EDS when
// the viewpoint has a stream, else the prediction).
type diffView struct {
	a, b  string
	diffs []diffRow
	list  listState // rows: indexes into diffs
	// stale: the index changed since diffs were computed; they are
	// computed again when next drawn (only an open diff pays for it).
	stale bool
}

type diffRow struct {
	host         string
	port         int32
	onlyA, onlyB []string // pods reached from one viewpoint only
}

func (r diffRow) key() string { return model.HostPort(r.host, r.port) }

func newDiffView() *diffView {
	v := &diffView{}
	v.list.keyOf = func(i int32) string { return v.diffs[i].key() }
	return v
}

func (v *diffView) title(vc viewContext) string {
	v.compute(vc) // the header is drawn before the body
	t := fmt.Sprintf("Diff %s ↔ %s — %d service port(s) differ", v.a, v.b, len(v.diffs))
	for _, n := range []string{v.a, v.b} {
		if s, ok := streamOf(vc.status, n); ok && s.Stale {
			t += " · " + n + " " + staleText(vc.now(), s)
		}
	}
	return t
}

func (v *diffView) rows(vc viewContext) int { return max(vc.height-1, 1) }

// open starts comparing two viewpoints (by name).
func (v *diffView) open(vc viewContext, a, b string) {
	*v = diffView{a: a, b: b, list: listState{keyOf: v.list.keyOf}, stale: true}
	v.compute(vc)
}

// refresh follows a new index: a new snapshot, or the actual EDS changed
// (pushes are folded into the next index, at most once a second).
func (v *diffView) refresh(vc viewContext, u update) {
	if u.index {
		v.stale = true
	}
	v.list.show(v.list.rows, v.rows(vc))
}

// compute lists the service ports where the two viewpoints reach different
// pods, when the index changed since the last time.
func (v *diffView) compute(vc viewContext) {
	snap := vc.ix.snap
	if !v.stale || v.a == "" || snap == nil {
		return
	}
	v.stale = false
	vps := vc.viewpoints()
	va, okA := findViewpoint(vps, v.a)
	vb, okB := findViewpoint(vps, v.b)
	v.diffs = v.diffs[:0:0]
	if okA && okB {
		for _, svc := range snap.Services {
			if explain.IsGatewayService(svc) {
				continue // each network reaches its own gateway pods: expected
			}
			for _, p := range svc.Ports {
				ra := reached(vc.feed, vc.ix, svc.Hostname, p.Port, va)
				rb := reached(vc.feed, vc.ix, svc.Hostname, p.Port, vb)
				onlyA, onlyB := minus(ra, rb), minus(rb, ra)
				if len(onlyA)+len(onlyB) > 0 {
					v.diffs = append(v.diffs, diffRow{host: svc.Hostname, port: p.Port, onlyA: onlyA, onlyB: onlyB})
				}
			}
		}
	}
	v.list.show(identity(v.list.rows, len(v.diffs)), v.rows(vc))
}

// reached is the set of pods ("pod@cluster") a viewpoint's endpoints for
// one service port stand for.
func reached(feed Feed, ix *index, host string, port int32, vp xdsclient.Viewpoint) map[string]bool {
	ev, actual := explainFor(feed, ix.planes, ix.hops, host, "", port, vp)
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

func (v *diffView) key(vc viewContext, k tea.KeyPressMsg) (tea.Cmd, bool) {
	v.compute(vc)
	if !key.Matches(k, vc.keys.Enter) {
		return nil, v.list.scrollKey(vc.keys, k, v.rows(vc))
	}
	if id, ok := v.list.selected(); ok {
		// Side by side for that service.
		return navigate(openCompareMsg{host: v.diffs[id].host, pair: []string{v.a, v.b}}), true
	}
	return nil, true
}

func (v *diffView) scroll(vc viewContext, d int) { v.list.moveBy(d, v.rows(vc)) }

func (v *diffView) render(vc viewContext, w, h int) string {
	v.compute(vc)
	cols := layoutColumns([]column{
		{title: "SERVICE", w: 0, grow: 2},
		{title: "PORT", w: 6, right: true},
		{title: "ONLY FROM " + strings.ToUpper(v.a), w: 0, grow: 2},
		{title: "ONLY FROM " + strings.ToUpper(v.b), w: 0, grow: 2},
	}, w, 12)
	if len(v.diffs) == 0 {
		return padLines([]string{headerLine(cols, vc.st.Header, w), vc.st.OK.Render("  both viewpoints reach the same pods for every service")}, w, h)
	}
	lines := vc.table(cols, &v.list, w, h, true, func(i int32, sel bool) []string {
		r := v.diffs[i]
		return []string{
			cell(model.ShortHost(r.host), cols[0].w, vc.sel(vc.st.Text, sel)),
			vc.sel(vc.st.Muted, sel).Render(fitRight(fmt.Sprint(r.port), cols[1].w)),
			cell(orDash(strings.Join(r.onlyA, ", ")), cols[2].w, vc.sel(vc.st.Warn, sel)),
			cell(orDash(strings.Join(r.onlyB, ", ")), cols[3].w, vc.sel(vc.st.Warn, sel)),
		}
	})
	return padLines(lines, w, h)
}
