package tui

import (
	"fmt"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/meshscope/meshscope/internal/humanize"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// maxEvents bounds the timeline; older entries are forgotten.
const maxEvents = 10000

// eventsView is the live timeline, newest first: xDS events and the kube
// changes meshscope saw, each EDS push linked to the kube change that
// caused it.
type eventsView struct {
	list    listState
	all     []entry // oldest first, at most maxEvents
	pending []entry // arrived while paused
	paused  bool
	nextID  uint64
	// lastKube is the latest kube change per subject (service hostname,
	// or "gateway"); causes links an EDS push (by entry id) to the kube
	// change that caused it.
	lastKube map[string]*model.KubeChange
	causes   map[uint64]causeInfo
	// lastDNS is the latest new answer per gateway DNS name.
	lastDNS map[string]*model.KubeChange
}

// causeInfo is the kube change behind a push: a short form for the row, a
// long one for the detail pane.
type causeInfo struct {
	short, long string
	// name is the gateway DNS name whose new answer caused the push ("":
	// a kube change did).
	name string
}

func newEventsView() *eventsView {
	v := &eventsView{lastKube: map[string]*model.KubeChange{}, causes: map[uint64]causeInfo{}, lastDNS: map[string]*model.KubeChange{}}
	v.list.keyOf = func(i int32) string { return strconv.FormatUint(v.all[i].id, 10) }
	return v
}

func (v *eventsView) title(viewContext) string {
	t := fmt.Sprintf("Events (%d", len(v.list.rows))
	if v.list.query != "" {
		t += fmt.Sprintf(" of %d · /%s", len(v.all), v.list.query)
	}
	t += ")"
	if v.paused {
		t += fmt.Sprintf(" · PAUSED, %d new", len(v.pending))
	}
	return t
}

func (v *eventsView) filterQuery() string { return v.list.query }

func (v *eventsView) setFilter(vc viewContext, q string) {
	v.list.query = q
	v.rebuild(vc)
}

// detailHeight is the height of the pane under the timeline that shows
// the selected entry in full.
func detailHeight(h int) int { return min(8, h/3) }

// rows is the number of timeline rows on screen.
func (v *eventsView) rows(vc viewContext) int {
	return max(vc.height-detailHeight(vc.height)-1, 1)
}

func (v *eventsView) refresh(vc viewContext, u update) {
	if len(u.entries) == 0 {
		v.list.show(v.list.rows, v.rows(vc))
		return
	}
	v.add(vc, u.entries)
}

// add appends entries (or holds them while paused).
func (v *eventsView) add(vc viewContext, es []entry) {
	if v.paused {
		for _, e := range es {
			v.pending = append(v.pending, e.compact())
		}
		if over := len(v.pending) - maxEvents; over > 0 {
			v.pending = v.pending[over:]
		}
		return
	}
	for _, e := range es {
		e = e.compact()
		v.nextID++
		e.id = v.nextID
		switch {
		case e.kube != nil && e.kube.IsDNS():
			v.lastDNS[e.kube.GatewayName] = e.kube
			v.linkBack(e.kube)
		case e.kube != nil:
			v.lastKube[e.subject()] = e.kube
		case e.isEDS() || e.isWDS():
			if k, d, ok := cause(e.xds, v.lastKube, v.lastDNS); ok {
				v.causes[e.id] = causeInfo{short: causeText(k, d), long: causeText(k, d) + " " + k.Summary(), name: k.GatewayName}
			}
		}
		v.all = append(v.all, e)
	}
	if over := len(v.all) - maxEvents; over > 0 {
		for _, e := range v.all[:over] {
			delete(v.causes, e.id)
		}
		v.all = append(v.all[:0:0], v.all[over:]...)
	}
	v.rebuild(vc)
}

// linkBack links a gateway DNS name's new answer to the EDS pushes istiod
// sent for it before meshscope saw it (istiod asked DNS again first):
// pushes of the last dnsLookback with no cause yet whose endpoint changes
// are at the name's old or new addresses. Their delay is negative.
func (v *eventsView) linkBack(k *model.KubeChange) {
	for i := len(v.all) - 1; i >= 0; i-- {
		e := v.all[i]
		if k.Time.Sub(e.time()) > dnsLookback {
			break
		}
		if _, ok := v.causes[e.id]; ok || e.xds == nil || !dnsCaused(e.xds, k) {
			continue
		}
		d := e.xds.Time.Sub(k.Time)
		v.causes[e.id] = causeInfo{short: causeText(k, d), long: causeText(k, d) + " " + k.Summary(), name: k.GatewayName}
	}
}

// matches reports whether an entry passes the filter: every word of the
// query is a case-insensitive substring of its type (eds, kube, nack...),
// viewpoint, control plane or cluster, or the services it concerns — so
// "eds helloworld" or "network2 nack" narrow the timeline.
func (v *eventsView) matches(e entry) bool {
	if v.list.query == "" {
		return true
	}
	hay := e.haystack()
	if c, ok := v.causes[e.id]; ok && c.name != "" {
		// A push is found by the DNS name that caused it too:
		// /gw2.example.com lists a name's new answer and its pushes.
		hay += " " + strings.ToLower(c.name)
	}
	for _, w := range strings.Fields(strings.ToLower(v.list.query)) {
		if !strings.Contains(hay, w) {
			return false
		}
	}
	return true
}

// rebuild lists the entries that pass the filter, newest first.
func (v *eventsView) rebuild(vc viewContext) {
	rows := v.list.rows[:0]
	for i := len(v.all) - 1; i >= 0; i-- {
		if v.matches(v.all[i]) {
			rows = append(rows, int32(i))
		}
	}
	v.list.show(rows, v.rows(vc))
}

func (v *eventsView) key(vc viewContext, k tea.KeyPressMsg) (tea.Cmd, bool) {
	if key.Matches(k, vc.keys.Pause) {
		v.paused = !v.paused
		if !v.paused && len(v.pending) > 0 {
			p := v.pending
			v.pending = nil
			v.add(vc, p)
		}
		return nil, true
	}
	return nil, v.list.scrollKey(vc.keys, k, v.rows(vc))
}

func (v *eventsView) scroll(vc viewContext, d int) { v.list.moveBy(d, v.rows(vc)) }

func (v *eventsView) render(vc viewContext, w, h int) string {
	cols := layoutColumns([]column{
		{title: "TIME", w: 8},
		{title: "SOURCE", w: 16},
		{title: "VIEWPOINT", w: 0},
		{title: "TYPE", w: 10},
		{title: "VERSION", w: 12},
		{title: "RES", w: 5, right: true},
		{title: "SIZE", w: 7, right: true},
		{title: "CHANGES", w: 0},
	}, w, 14)
	if len(v.list.rows) == 0 {
		lines := vc.emptyLines("  no events yet", w)
		if v.list.query != "" {
			lines = []string{vc.st.Muted.Render("  no event matches /" + v.list.query)}
		}
		return padLines(append([]string{headerLine(cols, vc.st.Header, w)}, lines...), w, h)
	}
	dh := detailHeight(h)
	lines := vc.table(cols, &v.list, w, h-dh, true, func(id int32, sel bool) []string {
		e := v.all[id]
		changes := changesText(e)
		if c, ok := v.causes[e.id]; ok {
			changes = c.short + " · " + changes
		}
		vp, version, res, size := "-", "-", "-", "-"
		if x := e.xds; x != nil {
			vp, version = orDash(x.Viewpoint), orDash(x.Version)
			if isPush(x) {
				res, size = strconv.Itoa(x.Resources), humanize.Bytes(x.Bytes)
			}
		}
		return []string{
			cell(e.time().Format("15:04:05"), cols[0].w, vc.sel(vc.st.Muted, sel)),
			cell(e.source(), cols[1].w, vc.sel(vc.st.Text, sel)),
			cell(vp, cols[2].w, vc.sel(vc.st.Text, sel)),
			cell(e.kind(), cols[3].w, vc.sel(v.kindStyle(vc, e), sel)),
			cell(version, cols[4].w, vc.sel(vc.st.Muted, sel)),
			vc.sel(vc.st.Text, sel).Render(fitRight(res, cols[5].w)),
			vc.sel(vc.st.Muted, sel).Render(fitRight(size, cols[6].w)),
			cell(changes, cols[7].w, vc.sel(vc.st.Text, sel)),
		}
	})
	for len(lines) < h-dh {
		lines = append(lines, "")
	}
	if id, ok := v.list.selected(); ok {
		lines = append(lines, v.detail(vc, v.all[id], w, dh)...)
	}
	return padLines(lines, w, h)
}

// isPush reports whether an xDS event is a response (it has resources and
// a size), not a stream state.
func isPush(e *xdsclient.Event) bool {
	switch xdsclient.Type(e.Type) {
	case xdsclient.CDS, xdsclient.EDS, xdsclient.LDS, xdsclient.RDS, xdsclient.WDS:
		return true
	}
	return false
}

// kindStyle colours the TYPE column.
func (v *eventsView) kindStyle(vc viewContext, e entry) lipgloss.Style {
	if e.kube != nil {
		return vc.st.Warn
	}
	switch e.xds.Type {
	case xdsclient.EventNACK, xdsclient.EventError, xdsclient.EventDisconnect:
		return vc.st.Error
	case xdsclient.EventConnect, xdsclient.EventReconnect:
		return vc.st.OK
	}
	if e.isEDS() || e.isWDS() {
		return vc.st.Accent
	}
	return vc.st.Text
}

// detail shows the selected entry in full: what changed, or why it failed.
func (v *eventsView) detail(vc viewContext, e entry, w, h int) []string {
	if h <= 0 {
		return nil
	}
	var title string
	if k := e.kube; k != nil && k.IsDNS() {
		title = fmt.Sprintf("%s dns · gateway name %s · %s (cluster %s)", k.Time.Format("15:04:05.000"), k.GatewayName, k.Network, k.Cluster)
	} else if k != nil {
		title = fmt.Sprintf("%s kube · cluster %s · %s", k.Time.Format("15:04:05.000"), k.Cluster, e.subject())
	} else {
		x := e.xds
		title = fmt.Sprintf("%s %s · %s → %s", x.Time.Format("15:04:05.000"), x.Type, orDash(x.ControlPlane), orDash(x.Viewpoint))
		if x.Version != "" {
			title += " · version " + x.Version
		}
		if x.Nonce != "" {
			title += " · nonce " + x.Nonce
		}
	}
	out := []string{vc.st.Header.Render(fit("─ "+title+" ", w))}
	add := func(st lipgloss.Style, s string) {
		for _, l := range wrap(s, w-2) {
			out = append(out, " "+st.Render(l))
		}
	}
	names := func(what string, ns []string) {
		if len(ns) > 0 {
			add(vc.st.Muted, what+": "+strings.Join(ns, ", "))
		}
	}
	if k := e.kube; k != nil {
		add(vc.st.Text, k.Summary())
		if k.IsDNS() {
			add(vc.st.Muted, "the answer meshscope got; istiod pushes the gateways it gives when its own cached answer runs out")
		}
		names("endpoints added", k.Added)
		names("endpoints removed", k.Removed)
		names("became ready", k.Ready)
		names("stopped being ready", k.NotReady)
	} else {
		v.xdsDetail(vc, e, add, names)
	}
	if len(out) > h {
		out = out[:h]
	}
	return out
}

func (v *eventsView) xdsDetail(vc viewContext, e entry, add func(lipgloss.Style, string), names func(string, []string)) {
	x := e.xds
	if x.Error != "" {
		add(vc.st.Error, x.Error)
	}
	if x.Message != "" {
		add(vc.st.Text, x.Message)
	}
	if c, ok := v.causes[e.id]; ok {
		what := "the kube change "
		if c.name != "" {
			what = "the DNS answer "
		}
		add(vc.st.Warn, "caused by "+what+c.long)
	}
	if e.eps.total > len(x.Endpoints) {
		add(vc.st.Muted, fmt.Sprintf("%d endpoint changes; the first %d:", e.eps.total, len(x.Endpoints)))
	}
	for _, c := range x.Endpoints {
		line := fmt.Sprintf("%-7s %s:%d w%d %s", c.Change, c.Address, c.Port, c.Weight, c.Cluster)
		if c.Change == xdsclient.EndpointWeight {
			line = fmt.Sprintf("%-7s %s:%d w%d→%d %s", c.Change, c.Address, c.Port, c.OldWeight, c.Weight, c.Cluster)
		}
		if c.Workload != "" || c.WorkloadCluster != "" {
			line += fmt.Sprintf(" (%s %s)", orDash(c.Workload), c.WorkloadCluster)
		}
		add(vc.st.Text, line)
	}
	for _, a := range x.Addresses {
		add(vc.st.Text, fmt.Sprintf("%-7s %s", a.Change, a.Summary()))
	}
	if len(x.Addresses) > 0 {
		return // the same names, with what they are
	}
	names("added", x.Added)
	names("removed", x.Removed)
	names("changed", x.Changed)
}
