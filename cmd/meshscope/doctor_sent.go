package main

import (
	"context"
	"time"

	"github.com/meshscope/meshscope/collector/ambient"
	"github.com/meshscope/meshscope/collector/explain"
	"github.com/meshscope/meshscope/collector/istiod"
	"github.com/meshscope/meshscope/collector/live"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// collectSent impersonates one sidecar per network against each control
// plane — the networks of the clusters that istiod reads — following CDS
// and every EDS (live.Session.FetchAll, through the port-forward or
// --xds-address), until every EDS cluster CDS names has arrived or timeout
// passes.
func collectSent(ctx context.Context, m *live.Session, snap *model.Snapshot, views []istiod.View, mode xdsclient.Mode, timeout time.Duration) []explain.Sent {
	var vps []xdsclient.Viewpoint
	for _, cp := range m.ControlPlaneIDs(snap) {
		for _, p := range explain.Viewpoints(explain.ViewFor(snap, cp, views)) {
			vps = append(vps, xdsclient.Viewpoint{Cluster: p.Cluster, Network: p.Network, NodeType: xdsclient.Sidecar, ControlPlane: cp})
		}
	}
	res := m.FetchAll(ctx, vps, mode, timeout)
	out := make([]explain.Sent, len(vps))
	for i, r := range res {
		out[i] = explain.Sent{ControlPlane: vps[i].ControlPlane, Viewpoint: vps[i], EDS: r.LoadAssignments, Clusters: r.Clusters, Error: r.Why}
	}
	return out
}

// collectWDS impersonates a ztunnel against each control plane when the
// mesh uses ambient mode, until istiod's first response (its whole state)
// or timeout.
func collectWDS(ctx context.Context, m *live.Session, snap *model.Snapshot, timeout time.Duration) []explain.SentWDS {
	if !ambient.InUse(snap) {
		return nil
	}
	var out []explain.SentWDS
	for _, r := range m.FetchWDS(ctx, ambient.Ztunnels(snap, m.ControlPlaneIDs(snap)), timeout) {
		s := explain.SentWDS{ControlPlane: r.ControlPlane, Error: r.Why}
		if r.Client != nil {
			s.Service = r.Client.ServiceView
		}
		out = append(out, s)
	}
	return out
}
