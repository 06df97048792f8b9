package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/meshscope/meshscope/analysis/meshmap"
	"github.com/meshscope/meshscope/internal/humanize"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/themes"
)

// mapView (:map) draws the mesh (analysis/meshmap, built off the update
// loop with the fleet): one box per network holding its clusters (state,
// data-plane mode, proxies, ★ where an istiod runs) and its gateways
// (address, health), then each control plane's arrows to the clusters it
// reads (╳ where the remote secret is missing or fails), each box and
// arrow with the kinds of the problems on it. Boxes fill the width, as
// many side by side as fit; the lines below the map list the problems'
// sentences as far as the height allows; ↑/↓ scroll.
type mapView struct {
	top int // first line shown
}

// mapBoxMin is the narrowest network box: three fit 80 columns.
const mapBoxMin = 25

func (v *mapView) title(vc viewContext) string {
	if vc.fleet == nil || vc.fleet.snap == nil {
		return "Map"
	}
	m := &vc.fleet.mesh
	return fmt.Sprintf("Map (%s, %s)", humanize.Count(len(m.Networks), "network"), humanize.Count(len(m.ControlPlanes), "control plane"))
}

func (v *mapView) refresh(viewContext, update) {}

func (v *mapView) key(vc viewContext, k tea.KeyPressMsg) (tea.Cmd, bool) {
	d, ok := scrollDelta(vc.keys, k, vc.height)
	if ok {
		v.scroll(vc, d)
	}
	return nil, ok
}

func (v *mapView) scroll(vc viewContext, d int) {
	n := len(v.lines(vc, vc.width, vc.height))
	v.top = min(max(v.top+d, 0), max(n-vc.height, 0))
}

func (v *mapView) render(vc viewContext, w, h int) string {
	if vc.ix.snap == nil {
		return vc.waiting(w, h)
	}
	if vc.fleet == nil {
		return padLines([]string{"", vc.st.Warn.Render("  drawing the map…")}, w, h)
	}
	lines := v.lines(vc, w, h)
	top := min(v.top, max(len(lines)-h, 0))
	return padLines(lines[top:], w, h)
}

// lines is the whole drawing, one string per terminal line.
func (v *mapView) lines(vc viewContext, w, h int) []string {
	fx := vc.fleet
	if fx == nil {
		return nil
	}
	m := &fx.mesh
	out := []string{""}
	// Boxes: as many per row as fit at mapBoxMin, sharing the width.
	perRow := max(min(len(m.Networks), (w-1)/(mapBoxMin+1)), 1)
	for i := 0; i < len(m.Networks); i += perRow {
		row := m.Networks[i:min(i+perRow, len(m.Networks))]
		bw := (w-1)/len(row) - 1
		if len(row) < perRow { // a last, shorter row keeps the boxes' width
			bw = (w-1)/perRow - 1
		}
		boxes := make([]string, len(row))
		for j := range row {
			boxes[j] = v.box(vc, fx, &row[j], bw, kindLines(h))
		}
		joined := lipgloss.JoinHorizontal(lipgloss.Top, interleave(boxes, " ")...)
		for _, l := range strings.Split(joined, "\n") {
			out = append(out, " "+l)
		}
	}
	out = append(out, vc.paintAll(controlPlaneLines(m, w))...)
	if len(m.Problems) > 0 {
		e, wn := meshmap.Counts(m.Problems)
		out = append(out, "", " "+vc.st.Muted.Render(fit(fmt.Sprintf("+ %s, %s of services and settings (:problems)", humanize.Count(e, "error"), humanize.Count(wn, "warning")), w-2)))
	}
	// What room is left: the sentences of the problems on the map.
	if room := h - len(out) - 2; room > 0 {
		out = append(out, vc.paintAll(mapProblemLines(m, room, w))...)
	}
	return out
}

