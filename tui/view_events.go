package tui

import (
	"fmt"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/meshscope/meshscope/xdsclient"
)

// maxEvents bounds the timeline; older events are forgotten.
const maxEvents = 10000

// eventsView is the live timeline of xDS events, newest first.
type eventsView struct {
	all     []xdsclient.Event // oldest first, at most maxEvents
	pending []xdsclient.Event // arrived while paused
	paused  bool
	query   string
	order   []int // indexes into all, newest first, filtered
	c       cursor
	// lastKube is the latest kube change per service hostname ("gateway"
	// for gateways); causes links an EDS push (by eventKey) to the kube
	// change that caused it.
	lastKube map[string]xdsclient.Event
	causes   map[string]causeInfo
}

// causeInfo is the kube change behind a push: a short form for the row, a
// long one for the detail pane.
type causeInfo struct{ short, long string }

func newEventsView() *eventsView {
	return &eventsView{lastKube: map[string]xdsclient.Event{}, causes: map[string]causeInfo{}}
}

func eventKey(e xdsclient.Event) string {
	return e.ControlPlane + "|" + e.Viewpoint + "|" + strconv.FormatUint(e.Seq, 10)
}

func (v *eventsView) title(m *Model) string {
	t := fmt.Sprintf("Events (%d", len(v.order))
	if v.query != "" {
		t += fmt.Sprintf(" of %d · /%s", len(v.all), v.query)
	}
	t += ")"
	if v.paused {
		t += fmt.Sprintf(" · PAUSED, %d new", len(v.pending))
	}
	return t
}

func (v *eventsView) filterable() bool    { return true }
func (v *eventsView) filterQuery() string { return v.query }

func (v *eventsView) setFilter(m *Model, q string) {
	v.query = q
	v.rebuild()
	v.c.relocate(len(v.order), v.keyAt, v.rows(m))
}

func (v *eventsView) keyAt(i int) string { return eventKey(v.all[v.order[i]]) }

// detailHeight is the height of the pane under the timeline that shows
// the selected event in full.
func detailHeight(h int) int { return min(8, h/3) }

// rows is the number of timeline rows on screen.
func (v *eventsView) rows(m *Model) int {
	h := m.bodyHeight()
	return max(h-detailHeight(h)-1, 1)
}

// add appends events (or holds them while paused).
func (v *eventsView) add(m *Model, evs []xdsclient.Event) {
	if v.paused {
		v.pending = append(v.pending, evs...)
		if over := len(v.pending) - maxEvents; over > 0 {
			v.pending = v.pending[over:]
		}
		return
	}
	for _, e := range evs {
		switch e.Type {
		case EventKube:
			v.lastKube[e.Viewpoint] = e
		case "eds":
			if k, d, ok := cause(e, v.lastKube); ok {
				v.causes[eventKey(e)] = causeInfo{short: causeText(k, d), long: causeText(k, d) + " " + k.Message}
			}
		}
	}
	v.all = append(v.all, evs...)
	if over := len(v.all) - maxEvents; over > 0 {
		for _, e := range v.all[:over] {
			delete(v.causes, eventKey(e))
		}
		v.all = append(v.all[:0:0], v.all[over:]...)
	}
	v.rebuild()
	v.c.relocate(len(v.order), v.keyAt, v.rows(m))
}

// matches reports whether an event passes the filter: every word of the
// query is a case-insensitive substring of its type (eds, kube, nack...),
// viewpoint, control plane (or cluster), or the services it changed — so
// "eds helloworld" or "network2 nack" narrow the timeline.
func (v *eventsView) matches(e xdsclient.Event) bool {
	if v.query == "" {
		return true
	}
	hay := strings.ToLower(string(e.Type) + " " + e.Viewpoint + " " + e.ControlPlane + " " + strings.Join(e.Changed, " ") + " " + strings.Join(e.Added, " ") + " " + strings.Join(e.Removed, " "))
	for _, w := range strings.Fields(strings.ToLower(v.query)) {
		if !strings.Contains(hay, w) {
			return false
		}
	}
	return true
}

func (v *eventsView) rebuild() {
	v.order = v.order[:0]
	for i := len(v.all) - 1; i >= 0; i-- {
		if v.matches(v.all[i]) {
			v.order = append(v.order, i)
		}
	}
}

func (v *eventsView) refresh(m *Model) {
	v.c.relocate(len(v.order), v.keyAt, v.rows(m))
}

func (v *eventsView) key(m *Model, k tea.KeyPressMsg) (tea.Cmd, bool) {
	switch {
	case key.Matches(k, m.keys.Pause):
		v.paused = !v.paused
		if !v.paused && len(v.pending) > 0 {
			p := v.pending
			v.pending = nil
			v.add(m, p)
		}
	case key.Matches(k, m.keys.Up):
		v.scroll(m, -1)
	case key.Matches(k, m.keys.Down):
		v.scroll(m, 1)
	case key.Matches(k, m.keys.PageUp):
		v.scroll(m, -v.rows(m))
	case key.Matches(k, m.keys.PageDown):
		v.scroll(m, v.rows(m))
	case key.Matches(k, m.keys.Top):
		v.scroll(m, -1<<30)
	case key.Matches(k, m.keys.Bottom):
		v.scroll(m, 1<<30)
	default:
		return nil, false
	}
	return nil, true
}

func (v *eventsView) scroll(m *Model, d int) {
	if len(v.order) > 0 {
		v.c.move(d, len(v.order), v.rows(m), v.keyAt)
	}
}

