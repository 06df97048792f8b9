package tui

import (
	"cmp"
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/meshscope/meshscope/analysis/ambient"
	"github.com/meshscope/meshscope/analysis/explain"
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
	name := fmt.Sprintf("ztunnel @ %s (%s)", e.ControlPlane, orDash(e.Network))
	z := &ztunnelLines{vc: vc, w: w, out: vc.paintAll(columnHead(name, explain.Verdict(e.Verdict), len(e.Differences), i == v.focus, w))}
	z.para(vc.st.Muted, " ", ambient.PerIstiodNote(e.ControlPlane, e.Network))
	if e.Error != "" {
		z.out = append(z.out, "")
		z.para(vc.st.Warn, " ", e.Error)
	}
	z.service(e)
	z.workloads(e)
	z.dropped(e.Prediction)
	if notes := e.Prediction.Notes; len(notes) > 0 {
		z.section(fmt.Sprintf("NOTES (%d)", len(notes)))
		for _, n := range notes {
			z.para(vc.st.Muted, " ", n)
		}
	}
	z.differences(e.Differences)
	return z.out
}

// ztunnelLines builds one ztunnel column, section by section.
type ztunnelLines struct {
	vc  viewContext
	w   int
	out []string
}

// para adds s wrapped to the column, every line indented.
func (z *ztunnelLines) para(st lipgloss.Style, indent, s string) {
	for _, l := range wrap(s, max(z.w-len(indent), 1)) {
		z.out = append(z.out, st.Render(indent+l))
	}
}

func (z *ztunnelLines) section(title string) {
	z.out = append(z.out, z.vc.paintAll(sectionHead(title, z.w))...)
}

// service is the SERVICE section: whether istiod sends the service, its
// scope, VIPs and waypoint.
func (z *ztunnelLines) service(e ambient.Explanation) {
	vc, p := z.vc, e.Prediction
	z.section("SERVICE")
	if !p.Sent {
		z.para(vc.st.Muted, " ", "none sent: no cluster this istiod reads has the service")
		return
	}
	state := "predicted"
	if e.Actual != nil {
		state = "sent"
		if e.Actual.Service == nil {
			state = "NOT SENT"
		}
	}
	z.para(vc.st.Text, " ", fmt.Sprintf("%s, %s (from %s)", state, p.Scope, p.From))
	z.para(vc.st.Muted, "   ", "VIPs "+strings.Join(p.VIPs, " "))
	if w := p.Waypoint; w != nil {
		z.para(vc.st.Muted, "   ", fmt.Sprintf("waypoint %s in %s (%s)", w.Source(), w.Cluster, cmp.Or(w.AddressString(), "no address")))
	}
}

// workloads are the WORKLOADS SENT section (what the ztunnel holds, each
// with the prediction that stands for it) and the predicted workloads not
// sent (all of them, without a stream).
func (z *ztunnelLines) workloads(e ambient.Explanation) {
	vc, p := z.vc, e.Prediction
	bad := map[string]bool{}
	for _, d := range e.Differences {
		bad[d.UID] = true
	}
	pred := p.ByUID()
	seen := map[string]bool{}
	if e.Actual != nil {
		z.section(fmt.Sprintf("WORKLOADS SENT (%d)", len(e.Actual.Workloads)))
		for _, a := range e.Actual.Workloads {
			var pw *ambient.Workload
			kind := ambient.WorkloadKind("?")
			if x, ok := pred[a.UID]; ok {
				pw, kind = &x, x.Kind
				seen[x.UID] = true
			}
			z.workload(bad[a.UID], a.UID, kind, orDash(ambient.Reach(a)), a.EffectiveCapacity(), a.Status, a.TunnelProtocol, pw, vc.st.Text)
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
	z.section(title)
	for _, pw := range missing {
		z.workload(bad[pw.UID], pw.UID, pw.Kind, orDash(pw.Reach()), max(pw.Capacity, 1), pw.Status, pw.TunnelProtocol, &pw, st)
	}
}

// workload is one workload's lines: kind, address, capacity, tunnel and
// status, its UID, and why it is predicted (what it stands for).
func (z *ztunnelLines) workload(bad bool, uid string, kind ambient.WorkloadKind, addr string, capacity uint32, status xdsclient.WorkloadStatus, tunnel xdsclient.TunnelProtocol, pw *ambient.Workload, st lipgloss.Style) {
	vc, w := z.vc, z.w
	mark := " "
	if bad {
		mark = vc.st.Error.Render("!")
	}
	line := mark + ztunnelKindStyle(vc, kind).Render(fit(shortKind(kind), 6)) + st.Render(addr) + vc.st.Muted.Render(fmt.Sprintf(" cap %d %s", capacity, tunnel))
	if status != xdsclient.Healthy {
		line += " " + vc.st.Error.Render(status.String())
	}
	z.out = append(z.out, line)
	z.out = append(z.out, vc.st.Muted.Render(fit("   "+uid, w)))
	if pw == nil {
		z.para(vc.st.Warn, "   ", "not predicted")
		return
	}
	z.para(vc.st.Muted, "   ", pw.Why)
	for j, s := range pw.StandsFor {
		if j == maxStands-1 && len(pw.StandsFor) > maxStands {
			z.out = append(z.out, vc.st.Muted.Render(fmt.Sprintf("   … %d more", len(pw.StandsFor)-j)))
			break
		}
		z.out = append(z.out, vc.st.Muted.Render(fit("   → "+s, w)))
	}
}

// dropped is the DROPPED section: the pods istiod leaves out, and why.
func (z *ztunnelLines) dropped(p ambient.Prediction) {
	vc := z.vc
	var dropped []ambient.Dropped
	for _, d := range p.Dropped {
		if len(d.Pods) > 0 {
			dropped = append(dropped, d)
		}
	}
	z.section(fmt.Sprintf("DROPPED (%d)", len(dropped)))
	for _, d := range dropped {
		z.out = append(z.out, " "+vc.st.Dropped.Render(fmt.Sprintf("%d pod(s) in %s", len(d.Pods), strings.Join(d.Clusters, ",")))+" "+vc.st.Warn.Render(string(d.Reason)))
		z.para(vc.st.Muted, "   ", d.Why)
	}
}

// differences is the DIFFERENCES section: where what the ztunnel holds
// differs from the prediction.
func (z *ztunnelLines) differences(ds []ambient.Difference) {
	if len(ds) == 0 {
		return
	}
	z.section(fmt.Sprintf("DIFFERENCES (%d)", len(ds)))
	for _, d := range ds {
		for j, l := range wrap(d.Why, z.w-3) {
			prefix := "   "
			if j == 0 {
				prefix = " ! "
			}
			z.out = append(z.out, z.vc.st.Error.Render(prefix+l))
		}
	}
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