// controlPlaneLines are each control plane and its arrows to the clusters
// it reads, broken where it cannot, with the kinds of their problems.
func controlPlaneLines(m *meshmap.Map, w int) []line {
	var out []line
	if len(m.ControlPlanes) > 0 {
		out = append(out, nil)
	}
	for _, cp := range m.ControlPlanes {
		head := line{sp(themes.Text, " "), sp(themes.Accent, "istiod "+cp.ID)}
		switch {
		case !cp.Known:
			head = append(head, sp(themes.Warn, "  reads: unknown (its remote secrets are not read, no /debug/clusterz)"))
		case len(cp.Arrows) == 0:
			head = append(head, sp(themes.Muted, "  reads its own cluster only"))
		default:
			head = append(head, sp(themes.Muted, "  reads (from "+cp.From+"):"))
		}
		out = append(out, head)
		if ks := meshmap.ProblemKinds(cp.Problems); len(ks) > 0 {
			out = append(out, line{sp(themes.Text, "   "), sp(problemToken(cp.Problems), fit(strings.Join(ks, ", "), w-4))})
		}
		for _, a := range cp.Arrows {
			arrow := sp(themes.OK, "  ───▶ ")
			if a.Broken {
				arrow = sp(themes.Error, "  ─╳─▶ ")
			}
			l := line{sp(themes.Text, " "), arrow, sp(themes.Text, a.To)}
			if a.Why != "" {
				l = append(l, sp(themes.Error, "  "+a.Why))
			}
			if ks := meshmap.ProblemKinds(a.Problems); len(ks) > 0 {
				l = append(l, sp(themes.Text, "  "), sp(problemToken(a.Problems), strings.Join(ks, ", ")))
			}
			out = append(out, truncateLine(l, w))
		}
	}
	return out
}

// mapProblemLines are the sentences of the problems on the map, in at most
// room lines (two per problem at most).
func mapProblemLines(m *meshmap.Map, room, w int) []line {
	var ps []model.Problem
	for _, n := range m.Networks {
		ps = append(ps, n.Problems...)
		for _, c := range n.Clusters {
			ps = append(ps, c.Problems...)
		}
		for _, g := range n.Gateways {
			ps = append(ps, g.Problems...)
		}
	}
	for _, cp := range m.ControlPlanes {
		ps = append(ps, cp.Problems...)
		for _, a := range cp.Arrows {
			ps = append(ps, a.Problems...)
		}
	}
	if len(ps) == 0 {
		return nil
	}
	out := []line{nil, one(themes.Header, fit(" Problems on the map", w))}
	room -= 2
	for _, p := range ps {
		ls := wrap(p.Sentence, w-4)
		if room < 1 {
			break
		}
		ls = ls[:min(len(ls), room, 2)]
		for i, l := range ls {
			mark := sp(themes.Text, "  ")
			if i == 0 {
				mark = sp(severityToken(p.Severity), "● ")
			}
			out = append(out, line{sp(themes.Text, " "), mark, sp(themes.Text, l)})
		}
		room -= len(ls)
	}
	return out
}

// kindLines is how many lines of problem kinds a cluster gets in its box:
// two fit 80×24; a taller terminal shows more.
func kindLines(h int) int {
	switch {
	case h >= 48:
		return 8
	case h >= 34:
		return 4
	}
	return 2
}

// box draws one network, bw cells wide, with up to kinds lines of problem
// kinds per cluster.
func (v *mapView) box(vc viewContext, fx *fleetIndex, n *meshmap.Network, bw, kinds int) string {
	name := n.Name
	if name == "" {
		name = "no network"
	}
	return frame(vc, name, vc.paintAll(boxLines(fx, n, max(bw-4, 1), kinds)), bw)
}

