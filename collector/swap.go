package collector

import "github.com/meshscope/meshscope/collector/build"

// pendingSwap is the make-before-break replacement of a cluster's watchers
// after its remote secret's kubeconfig changed (a rotated token), like
// istio's PendingClusterSwap: the new watchers resync from scratch, and
// until they have, snapshots show what the old ones had rather than an
// empty cluster.
type pendingSwap struct {
	prev *build.Part
}

// swapLocked stops e's watchers and remembers their last share of the
// snapshot; applyLocked then starts new ones. Caller holds r.mu.
func (r *Registry) swapLocked(e *entry) {
	e.swap = &pendingSwap{prev: e.w.part.Load()}
	e.w.Stop()
	e.w = nil
}

// part is what a cluster under replacement contributes: the old share
// while the new watcher w has not synced (and the ID is unchanged), else
// fresh. done says the swap is over and can be forgotten.
func (s *pendingSwap) part(w *watched, id string, fresh *build.Part) (part *build.Part, done bool) {
	if s == nil {
		return fresh, false
	}
	if w.Synced() {
		return fresh, true
	}
	if s.prev != nil && s.prev.ID == id {
		return s.prev, false
	}
	return fresh, false
}
