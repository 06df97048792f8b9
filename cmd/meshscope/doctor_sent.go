package main

import (
	"context"
	"time"

	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/collector/explain"
	"github.com/meshscope/meshscope/collector/istiod"
	"github.com/meshscope/meshscope/collector/live"
	"github.com/meshscope/meshscope/xdsclient"
)

// doctorControlPlanes are the control planes doctor can ask what they send:
// every --xds-address (an address without a cluster is the first context's
// istiod), else the istiod of the first context, through the port-forward.
func doctorControlPlanes(m *live.Session, snap *collector.Snapshot) []string {
	first := firstContextCluster(snap)
	if len(m.ControlPlanes()) == 0 {
		if first == "" {
			return nil
		}
		return []string{first}
	}
	var out []string
	for _, t := range m.ControlPlanes() {
		cp := t.Cluster
		if cp == "" {
			cp = first
		}
		out = append(out, contextClusterID(snap, cp))
	}
	return out
}

// firstContextCluster is the ID of the first cluster read through a context.
func firstContextCluster(snap *collector.Snapshot) string {
	for i := range snap.Clusters {
		if snap.Clusters[i].IsContext() {
			return snap.Clusters[i].ID
		}
	}
	return ""
}

// contextClusterID maps a kube context name to the ID of its cluster (they
// differ when a remote secret or --cluster-id names it otherwise).
func contextClusterID(snap *collector.Snapshot, name string) string {
	if snap.ClusterByID(name) != nil {
		return name
	}
	for _, c := range snap.Clusters {
		for _, s := range append([]collector.SourceRef{c.Source}, c.Sources...) {
			if s.Kind == collector.SourceContext && s.Name == name {
				return c.ID
			}
		}
	}
	return name
}

// collectSent impersonates one sidecar per network against each control
// plane — the networks of the clusters that istiod reads — following CDS
// and every EDS (live.Session.FetchAll, through the port-forward or
// --xds-address), until every EDS cluster CDS names has arrived or timeout
// passes.
func collectSent(ctx context.Context, m *live.Session, snap *collector.Snapshot, views []istiod.View, mode xdsclient.Mode, timeout time.Duration) []explain.Sent {
	var vps []xdsclient.Viewpoint
	for _, cp := range doctorControlPlanes(m, snap) {
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
