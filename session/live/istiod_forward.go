package live

import (
	"context"
	"sync"

	"github.com/meshscope/meshscope/model"
)

// Every primary's istiod debug endpoint, by port-forward. In multi-primary
// each istiod lists only the proxies connected to it (/debug/syncz), so
// the fleet is whole only when every primary's is read; each istiod runs in
// its own cluster, reached through that cluster's kube context. Port 8080
// is pod-local and answers any caller from localhost — a port-forward
// arrives as localhost — while istiod 1.29+ guards 15014 with
// authorization.

// primary is a control plane (by cluster ID) and the kube context its
// istiod pod is found in ("" is the first context).
// rev is another revision of it (cp is then cluster1@rev), "" for the
// predicted one.
type primary struct{ cp, kctx, rev string }

// primaryContexts are the snapshot's control planes that meshscope reads
// through a kube context. A control plane known only through a remote
// secret has no context to port-forward through: it is left out, and the
// fleet names it as not read. With no control plane known (no snapshot
// yet), the first context, whose istiod meshscope port-forwards to for xDS.
func primaryContexts(snap *model.Snapshot) []primary {
	var out []primary
	for _, cp := range snap.ControlPlanes() {
		if kctx := contextOf(snap.ClusterByID(cp)); kctx != "" {
			out = append(out, primary{cp: cp, kctx: kctx})
			for _, rcp := range snap.RevisionControlPlanes(cp) {
				_, rev := model.SplitControlPlane(rcp)
				out = append(out, primary{cp: rcp, kctx: kctx, rev: rev})
			}
		}
	}
	if len(out) == 0 {
		out = append(out, primary{})
	}
	return out
}

// contextOf is the name of the kube context a cluster is read through, ""
// for none.
func contextOf(c *model.Cluster) string {
	if c == nil {
		return ""
	}
	for _, s := range append([]model.SourceRef{c.Source}, c.Sources...) {
		if s.Kind == model.SourceContext {
			return s.Name
		}
	}
	return ""
}

// forwardedDebugTargets port-forwards to port 8080 of each primary's istiod
// pod (primaryContexts of snap), all at once: one primary whose API server
// does not answer must not hold up the others for its timeout. The
// forwards are kept and heal (forwarder); a failed one is its target's
// error, tried again after the retry delay.
func (s *Session) forwardedDebugTargets(ctx context.Context, snap *model.Snapshot) []debugTarget {
	ps := primaryContexts(snap)
	out := make([]debugTarget, len(ps))
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t, err := s.fwd.get(ctx, p.kctx, p.rev, istiodDebugPort)
			cp := p.cp
			if cp == "" {
				// The first context: named by the forward's context.
				cp = debugControlPlane(snap, Target{Cluster: t.Cluster})
			}
			out[i] = debugTarget{Target: Target{Cluster: cp, Address: t.Address}, err: err}
		}()
	}
	wg.Wait()
	return out
}
