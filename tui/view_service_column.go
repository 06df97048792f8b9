package tui

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/meshscope/meshscope/collector/explain"
	"github.com/meshscope/meshscope/collector/horizon"
)

// One viewpoint's column of the service and compare views.

// maxStands bounds the pods listed under one gateway endpoint.
const maxStands = 4

// column renders one viewpoint's column as lines of at most w cells.
func (v *serviceView) column(vc viewContext, i, w int) []string {
	ev := v.views[i]
	name := ev.Viewpoint.Name
	if ev.Viewpoint.ControlPlane != "" {
		name += " @ " + ev.Viewpoint.ControlPlane
	}
	out := columnHead(vc, name, ev.Verdict, len(ev.Differences), i == v.focus, w)

	bad := map[string]bool{}
	for _, d := range ev.Differences {
		bad[fmt.Sprintf("%s:%d", d.Address, d.Port)] = true
	}
	endpoint := func(kind horizon.Kind, addr string, port, weight uint32, health horizon.Health, pod, cluster string, stands []horizon.Ref, st lipgloss.Style) {
		ap := fmt.Sprintf("%s:%d", addr, port)
		mark := " "
		if bad[ap] {
			mark = vc.st.Error.Render("!")
		}
		line := mark + vc.kindStyle(kind).Render(fit(string(kind), 8)) + st.Render(ap) + vc.st.Muted.Render(fmt.Sprintf(" w%d", weight))
		switch health {
		case "", horizon.Healthy:
		case horizon.Unhealthy:
			line += " " + vc.st.Error.Render(string(health))
		default:
			line += " " + vc.st.Muted.Render(strings.ToLower(string(health)))
		}
		out = append(out, line)
		switch {
		case kind == horizon.Gateway || kind == horizon.Forced:
			for j, r := range stands {
				if j == maxStands-1 && len(stands) > maxStands {
					out = append(out, vc.st.Muted.Render(fmt.Sprintf("   … %d more", len(stands)-j)))
					break
				}
				out = append(out, vc.st.Muted.Render(fit(fmt.Sprintf("   → %s %s (%s/%s)", orDash(r.Pod), r.Address, r.Cluster, r.Network), w)))
			}
		case pod != "" || cluster != "":
			out = append(out, vc.st.Muted.Render(fit(fmt.Sprintf("   %s (%s)", orDash(pod), orDash(cluster)), w)))
		}
	}
	section := func(s string) { out = section(vc, out, s, w) }

	if ev.Error == "" || len(ev.Actual) > 0 {
		section(fmt.Sprintf("ACTUAL (%d)", len(ev.Actual)))
		for _, a := range ev.Actual {
			endpoint(a.Kind, a.Address, a.Port, a.Weight, a.Health, a.Pod, a.Cluster, a.StandsFor, vc.st.Text)
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
			endpoint(p.Kind, p.Address, p.Port, p.Weight, p.Health, p.Pod, p.Cluster, p.StandsFor, vc.st.Warn)
		}
	} else {
		out = append(out, "", vc.st.Warn.Render(fit(" "+ev.Error, w)))
		section(fmt.Sprintf("PREDICTED (%d)", len(ev.Predicted)))
		for _, p := range ev.Predicted {
			endpoint(p.Kind, p.Address, p.Port, p.Weight, p.Health, p.Pod, p.Cluster, p.StandsFor, vc.st.Text)
		}
	}
	section(fmt.Sprintf("DROPPED (%d)", len(ev.Dropped)))
	for _, d := range ev.Dropped {
		out = append(out, " "+vc.st.Dropped.Render(fmt.Sprintf("%s:%d", d.Address, d.Port))+" "+vc.st.Warn.Render(string(d.Reason)))
		out = append(out, vc.st.Muted.Render(fit(fmt.Sprintf("   %s (%s/%s)", orDash(d.Pod), d.Cluster, orDash(d.Network)), w)))
	}
	if v.compare != nil && len(v.views) == 2 {
		other := v.views[1-i]
		only := v.onlyHere(ev, other)
		section(fmt.Sprintf("ONLY HERE, NOT IN %s (%d)", other.Viewpoint.Name, len(only)))
		for _, l := range only {
			out = append(out, " "+vc.st.Warn.Render(l))
		}
	}
	if len(ev.Differences) > 0 {
		section(fmt.Sprintf("DIFFERENCES (%d)", len(ev.Differences)))
		for _, d := range ev.Differences {
			st := vc.st.Error
			if d.Kind == explain.DiffWeight || d.Kind == explain.DiffHealth {
				st = vc.st.Warn
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

// columnHead is the two lines a column keeps while scrolling: its name
// (marked when focused) and its verdict.
func columnHead(vc viewContext, name string, v explain.Verdict, differences int, focused bool, w int) []string {
	var out []string
	if focused {
		out = append(out, vc.st.Accent.Render(fit("▌"+name, w)))
	} else {
		out = append(out, vc.st.Header.Render(fit(" "+name, w)))
	}
	verdict := string(v)
	vst := vc.st.Muted
	switch v {
	case explain.Match:
		vst = vc.st.OK
	case explain.Mismatch:
		vst = vc.st.Error
		verdict += " (" + plural(differences, "difference") + ")"
	case explain.Pending:
		vst = vc.st.Warn
	}
	return append(out, vc.st.Muted.Render(" verdict ")+vst.Render(fit(verdict, max(w-9, 0))))
}

// section starts a titled part of a column.
func section(vc viewContext, out []string, title string, w int) []string {
	return append(out, "", vc.st.Header.Render(fit(" "+title, w)))
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
