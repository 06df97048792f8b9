package tui

import (
	"fmt"
	"strings"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/gatewayhop"
	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/internal/humanize"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/themes"
)

// One viewpoint's column of the service and compare views.

// maxStands bounds the pods listed under one gateway endpoint.
const maxStands = 4

// column renders one viewpoint's column as lines of at most w cells.
func (v *serviceView) column(vc viewContext, i, w int) []string {
	return vc.paintAll(v.columnLines(vc, i, w))
}

// columnLines is one viewpoint's column as text with its tokens: the head,
// what decides the shares, the endpoints sent and predicted, the dropped
// ones, what only this side of a comparison gets, and the differences.
func (v *serviceView) columnLines(vc viewContext, i, w int) []line {
	ev := v.views[i]
	name := ev.Viewpoint.Name
	if ev.Viewpoint.ControlPlane != "" {
		name += " @ " + ev.Viewpoint.ControlPlane
	}
	out := columnHead(name, ev.Verdict, len(ev.Differences), i == v.focus, w)
	if s, ok := streamOf(vc.status, ev.Viewpoint.Name); ok && s.Stale && len(ev.Actual) > 0 {
		// The actual EDS is what the stream last got: say it may be old.
		out = append(out, one(themes.Warn, fit(" "+staleText(vc.now(), s), w)))
	}
	out = append(out, columnNotes(ev, w)...)
	section := func(s string) { out = append(out, sectionHead(s, w)...) }
	bad := map[string]bool{}
	for _, d := range ev.Differences {
		bad[model.HostPort(d.Address, d.Port)] = true
	}
	hops := map[string]gatewayhop.Hop{}
	for _, h := range ev.SecondHop {
		hops[model.HostPort(h.Address, h.Port)] = h
	}
	endpoints := func(es []shown, tok themes.Token) {
		for _, e := range es {
			out = append(out, endpointLines(e, bad, tok, w)...)
			if h, ok := hops[model.HostPort(e.addr, e.port)]; ok && (e.kind == horizon.Gateway || e.kind == horizon.Forced) {
				out = append(out, hopLines(h, w)...)
			}
		}
	}
	if ev.Error == "" || len(ev.Actual) > 0 {
		section(fmt.Sprintf("ACTUAL (%d)", len(ev.Actual)))
		endpoints(mapSlice(ev.Actual, actualShown), themes.Text)
		missing := notSent(ev)
		section(fmt.Sprintf("PREDICTED, NOT SENT (%d)", len(missing)))
		endpoints(mapSlice(missing, predictedShown), themes.Warn)
	} else {
		out = append(out, nil, one(themes.Warn, fit(" "+ev.Error, w)))
		section(fmt.Sprintf("PREDICTED (%d)", len(ev.Predicted)))
		endpoints(mapSlice(ev.Predicted, predictedShown), themes.Text)
	}
	section(fmt.Sprintf("DROPPED (%d)", len(ev.Dropped)))
	for _, d := range ev.Dropped {
		out = append(out, line{sp(themes.Text, " "), sp(themes.Dropped, model.HostPort(d.Address, d.Port)), sp(themes.Text, " "), sp(themes.Warn, string(d.Reason))},
			one(themes.Muted, fit(fmt.Sprintf("   %s (%s/%s)", orDash(explain.WorkloadName(d.Pod, d.Workload)), d.Cluster, orDash(d.Network)), w)))
	}
	if v.compare != nil && len(v.views) == 2 {
		other := v.views[1-i]
		only := v.onlyHere(ev, other)
		section(fmt.Sprintf("ONLY HERE, NOT IN %s (%d)", other.Viewpoint.Name, len(only)))
		for _, l := range only {
			out = append(out, line{sp(themes.Text, " "), sp(themes.Warn, l)})
		}
	}
	if len(ev.Differences) > 0 {
		section(fmt.Sprintf("DIFFERENCES (%d)", len(ev.Differences)))
		out = append(out, differenceLines(ev.Differences, w)...)
	}
	return out
}

// columnNotes are what decides the shares and what this control plane
// cannot send, wrapped to the column.
func columnNotes(ev explain.View, w int) []line {
	var out []line
	paragraph := func(tok themes.Token, s string) {
		for _, l := range wrap(s, w-3) {
			out = append(out, one(tok, " "+l))
		}
	}
	if l := explain.SplitLine(ev); l != "" {
		paragraph(themes.Muted, l)
	}
	if ev.NoEndpoints != "" {
		paragraph(themes.Warn, "no endpoints: "+ev.NoEndpoints)
	}
	for _, n := range ev.Notes {
		paragraph(themes.Warn, "note: "+n)
	}
	return out
}

