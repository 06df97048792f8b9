package main

import (
	"context"
	"time"

	"github.com/meshscope/meshscope/analysis/ambient"
	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/fleet"
	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/istiod"
	"github.com/meshscope/meshscope/session/live"
	"github.com/meshscope/meshscope/xdsclient"
)

// doctorAnswers are doctor's one-shot reads, as a diagnosis takes them
// (explain.Gather): istiod's views (the problems of reading them in
// extra), the proxies connected to them, then — unless --offline — what
// one sidecar per network and one ztunnel per control plane are sent.
type doctorAnswers struct {
	ctx     context.Context
	m       *live.Session
	snap    *model.Snapshot
	mode    xdsclient.Mode
	timeout time.Duration
	offline bool
	views   []istiod.View
	extra   []model.Problem
}

func (a *doctorAnswers) Istiod() []istiod.View {
	a.views, a.extra = istiodViews(a.ctx, a.m, a.snap)
	return a.views
}

// Fleet is the proxies connected to each istiod whose debug endpoint
// answered (what cannot be read is istiod-unreachable in extra).
func (a *doctorAnswers) Fleet() *fleet.Fleet {
	if len(a.views) == 0 {
		return nil
	}
	f, _, _ := readFleet(a.ctx, a.m)
	return &f
}

func (a *doctorAnswers) Sent() []explain.Sent {
	if a.offline {
		return nil
	}
	return collectSent(a.ctx, a.m, a.snap, a.views, a.mode, a.timeout)
}

// SentGateways impersonates every ready east-west gateway pod that runs a
// router proxy against the istiod serving it (unless --offline).
func (a *doctorAnswers) SentGateways() []explain.SentGateway {
	if a.offline {
		return nil
	}
	return collectGateways(a.ctx, a.m, a.snap, a.mode, a.timeout)
}

func (a *doctorAnswers) SentWDS() []explain.SentWDS {
	if a.offline {
		return nil
	}
	return collectWDS(a.ctx, a.m, a.snap, a.timeout)
}

// collectSent impersonates one sidecar per network against each control
// plane — the networks of the clusters that istiod reads — following CDS
// and every EDS (live.Session.FetchAll, through the port-forward or
// --xds-address), until every EDS cluster CDS names has arrived or timeout
// passes.
func collectSent(ctx context.Context, m *live.Session, snap *model.Snapshot, views []istiod.View, mode xdsclient.Mode, timeout time.Duration) []explain.Sent {
	var vps []xdsclient.Viewpoint
	planes := plane.NewSet(snap, views)
	for _, cp := range m.ControlPlaneIDs(snap) {
		vps = append(vps, horizon.SidecarViewpoints(planes.Of(cp).Snap, cp)...)
	}
	res := m.FetchAll(ctx, vps, mode, timeout)
	out := make([]explain.Sent, len(vps))
	for i, r := range res {
		out[i] = explain.Sent{ControlPlane: vps[i].ControlPlane, Viewpoint: vps[i], EDS: r.LoadAssignments, Clusters: r.Clusters, Error: r.Why}
	}
	return out
}

// collectWDS impersonates a ztunnel against each control plane (the mesh
// uses ambient mode: explain.Gather asks only then), until istiod's first
// response (its whole state) or timeout.
func collectWDS(ctx context.Context, m *live.Session, snap *model.Snapshot, timeout time.Duration) []explain.SentWDS {
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

// collectGateways impersonates each gateway pod (a router with its
// identity) and waits for its listeners, clusters and every EDS; the
// control plane recorded is the one really asked (a port-forward reaches
// the first context's istiod).
func collectGateways(ctx context.Context, m *live.Session, snap *model.Snapshot, mode xdsclient.Mode, timeout time.Duration) []explain.SentGateway {
	sents := explain.GatewayViewpoints(snap, nil)
	vps := make([]xdsclient.Viewpoint, len(sents))
	for i, s := range sents {
		vps[i] = s.Viewpoint()
	}
	for i, r := range m.FetchGateways(ctx, vps, mode, timeout) {
		s := &sents[i]
		if r.ControlPlane != "" {
			s.ControlPlane = r.ControlPlane
		}
		s.Listeners, s.Clusters, s.EDS, s.Error = r.Listeners, r.Clusters, r.EDS, r.Why
	}
	return sents
}
