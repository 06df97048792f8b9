package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/collector/explain"
	"github.com/meshscope/meshscope/collector/horizon"
	"github.com/meshscope/meshscope/xdsclient"
)

// serviceView shows, for one service port, what every viewpoint gets:
// one column per viewpoint with the actual endpoints (kind, weight, health,
// what each stands for), the predicted ones not sent, the dropped ones
// with reasons, and explain's sentences for every difference.
type serviceView struct {
	// compare names two viewpoints for the compare view (":compare A B");
	// empty for the service view (every viewpoint).
	compare []string
	host    string
	port    int // index into the service's ports
	focus   int // focused viewpoint column
	off     int // first line shown of the columns
	ix      *index
	vps     []xdsclient.Viewpoint
	views   []explain.View
	svc     *collector.Service
}

// minColumn is the narrowest viewpoint column.
const minColumn = 38

func (v *serviceView) open(m *Model, host string) {
	*v = serviceView{host: host}
	v.refresh(m)
}

func (v *serviceView) title(m *Model) string {
	if v.compare != nil {
		return "Compare " + strings.Join(v.compare, " ⇄ ") + " · " + v.host
	}
	return "Service " + v.host
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

// openCompare opens ":compare A B" for the selected service.
func (m *Model) openCompare(args []string) tea.Cmd {
	pair, ok := m.viewpointArgs("compare A B", args, 2, 2)
	if !ok {
		return nil
	}
	host := ""
	switch {
	case m.currentID() == viewService || m.currentID() == viewCompare:
		host = m.current().(*serviceView).host
	case m.services.c.key != "":
		host = m.services.c.key
	case m.ix.snap != nil && len(m.ix.snap.Services) > 0:
		host = m.ix.snap.Services[0].Hostname
	}
	if host == "" {
		m.setFlash("no service to compare yet", true)
		return nil
	}
	*m.compare = serviceView{host: host, compare: pair}
	m.push(viewCompare)
	return nil
}

// viewpointArgs resolves the viewpoint arguments of a command (":compare
// A B", ":diff A B", ":pc A [B]") to viewpoint names, or flashes its usage.
func (m *Model) viewpointArgs(usage string, args []string, least, most int) ([]string, bool) {
	names := m.viewpointNames()
	if len(args) < least || len(args) > most {
		m.setFlash("usage: :"+usage+" (viewpoints: "+strings.Join(names, ", ")+")", true)
		return nil, false
	}
	vps := viewpointsFor(m.feed, m.ix.snap)
	var out []string
	for _, a := range args {
		vp, ok := findViewpoint(vps, a)
		if !ok {
			m.setFlash(fmt.Sprintf("no single viewpoint %q (viewpoints: %s)", a, strings.Join(names, ", ")), true)
			return nil, false
		}
		out = append(out, vp.String())
	}
	return out, true
}

func (v *serviceView) filterable() bool         { return false }
func (v *serviceView) filterQuery() string      { return "" }
func (v *serviceView) setFilter(*Model, string) {}

// refresh recomputes the views from the index and the feed's actual EDS.
func (v *serviceView) refresh(m *Model) {
	v.ix = m.ix
	v.svc = m.ix.snap.Service(v.host)
	v.views = v.views[:0]
	v.vps = viewpointsFor(m.feed, m.ix.snap)
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
		ev, actual := explainFor(m.feed, m.ix.snap, v.host, port, vp)
		if !actual {
			ev.Error = v.streamText(m, vp.String())
		}
		v.views = append(v.views, ev)
	}
	v.focus = min(max(v.focus, 0), max(len(v.views)-1, 0))
}

func (v *serviceView) streamText(m *Model, vp string) string {
	for _, s := range m.status {
		if s.Viewpoint == vp {
			t := "no EDS received yet (stream " + s.Text()
			if s.Stale {
				t += ", stale"
			}
			return t + ")"
		}
	}
	return "no EDS received yet (no xDS stream for this viewpoint)"
}

func (v *serviceView) key(m *Model, k tea.KeyPressMsg) (tea.Cmd, bool) {
	switch {
	case key.Matches(k, m.keys.Left):
		v.focus = max(v.focus-1, 0)
	case key.Matches(k, m.keys.Right), key.Matches(k, m.keys.Tab):
		if len(v.views) > 0 {
			if k.String() == "shift+tab" {
				v.focus = (v.focus + len(v.views) - 1) % len(v.views)
			} else if key.Matches(k, m.keys.Tab) {
				v.focus = (v.focus + 1) % len(v.views)
			} else {
				v.focus = min(v.focus+1, len(v.views)-1)
			}
		}
	case key.Matches(k, m.keys.NextPort), key.Matches(k, m.keys.PrevPort):
		if v.svc != nil && len(v.svc.Ports) > 1 {
			d := 1
			if key.Matches(k, m.keys.PrevPort) {
				d = len(v.svc.Ports) - 1
			}
			v.port = (v.port + d) % len(v.svc.Ports)
			v.off = 0
			v.refresh(m)
		}
	case key.Matches(k, m.keys.Up):
		v.scroll(m, -1)
	case key.Matches(k, m.keys.Down):
		v.scroll(m, 1)
	case key.Matches(k, m.keys.PageUp):
		v.scroll(m, -m.bodyHeight()+3)
	case key.Matches(k, m.keys.PageDown):
		v.scroll(m, m.bodyHeight()-3)
	case key.Matches(k, m.keys.Top):
		v.off = 0
	default:
		return nil, false
	}
	return nil, true
}