// boxLines are what a network's box holds, inner cells wide: each cluster
// (a star for a primary) with its state, data-plane mode, proxies and
// problem kinds; each gateway with its health; the network's own problems.
func boxLines(fx *fleetIndex, n *meshmap.Network, inner, kinds int) []line {
	var body []line
	add := func(tok themes.Token, s string) { body = append(body, one(tok, fit(s, inner))) }
	for _, c := range n.Clusters {
		mark := "  "
		if c.Primary {
			mark = "★ "
		}
		state := string(c.State)
		head := mark + c.ID
		pad := max(inner-ansi.StringWidth(head)-len(state), 1)
		body = append(body, line{sp(themes.Text, head+strings.Repeat(" ", pad)), sp(clusterStateToken(c.State), fit(state, max(inner-ansi.StringWidth(head)-pad, 0)))})
		var facts []string
		if c.Mode != "" {
			facts = append(facts, c.Mode)
		}
		if pc, ok := fx.byCluster[c.ID]; ok {
			t := fmt.Sprintf("%d proxies", pc.all)
			if inner < 26 { // room for what is off at 80 columns
				t = fmt.Sprintf("%dpx", pc.all)
			}
			if pc.off > 0 {
				t += fmt.Sprintf(", %d off", pc.off)
			}
			facts = append(facts, t)
		}
		if len(facts) > 0 {
			tok := themes.Muted
			if pc := fx.byCluster[c.ID]; pc.off > 0 {
				tok = themes.Warn
			}
			add(tok, "  "+strings.Join(facts, " · "))
		}
		for _, k := range kindsFit(c.Problems, kinds) {
			add(problemToken(c.Problems), "  "+k)
		}
	}
	if len(n.Gateways) == 0 && n.Name != "" {
		add(themes.Muted, "⇄ no gateway")
	}
	for _, g := range n.Gateways {
		tok := themes.OK
		if !g.Healthy {
			tok = themes.Error
		}
		head := "⇄ " + g.Address
		if ansi.StringWidth(head) > inner {
			head = "⇄" + g.Address
		}
		h := " " + g.Health
		if ansi.StringWidth(head)+ansi.StringWidth(h) > inner {
			body = append(body, one(themes.Text, fit(head, inner)))
			head = "  "
		}
		body = append(body, line{sp(themes.Text, head), sp(tok, fit(h, inner-ansi.StringWidth(head)))})
	}
	for _, k := range kindsFit(n.Problems, kinds) {
		add(problemToken(n.Problems), k)
	}
	return body
}

// kindsFit is at most n lines of problem kinds, "✗" for an error and "!"
// for a warning ("✗ remote-secret", "! skew ×2"), the last saying how
// many more.
func kindsFit(ps []model.Problem, n int) []string {
	var ks []string
	for _, k := range meshmap.ProblemKinds(ps) {
		sev, kind, _ := strings.Cut(k, " ")
		mark := "! "
		if sev == string(model.SeverityError) {
			mark = "✗ "
		}
		ks = append(ks, mark+kind)
	}
	if len(ks) > n {
		ks = append(ks[:n-1], fmt.Sprintf("  and %d more", len(ks)-n+1))
	}
	return ks
}

// problemToken colours a list of problems by the worst of them.
func problemToken(ps []model.Problem) themes.Token {
	if e, _ := meshmap.Counts(ps); e > 0 {
		return themes.Error
	}
	return themes.Warn
}

// frame draws a rounded box bw cells wide with a title in its top edge.
func frame(vc viewContext, title string, body []string, bw int) string {
	inner := max(bw-4, 1)
	t := ansi.Truncate(" "+title+" ", max(bw-3, 0), "…")
	top := vc.st.Border.Render("╭─") + vc.st.Accent.Render(t) + vc.st.Border.Render(strings.Repeat("─", max(bw-3-ansi.StringWidth(t), 0))+"╮")
	lines := []string{top}
	for _, b := range body {
		if gap := inner - ansi.StringWidth(b); gap > 0 {
			b += strings.Repeat(" ", gap)
		}
		lines = append(lines, vc.st.Border.Render("│ ")+b+vc.st.Border.Render(" │"))
	}
	lines = append(lines, vc.st.Border.Render("╰"+strings.Repeat("─", max(bw-2, 0))+"╯"))
	return strings.Join(lines, "\n")
}

func interleave(ss []string, sep string) []string {
	out := make([]string, 0, 2*len(ss))
	for i, s := range ss {
		if i > 0 {
			out = append(out, sep)
		}
		out = append(out, s)
	}
	return out
}
