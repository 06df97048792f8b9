package tui

import (
	"cmp"
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/meshscope/meshscope/collector/ambient"
	"github.com/meshscope/meshscope/collector/explain"
	"github.com/meshscope/meshscope/xdsclient"
)

// The ztunnel view of a service (ambient mode): one column per control
// plane — not per network: what an istiod sends ztunnels over WDS does not
// depend on the ztunnel, so every ztunnel of that istiod gets the column —
// with the Service resource, the workloads and split-horizon workloads
// istiod sent (each with the reason meshscope predicts for it), those
// predicted but not sent, the pods dropped and why, and the differences.

// ztunnelColumn renders one control plane's column as lines of at most w
// cells.
func (v *serviceView) ztunnelColumn(vc viewContext, i, w int) []string {
	e := v.amb[i]
	p := e.Prediction
	name := fmt.Sprintf("ztunnel @ %s (%s)", e.ControlPlane, orDash(e.Network))
	out := columnHead(vc, name, explain.Verdict(e.Verdict), len(e.Differences), i == v.focus, w)
	para := func(st lipgloss.Style, indent, s string) {
		for _, l := range wrap(s, max(w-len(indent), 1)) {
			out = append(out, st.Render(indent+l))
		}
	}
	para(vc.st.Muted, " ", ambient.PerIstiodNote(e.ControlPlane, e.Network))
	if e.Error != "" {
		out = append(out, "")
		para(vc.st.Warn, " ", e.Error)
	}

	out = section(vc, out, "SERVICE", w)
	switch {
	case !p.Sent:
		para(vc.st.Muted, " ", "none sent: no cluster this istiod reads has the service")
	default:
		state := "predicted"
		if e.Actual != nil {
			state = "sent"
			if e.Actual.Service == nil {
				state = "NOT SENT"
			}
		}
		para(vc.st.Text, " ", fmt.Sprintf("%s, %s (from %s)", state, p.Scope, p.From))
		para(vc.st.Muted, "   ", "VIPs "+strings.Join(p.VIPs, " "))
		if w := p.Waypoint; w != nil {
			para(vc.st.Muted, "   ", fmt.Sprintf("waypoint %s in %s (%s)", w.Source(), w.Cluster, cmp.Or(w.AddressString(), "no address")))
		}
	}

	bad := map[string]bool{}
	for _, d := range e.Differences {
		bad[d.UID] = true
	}
	pred := map[string]ambient.Workload{}
	for _, pw := range p.Workloads {
		pred[pw.UID] = pw
		for _, c := range pw.Candidates {
			pred[c] = pw
		}
	}
	workload := func(uid string, kind ambient.WorkloadKind, addr string, capacity uint32, status xdsclient.WorkloadStatus, tunnel xdsclient.TunnelProtocol, pw *ambient.Workload, st lipgloss.Style) {
		mark := " "
		if bad[uid] {
			mark = vc.st.Error.Render("!")
		}
		line := mark + ztunnelKindStyle(vc, kind).Render(fit(shortKind(kind), 6)) + st.Render(addr) + vc.st.Muted.Render(fmt.Sprintf(" cap %d %s", capacity, tunnel))
		if status != xdsclient.Healthy {
			line += " " + vc.st.Error.Render(status.String())
		}
		out = append(out, line)
		out = append(out, vc.st.Muted.Render(fit("   "+uid, w)))
		if pw == nil {
			para(vc.st.Warn, "   ", "not predicted")
			return
		}
		para(vc.st.Muted, "   ", pw.Why)
		for j, s := range pw.StandsFor {
			if j == maxStands-1 && len(pw.StandsFor) > maxStands {
				out = append(out, vc.st.Muted.Render(fmt.Sprintf("   … %d more", len(pw.StandsFor)-j)))
				break
			}
			out = append(out, vc.st.Muted.Render(fit("   → "+s, w)))
		}
	}
	seen := map[string]bool{}
	if e.Actual != nil {
		out = section(vc, out, fmt.Sprintf("WORKLOADS SENT (%d)", len(e.Actual.Workloads)), w)
		for _, a := range e.Actual.Workloads {
			var pw *ambient.Workload
			kind := ambient.WorkloadKind("?")
			if x, ok := pred[a.UID]; ok {
				pw, kind = &x, x.Kind
				seen[x.UID] = true
			}
			workload(a.UID, kind, orDash(ambient.Reach(a)), a.EffectiveCapacity(), a.Status, a.TunnelProtocol, pw, vc.st.Text)
		}
	}
	var missing []ambient.Workload
	for _, pw := range p.Workloads {
		if !seen[pw.UID] {
			missing = append(missing, pw)
		}
	}
	title, st := fmt.Sprintf("PREDICTED, NOT SENT (%d)", len(missing)), vc.st.Warn
	if e.Actual == nil {
		title, st = fmt.Sprintf("PREDICTED (%d)", len(missing)), vc.st.Text
	}
	out = section(vc, out, title, w)
	for _, pw := range missing {
		workload(pw.UID, pw.Kind, orDash(pw.Reach()), max(pw.Capacity, 1), pw.Status, pw.TunnelProtocol, &pw, st)
	}

	var dropped []ambient.Dropped
	for _, d := range p.Dropped {
		if len(d.Pods) > 0 {
			dropped = append(dropped, d)
		}
	}
	out = section(vc, out, fmt.Sprintf("DROPPED (%d)", len(dropped)), w)
	for _, d := range dropped {
		out = append(out, " "+vc.st.Dropped.Render(fmt.Sprintf("%d pod(s) in %s", len(d.Pods), strings.Join(d.Clusters, ",")))+" "+vc.st.Warn.Render(string(d.Reason)))
		para(vc.st.Muted, "   ", d.Why)
	}
	if len(p.Notes) > 0 {
		out = section(vc, out, fmt.Sprintf("NOTES (%d)", len(p.Notes)), w)
		for _, n := range p.Notes {
			para(vc.st.Muted, " ", n)
		}
	}
	if len(e.Differences) > 0 {
		out = section(vc, out, fmt.Sprintf("DIFFERENCES (%d)", len(e.Differences)), w)
		for _, d := range e.Differences {
			for j, l := range wrap(d.Why, w-3) {
				prefix := "   "
				if j == 0 {
					prefix = " ! "
				}
				out = append(out, vc.st.Error.Render(prefix+l))
			}
		}
	}
	return out
}

// shortKind is a workload kind in a few cells.
func shortKind(k ambient.WorkloadKind) string {
	if k == ambient.KindSplitHorizon {
		return "split"
	}
	return string(k)
}

func ztunnelKindStyle(vc viewContext, k ambient.WorkloadKind) lipgloss.Style {
	switch k {
	case ambient.KindPod:
		return vc.st.Local
	case ambient.KindSplitHorizon, ambient.KindGateway:
		return vc.st.Gateway
	}
	return vc.st.Leaked
}