func (v *eventsView) render(m *Model, w, h int) string {
	cols := layoutColumns([]column{
		{title: "TIME", w: 8},
		{title: "CONTROL PLANE", w: 16},
		{title: "VIEWPOINT", w: 0},
		{title: "TYPE", w: 10},
		{title: "VERSION", w: 12},
		{title: "RES", w: 5, right: true},
		{title: "SIZE", w: 7, right: true},
		{title: "CHANGES", w: 0},
	}, w, 14)
	if len(v.order) == 0 {
		msg := "  no xDS events yet"
		if v.query != "" {
			msg = "  no event matches /" + v.query
		}
		return padLines([]string{headerLine(cols, m.st.Header, w), m.st.Muted.Render(msg)}, w, h)
	}
	dh := detailHeight(h)
	lines := m.table(cols, len(v.order), &v.c, w, h-dh, true, func(i int, sel bool) []string {
		e := v.all[v.order[i]]
		tst := m.st.Text
		switch e.Type {
		case xdsclient.EventNACK, xdsclient.EventError, xdsclient.EventDisconnect:
			tst = m.st.Error
		case xdsclient.EventConnect, xdsclient.EventReconnect:
			tst = m.st.OK
		case "eds":
			tst = m.st.Accent
		case EventKube:
			tst = m.st.Warn
		}
		changes := changesText(e)
		if c, ok := v.causes[eventKey(e)]; ok {
			changes = c.short + " · " + changes
		}
		return []string{
			cell(e.Time.Format("15:04:05"), cols[0].w, m.sel(m.st.Muted, sel)),
			cell(e.ControlPlane, cols[1].w, m.sel(m.st.Text, sel)),
			cell(e.Viewpoint, cols[2].w, m.sel(m.st.Text, sel)),
			cell(string(e.Type), cols[3].w, m.sel(tst, sel)),
			cell(orDash(e.Version), cols[4].w, m.sel(m.st.Muted, sel)),
			m.sel(m.st.Text, sel).Render(fitRight(strconv.Itoa(e.Resources), cols[5].w)),
			m.sel(m.st.Muted, sel).Render(fitRight(sizeText(e.Bytes), cols[6].w)),
			cell(changes, cols[7].w, m.sel(m.st.Text, sel)),
		}
	})
	for len(lines) < h-dh {
		lines = append(lines, "")
	}
	lines = append(lines, v.detail(m, v.all[v.order[v.c.cur]], w, dh)...)
	return padLines(lines, w, h)
}

// detail shows the selected event in full: what changed, or why it failed.
func (v *eventsView) detail(m *Model, e xdsclient.Event, w, h int) []string {
	if h <= 0 {
		return nil
	}
	title := fmt.Sprintf("%s %s · %s → %s", e.Time.Format("15:04:05.000"), e.Type, orDash(e.ControlPlane), orDash(e.Viewpoint))
	if e.Version != "" {
		title += " · version " + e.Version
	}
	if e.Nonce != "" {
		title += " · nonce " + e.Nonce
	}
	out := []string{m.st.Header.Render(fit("─ "+title+" ", w))}
	add := func(st lipgloss.Style, s string) {
		for _, l := range wrap(s, w-2) {
			out = append(out, " "+st.Render(l))
		}
	}
	if e.Error != "" {
		add(m.st.Error, e.Error)
	}
	if e.Message != "" {
		add(m.st.Text, e.Message)
	}
	if c, ok := v.causes[eventKey(e)]; ok {
		add(m.st.Warn, "caused by the kube change "+c.long)
	}
	for _, c := range e.Endpoints {
		line := fmt.Sprintf("%-7s %s:%d w%d %s", c.Change, c.Address, c.Port, c.Weight, c.Cluster)
		if c.Change == xdsclient.EndpointWeight {
			line = fmt.Sprintf("%-7s %s:%d w%d→%d %s", c.Change, c.Address, c.Port, c.OldWeight, c.Weight, c.Cluster)
		}
		if c.Pod != "" || c.WorkloadCluster != "" {
			line += fmt.Sprintf(" (%s %s)", orDash(c.Pod), c.WorkloadCluster)
		}
		add(m.st.Text, line)
	}
	names := func(what string, ns []string) {
		if len(ns) > 0 {
			add(m.st.Muted, what+": "+strings.Join(ns, ", "))
		}
	}
	names("added", e.Added)
	names("removed", e.Removed)
	names("changed", e.Changed)
	if len(out) > h {
		out = out[:h]
	}
	return out
}

func sizeText(b int) string {
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%.1fM", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1fk", float64(b)/(1<<10))
	}
	return strconv.Itoa(b)
}

// changesText summarizes what an event changed: endpoint changes of an EDS
// push, resources added/removed/changed, or the sentence of a state event.
func changesText(e xdsclient.Event) string {
	if e.Error != "" {
		return e.Error
	}
	var parts []string
	if len(e.Endpoints) > 0 {
		counts := map[string]int{}
		for _, c := range e.Endpoints {
			counts[c.Change]++
		}
		parts = append(parts, fmt.Sprintf("endpoints +%d -%d ~%d w%d", counts[xdsclient.EndpointAdded], counts[xdsclient.EndpointRemoved],
			counts[xdsclient.EndpointChanged], counts[xdsclient.EndpointWeight]))
		c := e.Endpoints[0]
		parts = append(parts, fmt.Sprintf("%s %s:%d", c.Change, c.Address, c.Port))
	}
	if len(e.Added)+len(e.Removed)+len(e.Changed) > 0 {
		parts = append(parts, fmt.Sprintf("res +%d -%d ~%d", len(e.Added), len(e.Removed), len(e.Changed)))
	}
	if len(parts) == 0 && e.Message != "" {
		return e.Message
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " · ")
}