// endpointLines are one endpoint's lines: a mark when a difference names
// its address (bad), its kind, address, weight and share (warned when Envoy's
// share is not istiod's), its health, its locality, and what it stands for
// (the pods behind a gateway) or its pod.
func endpointLines(e shown, bad map[string]bool, addrTok themes.Token, w int) []line {
	ap := model.HostPort(e.addr, e.port)
	mark := sp(themes.Text, " ")
	if bad[ap] {
		mark = sp(themes.Error, "!")
	}
	shareTok := themes.Text
	if e.effect.Shadowed || explain.Percent(e.effect.Share) != explain.Percent(e.effect.Intended) {
		shareTok = themes.Warn
	}
	first := line{mark, sp(kindToken(e.kind), fit(string(e.kind), 8)), sp(addrTok, ap), sp(themes.Muted, fmt.Sprintf(" w%d ", e.weight)),
		sp(shareTok, explain.ShareText(e.effect))}
	switch e.health {
	case "", horizon.Healthy:
	case horizon.Unhealthy:
		first = append(first, sp(themes.Text, " "), sp(themes.Error, string(e.health)))
	default:
		first = append(first, sp(themes.Text, " "), sp(themes.Muted, strings.ToLower(string(e.health))))
	}
	out := []line{first}
	if e.locality != "" || e.priority > 0 {
		out = append(out, one(themes.Muted, fit("   locality "+explain.LocalityText(e.locality, e.priority), w)))
	}
	switch {
	case e.kind == horizon.Gateway || e.kind == horizon.Forced:
		for j, r := range e.stands {
			if j == maxStands-1 && len(e.stands) > maxStands {
				out = append(out, one(themes.Muted, fmt.Sprintf("   … %d more", len(e.stands)-j)))
				break
			}
			out = append(out, one(themes.Muted, fit(fmt.Sprintf("   → %s %s (%s/%s)", orDash(explain.WorkloadName(r.Pod, r.Workload)), r.Address, r.Cluster, r.Network), w)))
		}
	case e.pod != "" || e.cluster != "":
		out = append(out, one(themes.Muted, fit(fmt.Sprintf("   %s (%s)", orDash(e.pod), orDash(e.cluster)), w)))
	}
	return out
}

// hopLines are the second hop under a gateway endpoint: where the request
// goes at that gateway (✓), the caveat (!), or where it breaks (✗).
func hopLines(h gatewayhop.Hop, w int) []line {
	tok, head := themes.OK, "   second hop ✓ "
	text := strings.Join(first(h.Endpoints, 2), ", ")
	switch h.State {
	case gatewayhop.Doubtful:
		tok, head, text = themes.Warn, "   second hop ! ", h.Why
	case gatewayhop.Breaks:
		tok, head, text = themes.Error, "   second hop ✗ ", h.Why
	case gatewayhop.Unchecked:
		tok, head, text = themes.Muted, "   second hop not checked: ", h.Why
	}
	// The first line after the head, the rest indented under it, at most
	// four lines in all.
	lines := wrap(text, max(w-len([]rune(head))-1, 10))
	out := []line{one(tok, fit(head+lines[0], w))}
	rest := strings.TrimSpace(strings.TrimPrefix(text, lines[0]))
	if rest == "" {
		return out
	}
	for j, l := range wrap(rest, max(w-6, 10)) {
		if j == 3 {
			out = append(out, one(tok, fit("     …", w)))
			break
		}
		out = append(out, one(tok, fit("     "+l, w)))
	}
	return out
}

// first is at most n of l, then "+k" for the rest.
func first(l []string, n int) []string {
	if len(l) > n {
		return append(l[:n:n], fmt.Sprintf("+%d", len(l)-n))
	}
	return l
}

// differenceLines are the differences, each wrapped and marked: weights
// and health warned, the rest errors.
func differenceLines(diffs []explain.Difference, w int) []line {
	var out []line
	for _, d := range diffs {
		tok := themes.Error
		if d.Kind == explain.DiffWeight || d.Kind == explain.DiffHealth {
			tok = themes.Warn
		}
		for j, l := range wrap(d.Sentence, w-3) {
			p := "   "
			if j == 0 {
				p = " ! "
			}
			out = append(out, one(tok, p+l))
		}
	}
	return out
}

// mapSlice is f over s.
func mapSlice[T, U any](s []T, f func(T) U) []U {
	out := make([]U, len(s))
	for i, x := range s {
		out[i] = f(x)
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
func columnHead(name string, v explain.Verdict, differences int, focused bool, w int) []line {
	head := one(themes.Header, fit(" "+name, w))
	if focused {
		head = one(themes.Accent, fit("▌"+name, w))
	}
	verdict := string(v)
	tok := themes.Muted
	switch v {
	case explain.Match:
		tok = themes.OK
	case explain.Mismatch:
		tok = themes.Error
		verdict += " (" + humanize.Count(differences, "difference") + ")"
	case explain.Broken:
		tok = themes.Error
		verdict += " (the second hop, below)"
	case explain.Pending:
		tok = themes.Warn
	}
	return []line{head, {sp(themes.Muted, " verdict "), sp(tok, fit(verdict, max(w-9, 0)))}}
}

// sectionHead starts a titled part of a column: a blank line and the title.
func sectionHead(title string, w int) []line {
	return []line{nil, one(themes.Header, fit(" "+title, w))}
}

// sent is what a viewpoint gets: the actual EDS when known, else the
// prediction.
func sent(ev explain.View) map[string]string {
	out := map[string]string{}
	if len(ev.Actual) > 0 || ev.Error == "" {
		for _, a := range ev.Actual {
			out[model.HostPort(a.Address, a.Port)] = string(a.Kind)
		}
		return out
	}
	for _, p := range ev.Predicted {
		out[model.HostPort(p.Address, p.Port)] = string(p.Kind)
	}
	return out
}

// onlyHere lists the endpoints ev gets that other does not (compare view).
func (v *serviceView) onlyHere(ev, other explain.View) []string {
	mine, theirs := sent(ev), sent(other)
	var out []string
	for _, a := range ev.Actual {
		k := model.HostPort(a.Address, a.Port)
		if _, ok := theirs[k]; !ok {
			out = append(out, k+" ("+mine[k]+")")
		}
	}
	if len(ev.Actual) == 0 && ev.Error != "" {
		for _, p := range ev.Predicted {
			k := model.HostPort(p.Address, p.Port)
			if _, ok := theirs[k]; !ok {
				out = append(out, k+" ("+mine[k]+", predicted)")
			}
		}
	}
	return out
}
