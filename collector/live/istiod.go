package live

import (
	"context"

	"github.com/meshscope/meshscope/collector/fleet"
	"github.com/meshscope/meshscope/collector/istiod"
)

// IstiodRead is istiod's own view of the mesh as read from one control
// plane's debug address, or why it could not be read.
type IstiodRead struct {
	// ControlPlane names the istiod; Address is its debug host:port.
	ControlPlane string
	Address      string
	View         istiod.View
	Err          error
}

// readsIstiodView says whether IstiodViews can give anything.
func (s *Session) readsIstiodView() bool { return len(s.istiodDebug) > 0 || s.forwardsToIstiod() }

// istiodDebugTargets are the istiod debug endpoints to read istiod's own
// view from: Options.IstiodDebug, else — when meshscope reaches istiod by
// port-forward anyway — a port-forward to the istiod pod's 8080. With
// control planes given by address only, istiod's HTTP address is unknown:
// none. The error says why the port-forward failed.
func (s *Session) istiodDebugTargets(ctx context.Context) ([]Target, error) {
	if len(s.istiodDebug) > 0 || !s.forwardsToIstiod() {
		return s.istiodDebug, nil
	}
	t, err := s.forwarded(ctx, istiodDebugPort)
	if err != nil {
		return nil, err
	}
	return []Target{t}, nil
}

// IstiodViews reads istiod's own view (/debug/clusterz, /debug/networkz)
// from every istiod debug endpoint there is: one read per endpoint, each
// with its error. The error is why there is no endpoint at all (the
// port-forward to the istiod pod failed). An endpoint given without a
// cluster is named after the first cluster of the snapshot: the first
// context, whose istiod it is.
func (s *Session) IstiodViews(ctx context.Context) ([]IstiodRead, error) {
	targets, err := s.istiodDebugTargets(ctx)
	if err != nil {
		return nil, err
	}
	reads := make([]IstiodRead, 0, len(targets))
	for _, t := range targets {
		cp := s.debugControlPlane(t)
		v, err := istiod.FetchView(ctx, cp, t.Address)
		reads = append(reads, IstiodRead{ControlPlane: cp, Address: t.Address, View: v, Err: err})
	}
	return reads, nil
}

// IstiodSyncz reads /debug/syncz — every proxy connected to that istiod —
// from every istiod debug endpoint there is (the same endpoints as
// IstiodViews), one read per endpoint with its error.
func (s *Session) IstiodSyncz(ctx context.Context) ([]fleet.Read, error) {
	targets, err := s.istiodDebugTargets(ctx)
	if err != nil {
		return nil, err
	}
	reads := make([]fleet.Read, 0, len(targets))
	for _, t := range targets {
		cp := s.debugControlPlane(t)
		st, err := istiod.FetchSyncz(ctx, t.Address)
		reads = append(reads, fleet.Read{ControlPlane: cp, Address: t.Address, Statuses: st, Err: err})
	}
	return reads, nil
}

// debugControlPlane names the control plane of a debug target: its
// cluster, else the first cluster of the snapshot (the first context,
// whose istiod a target given without a cluster is), as a cluster ID.
func (s *Session) debugControlPlane(t Target) string {
	cp := t.Cluster
	snap := s.reg.Snapshot()
	if cp == "" && snap != nil && len(snap.Clusters) > 0 {
		cp = snap.Clusters[0].ID
	}
	if snap != nil {
		cp = ContextClusterID(snap, cp)
	}
	return cp
}
