package tui

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/internal/humanize"
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
	if s, ok := streamOf(vc.status, ev.Viewpoint.Name); ok && s.Stale && len(ev.Actual) > 0 {
		// The actual EDS is what the stream last got: say it may be old.
		out = append(out, vc.st.Warn.Render(fit(" "+staleText(vc.now(), s), w)))
	}
	// What decides the shares, and what this control plane cannot send.
	paragraph := func(st lipgloss.Style, s string) {
		for _, l := range wrap(s, w-3) {
			out = append(out, st.Render(" "+l))
		}
	}
	if line := explain.SplitLine(ev); line != "" {
		paragraph(vc.st.Muted, line)
	}
	if ev.NoEndpoints != "" {
		paragraph(vc.st.Warn, "no endpoints: "+ev.NoEndpoints)
	}
	for _, n := range ev.Notes {
		paragraph(vc.st.Warn, "note: "+n)
	}

	bad := map[string]bool{}
	for _, d := range ev.Differences {
		bad[fmt.Sprintf("%s:%d", d.Address, d.Port)] = true
	}
	endpoint := func(e shown, st lipgloss.Style) {
		ap := fmt.Sprintf("%s:%d", e.addr, e.port)
		mark := " "
		if bad[ap] {
			mark = vc.st.Error.Render("!")
		}
		shareSt := vc.st.Text
		if e.effect.Shadowed || explain.Percent(e.effect.Share) != explain.Percent(e.effect.Intended) {
			shareSt = vc.st.Warn
		}
		line := mark + vc.kindStyle(e.kind).Render(fit(string(e.kind), 8)) + st.Render(ap) + vc.st.Muted.Render(fmt.Sprintf(" w%d ", e.weight)) +
			shareSt.Render(explain.ShareText(e.effect))
		switch e.health {
		case "", horizon.Healthy:
		case horizon.Unhealthy:
			line += " " + vc.st.Error.Render(string(e.health))
		default:
			line += " " + vc.st.Muted.Render(strings.ToLower(string(e.health)))
		}
		out = append(out, line)
		if e.locality != "" || e.priority > 0 {
			out = append(out, vc.st.Muted.Render(fit("   locality "+explain.LocalityText(e.locality, e.priority), w)))
		}
		switch {
		case e.kind == horizon.Gateway || e.kind == horizon.Forced:
			for j, r := range e.stands {
				if j == maxStands-1 && len(e.stands) > maxStands {
					out = append(out, vc.st.Muted.Render(fmt.Sprintf("   … %d more", len(e.stands)-j)))
					break
				}
				out = append(out, vc.st.Muted.Render(fit(fmt.Sprintf("   → %s %s (%s/%s)", orDash(explain.WorkloadName(r.Pod, r.Workload)), r.Address, r.Cluster, r.Network), w)))
			}
		case e.pod != "" || e.cluster != "":
			out = append(out, vc.st.Muted.Render(fit(fmt.Sprintf("   %s (%s)", orDash(e.pod), orDash(e.cluster)), w)))
		}
	}
	section := func(s string) { out = section(vc, out, s, w) }

	if ev.Error == "" || len(ev.Actual) > 0 {
		section(fmt.Sprintf("ACTUAL (%d)", len(ev.Actual)))
		for _, a := range ev.Actual {
			endpoint(actualShown(a), vc.st.Text)
		}
		missing := notSent(ev)
		section(fmt.Sprintf("PREDICTED, NOT SENT (%d)", len(missing)))
		for _, p := range missing {
			endpoint(predictedShown(p), vc.st.Warn)
		}
	} else {
		out = append(out, "", vc.st.Warn.Render(fit(" "+ev.Error, w)))
		section(fmt.Sprintf("PREDICTED (%d)", len(ev.Predicted)))
		for _, p := range ev.Predicted {
			endpoint(predictedShown(p), vc.st.Text)
		}
	}
	section(fmt.Sprintf("DROPPED (%d)", len(ev.Dropped)))
	for _, d := range ev.Dropped {
		out = append(out, " "+vc.st.Dropped.Render(fmt.Sprintf("%s:%d", d.Address, d.Port))+" "+vc.st.Warn.Render(string(d.Reason)))
		out = append(out, vc.st.Muted.Render(fit(fmt.Sprintf("   %s (%s/%s)", orDash(explain.WorkloadName(d.Pod, d.Workload)), d.Cluster, orDash(d.Network)), w)))
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

// shown is an endpoint as a column shows it, actual or predicted.
type shown struct {
	kind         horizon.Kind
	addr         string
	port, weight uint32
	health       horizon.Health
	locality     string
	priority     uint32
	effect       horizon.Effect
	pod, cluster string
	stands       []horizon.Ref
}

func actualShown(a explain.Actual) shown {
	return shown{kind: a.Kind, addr: a.Address, port: a.Port, weight: a.Weight, health: a.Health, locality: a.Locality, priority: a.Priority,
		effect: a.Effect, pod: explain.WorkloadName(a.Pod, a.Workload), cluster: a.Cluster, stands: a.StandsFor}
}

func predictedShown(p horizon.Endpoint) shown {
	return shown{kind: p.Kind, addr: p.Address, port: p.Port, weight: p.Weight, health: p.Health, locality: p.Locality, priority: p.Priority,
		effect: p.Effect, pod: explain.WorkloadName(p.Pod, p.Workload), cluster: p.Cluster, stands: p.StandsFor}
}

// notSent are the predicted endpoints istiod did not send, paired as
// explain pairs them: by address, port and locality group, in order.
func notSent(ev explain.View) []horizon.Endpoint {
	seen := map[explain.Key]bool{}
	ka := explain.Keyer{}
	for _, a := range ev.Actual {
		seen[ka.Key(a.Address, a.Port, a.Locality)] = true
	}
	var out []horizon.Endpoint
	kp := explain.Keyer{}
	for _, p := range ev.Predicted {
		if !seen[kp.Key(p.Address, p.Port, p.Locality)] {
			out = append(out, p)
		}
	}
	return out
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
		verdict += " (" + humanize.Count(differences, "difference") + ")"
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
