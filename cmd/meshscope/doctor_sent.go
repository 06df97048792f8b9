package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/collector/explain"
	"github.com/meshscope/meshscope/xdsclient"
)

// doctorControlPlanes are the control planes doctor can ask what they send:
// every --xds-address (an address without a cluster is the first context's
// istiod), else the istiod of the first context, through the port-forward.
func doctorControlPlanes(m *mesh, snap *collector.Snapshot) []string {
	first := firstContextCluster(snap)
	if len(m.ControlPlanes) == 0 {
		if first == "" {
			return nil
		}
		return []string{first}
	}
	var out []string
	for _, t := range m.ControlPlanes {
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
// and every EDS, and waits until every EDS cluster CDS names has arrived or
// timeout passes. Streams are the UI's and explain's: xdsclient clients to
// the target controlPlaneFor picks (the port-forward, or --xds-address).
func collectSent(ctx context.Context, m *mesh, snap *collector.Snapshot, views []xdsclient.IstiodView, mode xdsclient.Mode, timeout time.Duration) []explain.Sent {
	type job struct {
		cp string
		vp xdsclient.Viewpoint
	}
	var jobs []job
	for _, cp := range doctorControlPlanes(m, snap) {
		for _, p := range explain.Viewpoints(explain.ViewFor(snap, cp, views)) {
			jobs = append(jobs, job{cp, xdsclient.Viewpoint{Cluster: p.Cluster, Network: p.Network, NodeType: xdsclient.Sidecar, ControlPlane: cp}})
		}
	}
	out := make([]explain.Sent, len(jobs))
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var wg sync.WaitGroup
	for i, j := range jobs {
		out[i] = explain.Sent{ControlPlane: j.cp, Viewpoint: j.vp}
		t, err := m.controlPlaneFor(ctx, j.vp)
		if err != nil {
			out[i].Error = err.Error()
			continue
		}
		c, err := xdsclient.New(xdsclient.Options{Viewpoint: j.vp, ControlPlane: j.cp, Transport: xdsclient.TransportConfig{Address: t.Address}, Mode: mode})
		if err != nil {
			out[i].Error = err.Error()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i].EDS, out[i].Clusters, out[i].Error = followAll(ctx, c, t.Address)
		}()
	}
	wg.Wait()
	return out
}

// followAll runs c until CDS has arrived and every EDS cluster it names has
// its load assignment, or ctx ends (then the error says what is missing).
func followAll(ctx context.Context, c *xdsclient.Client, addr string) (map[string]xdsclient.LoadAssignment, []string, string) {
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = c.Run(cctx) }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		var names []string
		for _, cl := range c.Clusters() {
			if cl.Type == "EDS" {
				names = append(names, cl.EDSName())
			}
		}
		eds := map[string]xdsclient.LoadAssignment{}
		for _, la := range c.LoadAssignments() {
			eds[la.Cluster] = la
		}
		complete := len(names) > 0
		missing := 0
		for _, n := range names {
			if _, ok := eds[n]; !ok {
				complete = false
				missing++
			}
		}
		if complete {
			return eds, names, ""
		}
		select {
		case <-cctx.Done():
			st := c.Status()
			why := fmt.Sprintf("no CDS from %s within the timeout: %s", addr, st.Message)
			if len(names) > 0 {
				why = fmt.Sprintf("%d of %d EDS clusters did not arrive from %s within the timeout: %s", missing, len(names), addr, st.Message)
			}
			return eds, names, why
		case <-tick.C:
		}
	}
}
