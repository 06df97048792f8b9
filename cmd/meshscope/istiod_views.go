package main

import (
	"context"
	"fmt"

	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/collector/explain"
	"github.com/meshscope/meshscope/xdsclient"
)

// istiodViews reads each istiod's own view (/debug/clusterz,
// /debug/networkz) from the debug targets (--istiod-debug-address, else
// the port-forward to the istiod pod's 8080), labelled with the cluster ID
// of its control plane. What cannot be read is an istiod-unreachable
// warning; the rest of a report stands without it.
func istiodViews(ctx context.Context, m *mesh, snap *collector.Snapshot) ([]xdsclient.IstiodView, []explain.Problem) {
	var views []xdsclient.IstiodView
	var ps []explain.Problem
	debug, err := m.istiodDebugTargets(ctx)
	if err != nil {
		ps = append(ps, explain.Problem{Severity: explain.Warning, Kind: "istiod-unreachable",
			Sentence: fmt.Sprintf("cannot read istiod's own view (give --istiod-debug-address to point at it): %v", err)})
	}
	for _, t := range debug {
		cp := t.Cluster
		if cp == "" {
			cp = firstContextCluster(snap) // the primary istiod is asked about
		}
		cp = contextClusterID(snap, cp)
		v, err := xdsclient.FetchIstiodView(ctx, cp, t.Address)
		if err != nil {
			ps = append(ps, explain.Problem{Severity: explain.Warning, Kind: "istiod-unreachable", Cluster: cp,
				Sentence: fmt.Sprintf("cannot read istiod's own view at %s: %v", t.Address, err)})
			continue
		}
		views = append(views, v)
	}
	return views, ps
}
