package live

import (
	"context"

	"github.com/meshscope/meshscope/analysis/fleet"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/istiod"
)

// IstiodRead is istiod's own view of the mesh as read from one control
// plane's debug address, or why it could not be read.
type IstiodRead struct {
	// ControlPlane names the istiod; Address is its debug host:port ("" when
	// the port-forward to it failed).
	ControlPlane string
	Address      string
	View         istiod.View
	Err          error
}

// readsIstiodView says whether IstiodViews can give anything.
func (s *Session) readsIstiodView() bool { return len(s.istiodDebug) > 0 || s.forwardsToIstiod() }

// debugTarget is one istiod debug endpoint to read, or why it cannot be
// reached (its port-forward failed).
type debugTarget struct {
	Target
	err error
}

// istiodDebugTargets are the istiod debug endpoints to read istiod's own
// view and its connected proxies from: Options.IstiodDebug, else — when
// meshscope reaches istiod by port-forward anyway — a port-forward to port
// 8080 of every primary's istiod pod (forwardedDebugTargets). With control
// planes given by address only, istiod's HTTP address is unknown: none.
// snap names the control planes.
func (s *Session) istiodDebugTargets(ctx context.Context, snap *model.Snapshot) []debugTarget {
	if len(s.istiodDebug) > 0 || !s.forwardsToIstiod() {
		out := make([]debugTarget, 0, len(s.istiodDebug))
		for _, t := range s.istiodDebug {
			out = append(out, debugTarget{Target: Target{Cluster: debugControlPlane(snap, t), Address: t.Address}})
		}
		return out
	}
	return s.forwardedDebugTargets(ctx, snap)
}

// IstiodViews reads istiod's own view (/debug/clusterz, /debug/networkz)
// from every istiod debug endpoint there is (istiodDebugTargets of snap):
// one read per endpoint, each with its error — a port-forward that failed
// too.
func (s *Session) IstiodViews(ctx context.Context, snap *model.Snapshot) []IstiodRead {
	targets := s.istiodDebugTargets(ctx, snap)
	reads := make([]IstiodRead, 0, len(targets))
	for _, t := range targets {
		r := IstiodRead{ControlPlane: t.Cluster, Address: t.Address, View: istiod.View{ControlPlane: t.Cluster}, Err: t.err}
		if r.Err == nil {
			r.View, r.Err = istiod.FetchView(ctx, t.Cluster, t.Address)
		}
		reads = append(reads, r)
	}
	return reads
}

// IstiodSyncz reads /debug/syncz — every proxy connected to that istiod —
// from every istiod debug endpoint there is (the same endpoints as
// IstiodViews), one read per endpoint with its error.
func (s *Session) IstiodSyncz(ctx context.Context, snap *model.Snapshot) []fleet.Read {
	targets := s.istiodDebugTargets(ctx, snap)
	reads := make([]fleet.Read, 0, len(targets))
	for _, t := range targets {
		r := fleet.Read{ControlPlane: t.Cluster, Address: t.Address, Err: t.err}
		if r.Err == nil {
			r.Statuses, r.Err = istiod.FetchSyncz(ctx, t.Address)
		}
		reads = append(reads, r)
	}
	return reads
}

// debugControlPlane names the control plane of a debug target: its
// cluster, else the first cluster of the snapshot (the first context,
// whose istiod a target given without a cluster is), as a cluster ID.
func debugControlPlane(snap *model.Snapshot, t Target) string {
	cp := t.Cluster
	if cp == "" && snap != nil && len(snap.Clusters) > 0 {
		cp = snap.Clusters[0].ID
	}
	if snap != nil {
		cp = ContextClusterID(snap, cp)
	}
	return cp
}