func (v *serviceView) scroll(_ *Model, d int) {
	v.off = max(v.off+d, 0) // clamped when drawn
}

func (v *serviceView) render(m *Model, w, h int) string {
	if v.ix != m.ix {
		v.refresh(m)
	}
	if v.svc == nil {
		return padLines([]string{"", m.st.Warn.Render("  service " + v.host + " is not in the latest snapshot")}, w, h)
	}
	lines := []string{v.portLine(m, w)}
	if len(v.svc.Ports) == 0 {
		lines = append(lines, m.st.Muted.Render("  the service has no ports"))
		return padLines(lines, w, h)
	}
	if len(v.views) == 0 {
		lines = append(lines, m.st.Muted.Render("  no viewpoints: the mesh has no network yet"))
		return padLines(lines, w, h)
	}
	// Which columns fit, around the focused one.
	n := len(v.views)
	k := min(n, max(1, (w+1)/(minColumn+1)))
	first := min(max(v.focus-k/2, 0), n-k)
	cw := (w - (k - 1)) / k
	cols := make([][]string, k)
	longest := 0
	for i := 0; i < k; i++ {
		cols[i] = v.column(m, first+i, cw)
		longest = max(longest, len(cols[i]))
	}
	body := h - 1
	head := 2 // viewpoint name and verdict stay while scrolling
	v.off = min(v.off, max(longest-body, 0))
	sep := m.st.Border.Render("│")
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

func (v *serviceView) portLine(m *Model, w int) string {
	var b strings.Builder
	b.WriteString(m.st.Muted.Render(" port "))
	for i, p := range v.svc.Ports {
		t := fmt.Sprintf("%d", p.Port)
		if p.Name != "" {
			t += "/" + p.Name
		}
		if i == v.port {
			b.WriteString(m.st.Accent.Render("[" + t + "]"))
		} else {
			b.WriteString(m.st.Muted.Render(" " + t + " "))
		}
		b.WriteString(" ")
	}
	hint := fmt.Sprintf(" %s · %d viewpoints · [ ] port · ←/→ viewpoint · esc back", v.svc.Namespace, len(v.views))
	b.WriteString(m.st.Muted.Render(hint))
	return padLines([]string{b.String()}, w, 1)
}

func kindStyle(m *Model, k horizon.Kind) lipgloss.Style {
	switch k {
	case horizon.Local:
		return m.st.Local
	case horizon.Gateway:
		return m.st.Gateway
	case horizon.Leaked:
		return m.st.Leaked
	case horizon.Forced:
		return m.st.Forced
	}
	return m.st.Muted
}

// maxStands bounds the pods listed under one gateway endpoint.
const maxStands = 4

// column renders one viewpoint's column as lines of at most w cells.
func (v *serviceView) column(m *Model, i, w int) []string {
	ev := v.views[i]
	focused := i == v.focus
	var out []string
	name := ev.Viewpoint.Name
	if ev.Viewpoint.ControlPlane != "" {
		name += " @ " + ev.Viewpoint.ControlPlane
	}
	if focused {
		out = append(out, m.st.Accent.Render(fit("▌"+name, w)))
	} else {
		out = append(out, m.st.Header.Render(fit(" "+name, w)))
	}
	verdict := string(ev.Verdict)
	vst := m.st.Muted
	switch ev.Verdict {
	case explain.Match:
		vst = m.st.OK
	case explain.Mismatch:
		vst = m.st.Error
		verdict += " (" + plural(len(ev.Differences), "difference") + ")"
	case explain.Pending:
		vst = m.st.Warn
	}
	out = append(out, m.st.Muted.Render(" verdict ")+vst.Render(fit(verdict, max(w-9, 0))))

	bad := map[string]bool{}
	for _, d := range ev.Differences {
		bad[fmt.Sprintf("%s:%d", d.Address, d.Port)] = true
	}
	endpoint := func(kind horizon.Kind, addr string, port, weight uint32, health horizon.Health, pod, cluster string, stands []horizon.Ref, st lipgloss.Style) {
		ap := fmt.Sprintf("%s:%d", addr, port)
		mark := " "
		if bad[ap] {
			mark = m.st.Error.Render("!")
		}
		line := mark + kindStyle(m, kind).Render(fit(string(kind), 8)) + st.Render(ap) + m.st.Muted.Render(fmt.Sprintf(" w%d", weight))
		switch health {
		case "", horizon.Healthy:
		case horizon.Unhealthy:
			line += " " + m.st.Error.Render(string(health))
		default:
			line += " " + m.st.Muted.Render(strings.ToLower(string(health)))
		}
		out = append(out, line)
		switch {
		case kind == horizon.Gateway || kind == horizon.Forced:
			for j, r := range stands {
				if j == maxStands-1 && len(stands) > maxStands {
					out = append(out, m.st.Muted.Render(fmt.Sprintf("   … %d more", len(stands)-j)))
					break
				}
				out = append(out, m.st.Muted.Render(fit(fmt.Sprintf("   → %s %s (%s/%s)", orDash(r.Pod), r.Address, r.Cluster, r.Network), w)))
			}
		case pod != "" || cluster != "":
			out = append(out, m.st.Muted.Render(fit(fmt.Sprintf("   %s (%s)", orDash(pod), orDash(cluster)), w)))
		}
	}
	section := func(s string) {
		out = append(out, "", m.st.Header.Render(fit(" "+s, w)))
	}

	if ev.Error == "" || len(ev.Actual) > 0 {
		section(fmt.Sprintf("ACTUAL (%d)", len(ev.Actual)))
		for _, a := range ev.Actual {
			endpoint(a.Kind, a.Address, a.Port, a.Weight, a.Health, a.Pod, a.Cluster, a.StandsFor, m.st.Text)
		}
		missing := 0
		for _, d := range ev.Differences {
			if d.Kind == explain.DiffMissing {
				missing++
			}
		}
		section(fmt.Sprintf("PREDICTED, NOT SENT (%d)", missing))
		for _, p := range ev.Predicted {
			if !v.isMissing(ev, p) {
				continue
			}
			endpoint(p.Kind, p.Address, p.Port, p.Weight, p.Health, p.Pod, p.Cluster, p.StandsFor, m.st.Warn)
		}
	} else {
		out = append(out, "", m.st.Warn.Render(fit(" "+ev.Error, w)))
		section(fmt.Sprintf("PREDICTED (%d)", len(ev.Predicted)))
		for _, p := range ev.Predicted {
			endpoint(p.Kind, p.Address, p.Port, p.Weight, p.Health, p.Pod, p.Cluster, p.StandsFor, m.st.Text)
		}
	}
	section(fmt.Sprintf("DROPPED (%d)", len(ev.Dropped)))
	for _, d := range ev.Dropped {
		out = append(out, " "+m.st.Dropped.Render(fmt.Sprintf("%s:%d", d.Address, d.Port))+" "+m.st.Warn.Render(string(d.Reason)))
		out = append(out, m.st.Muted.Render(fit(fmt.Sprintf("   %s (%s/%s)", orDash(d.Pod), d.Cluster, orDash(d.Network)), w)))
	}
	if v.compare != nil && len(v.views) == 2 {
		other := v.views[1-i]
		only := v.onlyHere(ev, other)
		section(fmt.Sprintf("ONLY HERE, NOT IN %s (%d)", other.Viewpoint.Name, len(only)))
		for _, l := range only {
			out = append(out, " "+m.st.Warn.Render(l))
		}
	}
	if len(ev.Differences) > 0 {
		section(fmt.Sprintf("DIFFERENCES (%d)", len(ev.Differences)))
		for _, d := range ev.Differences {
			st := m.st.Error
			if d.Kind == explain.DiffWeight || d.Kind == explain.DiffHealth {
				st = m.st.Warn
			}
			for j, l := range wrap(d.Sentence, w-3) {
				p := "   "
				if j == 0 {
					p = " ! "
				}
				out = append(out, st.Render(p+l))
			}
		}
	}
	return out
}

func (v *serviceView) isMissing(ev explain.View, p horizon.Endpoint) bool {
	for _, d := range ev.Differences {
		if d.Kind == explain.DiffMissing && d.Address == p.Address && d.Port == p.Port {
			return true
		}
	}
	return false
}

// sent is what a viewpoint gets: the actual EDS when known, else the
// prediction.
func sent(ev explain.View) map[string]string {
	out := map[string]string{}
	if len(ev.Actual) > 0 || ev.Error == "" {
		for _, a := range ev.Actual {
			out[fmt.Sprintf("%s:%d", a.Address, a.Port)] = string(a.Kind)
		}
		return out
	}
	for _, p := range ev.Predicted {
		out[fmt.Sprintf("%s:%d", p.Address, p.Port)] = string(p.Kind)
	}
	return out
}

// onlyHere lists the endpoints ev gets that other does not (compare view).
func (v *serviceView) onlyHere(ev, other explain.View) []string {
	mine, theirs := sent(ev), sent(other)
	var out []string
	for _, a := range ev.Actual {
		k := fmt.Sprintf("%s:%d", a.Address, a.Port)
		if _, ok := theirs[k]; !ok {
			out = append(out, k+" ("+mine[k]+")")
		}
	}
	if len(ev.Actual) == 0 && ev.Error != "" {
		for _, p := range ev.Predicted {
			k := fmt.Sprintf("%s:%d", p.Address, p.Port)
			if _, ok := theirs[k]; !ok {
				out = append(out, k+" ("+mine[k]+", predicted)")
			}
		}
	}
	return out
}
