package main

import (
	"context"
	"fmt"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/istiod"
	"github.com/meshscope/meshscope/session/live"
)

// istiodViews reads each istiod's own view (/debug/clusterz,
// /debug/networkz) from the debug targets (--istiod-debug-address, else
// the port-forward to each primary's istiod pod's 8080), labelled with the cluster ID
// of its control plane. What cannot be read is an istiod-unreachable
// warning; the rest of a report stands without it.
func istiodViews(ctx context.Context, m *live.Session, snap *model.Snapshot) ([]istiod.View, []model.Problem) {
	var views []istiod.View
	var ps []model.Problem
	// Each read is already labelled with its control plane's cluster ID
	// (live.Session.IstiodViews); a failed port-forward is a read with its
	// error.
	for _, r := range m.IstiodViews(ctx, snap) {
		if r.Err != nil {
			ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemIstiodUnreachable, Cluster: r.ControlPlane,
				Sentence: fmt.Sprintf("cannot read istiod's own view%s (give --istiod-debug-address %s=HOST:PORT to point at it): %v", at(r.Address), r.ControlPlane, r.Err)})
			continue
		}
		views = append(views, r.View)
	}
	return views, ps
}
