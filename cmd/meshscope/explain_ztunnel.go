package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/meshscope/meshscope/analysis/ambient"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/live"
	"github.com/meshscope/meshscope/xdsclient"
)

// explainTargets splits --from into sidecar viewpoints and ztunnels
// (control planes; "ztunnel" alone is every one). Without --from, a
// service with pods in ambient mode (ambient or mixed, in a mesh that uses
// ambient) is explained from a ztunnel on every control plane, and a
// service with sidecars (sidecar, mixed, or no meshed pod) from the default
// sidecar viewpoints; --all-views always adds those.
func explainTargets(m *live.Session, snap *model.Snapshot, host string, from []string, allViews bool) (side []string, sidecars bool, ztunnels []string, err error) {
	asked := false
	for _, f := range from {
		cp, ok := xdsclient.ParseZtunnel(f)
		if !ok {
			side = append(side, f)
			continue
		}
		asked = true
		if cp == "" {
			ztunnels = append(ztunnels, m.ControlPlaneIDs(snap)...)
			continue
		}
		if snap.ClusterByID(live.ContextClusterID(snap, cp)) == nil {
			return nil, false, nil, fmt.Errorf("--from %s: no cluster %s (a ztunnel viewpoint is ztunnel or ztunnel@CLUSTER, the cluster whose istiod to ask)", f, cp)
		}
		ztunnels = append(ztunnels, live.ContextClusterID(snap, cp))
	}
	if len(from) > 0 {
		if asked && len(ztunnels) == 0 {
			return nil, false, nil, fmt.Errorf("--from ztunnel: no control plane to ask (give --xds-address or --context)")
		}
		return side, len(side) > 0 || allViews, ztunnels, nil
	}
	mode := ambient.DataplaneMode(snap, host)
	inUse := ambient.InUse(snap)
	if inUse && (mode == ambient.ModeAmbient || mode == ambient.ModeMixed) {
		ztunnels = ambient.Ztunnels(snap, m.ControlPlaneIDs(snap))
	}
	return nil, !(inUse && mode == ambient.ModeAmbient) || allViews || len(ztunnels) == 0, ztunnels, nil
}

// explainZtunnels asks each control plane as a ztunnel (the workload API)
// and puts what it sends about the service next to the prediction.
func explainZtunnels(ctx context.Context, m *live.Session, host string, cps []string, timeout time.Duration) ([]ambient.Explanation, error) {
	res := m.FetchWDS(ctx, cps, timeout)
	// Predict from the newest snapshot: it is at least as new as the WDS.
	snap := m.Registry().Snapshot()
	svc := snap.Service(host)
	planes := plane.NewSet(snap, nil)
	out := make([]ambient.Explanation, 0, len(res))
	for _, r := range res {
		var actual *xdsclient.WDSServiceView
		if r.Client != nil {
			v := r.Client.ServiceView(ambient.ServiceKey(svc.Namespace, host))
			actual = &v
		}
		out = append(out, ambient.Explain(planes.Of(r.ControlPlane).Ambient(), host, actual, r.Why))
	}
	return out, nil
}

// writeZtunnelTable writes each ztunnel view: the Service resource, then
// every workload istiod sent (with the reason predicted for it), every
// predicted workload it did not send, the pods dropped, and the
// differences.
func writeZtunnelTable(w io.Writer, res explainResult, after bool) {
	for i, z := range res.Ztunnels {
		if i > 0 || after {
			fmt.Fprintln(w)
		}
		p := z.Prediction
		fmt.Fprintf(w, "%s from ztunnel@%s (control plane %s, network %s): %s\n", res.Service, z.ControlPlane, z.ControlPlane, cmp.Or(z.Network, "(no network)"), strings.ToUpper(string(z.Verdict)))
		fmt.Fprintf(w, "  note: %s\n", ambient.PerIstiodNote(z.ControlPlane, z.Network))
		if z.Error != "" {
			fmt.Fprintf(w, "  %s\n", z.Error)
		}
		for _, n := range p.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
		fmt.Fprintf(w, "  service: %s\n", serviceLine(p, z.Actual))
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "WORKLOAD\tSTATUS\tKIND\tADDRESS\tCAPACITY\tTUNNEL\tCLUSTER\tNETWORK\tWHY")
		pred := p.ByUID()
		seen := map[string]bool{}
		if z.Actual != nil {
			for _, a := range z.Actual.Workloads {
				kind, why := "-", "not predicted"
				if pw, ok := pred[a.UID]; ok {
					kind, why = string(pw.Kind), pw.Why
					seen[pw.UID] = true
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", a.UID, a.Status, kind, dash(ambient.Reach(a)), a.EffectiveCapacity(), a.TunnelProtocol, dash(a.ClusterID), dash(a.Network), why)
			}
		}
		for _, pw := range p.Workloads {
			if seen[pw.UID] {
				continue
			}
			status, why := "NOT SENT", "predicted: "+pw.Why
			if z.Actual == nil {
				status, why = pw.Status.String(), pw.Why
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", pw.UID, status, pw.Kind, dash(pw.Reach()), capacityOf(pw), pw.TunnelProtocol, dash(pw.Cluster), dash(pw.Network), why)
		}
		for _, d := range p.Dropped {
			if len(d.Pods) == 0 {
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\t-\t%s\t%s\t%s\n", standsForPods(d.Pods), "DROPPED", d.Reason, strings.Join(d.Clusters, ","), dash(d.Network), d.Why)
		}
		tw.Flush()
		for _, d := range z.Differences {
			fmt.Fprintf(w, "  ! %s\n", d.Why)
		}
	}
}

// serviceLine is the Service resource in one line: what istiod sent, else
// what is predicted.
func serviceLine(p ambient.Prediction, actual *xdsclient.WDSServiceView) string {
	if !p.Sent {
		if actual != nil && actual.Service != nil {
			return "sent, although none is predicted"
		}
		return "none sent (no cluster istiod reads has it)"
	}
	sent := "predicted"
	if actual != nil && actual.Service != nil {
		sent = "sent"
	} else if actual != nil {
		sent = "NOT SENT, predicted"
	}
	line := fmt.Sprintf("%s, %s (from %s), VIPs %s", sent, p.Scope, p.From, strings.Join(p.VIPs, ","))
	if w := p.Waypoint; w != nil {
		line += fmt.Sprintf(", waypoint %s in %s (%s)", w.Source(), w.Cluster, cmp.Or(w.AddressString(), "no address"))
	}
	return line
}

func capacityOf(w ambient.Workload) uint32 {
	if w.Capacity == 0 {
		return 1
	}
	return w.Capacity
}

// standsForPods names pods (UIDs CLUSTER//Pod/NS/NAME) by name, a few.
func standsForPods(uids []string) string {
	names := make([]string, 0, len(uids))
	for _, u := range uids {
		names = append(names, u[strings.LastIndexByte(u, '/')+1:])
	}
	if len(names) > 3 {
		return fmt.Sprintf("%s +%d", strings.Join(names[:2], ","), len(names)-2)
	}
	return strings.Join(names, ",")
}
