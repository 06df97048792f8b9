package explain

import (
	"time"

	"github.com/meshscope/meshscope/analysis/fleet"
	"github.com/meshscope/meshscope/model"
)

// Inputs are what a diagnosis knows beyond one snapshot: istiod's own views,
// what each control plane really sent, and the clock.
type Inputs struct {
	// Now is the time of the diagnosis (default: time.Now()).
	Now time.Time
	// Since is when meshscope started watching: a stale endpoint first
	// seen in this run has been stale at least since then (default Now).
	Since time.Time
	// Istiod is each reachable istiod's own view (clusterz, networkz).
	Istiod []model.IstiodView
	// Sent is what the control planes really sent, one entry per
	// (control plane, viewpoint). Empty: a prediction-only diagnosis.
	Sent []Sent
	// WDS is what the control planes really sent a ztunnel (ambient
	// mode), one entry per control plane.
	WDS []SentWDS
	// SkewThreshold is how far, in percentage points, the share of traffic
	// that crosses networks may stray from what endpoint counts give
	// before it is reported (default DefaultSkewThreshold).
	SkewThreshold int
	// LBPendingAfter is how long a gateway's load balancer may stay
	// pending before it is an error (default DefaultLBPendingAfter).
	LBPendingAfter time.Duration
	// Stale remembers when each stale endpoint was first seen across
	// diagnoses (a long-running reader keeps one); nil: since Since.
	Stale *StaleTracker
	// Fleet is the mesh's real proxies joined with every istiod's syncz
	// (nil: not read); StaleAfter is how long a proxy may leave a push
	// unacknowledged before it is reported (default DefaultStaleAfter).
	Fleet      *fleet.Fleet
	StaleAfter time.Duration
	// Skip names checks not to run (Checks; doctor --skip).
	Skip []string
}

// Defaults of Inputs.
const (
	DefaultSkewThreshold  = 10
	defaultLBPendingAfter = time.Minute
)

func (in *Inputs) defaults() {
	if in.Now.IsZero() {
		in.Now = time.Now()
	}
	if in.Since.IsZero() || in.Since.After(in.Now) {
		in.Since = in.Now
	}
	if in.SkewThreshold <= 0 {
		in.SkewThreshold = DefaultSkewThreshold
	}
	if in.LBPendingAfter <= 0 {
		in.LBPendingAfter = defaultLBPendingAfter
	}
	if in.StaleAfter <= 0 {
		in.StaleAfter = DefaultStaleAfter
	}
}

// Diagnose lists everything wrong in the mesh, errors first, repeated
// causes grouped into one row: the clusters, remote secrets and root CAs;
// what each control plane reads; east-west gateways; services missing or
// inconsistent across clusters; locality failover and config skew between
// primaries; every service predicted from every network by each control
// plane (leaks, drops, skew beyond what endpoint counts explain); istiod's
// own view; and, when in.Sent is given, where each control plane's real EDS
// differs from its prediction (stale endpoints among them). In ambient
// mode: networks without an HBONE gateway, several gateways per network,
// services global in some clusters only, and, with in.WDS, where what each
// control plane sends ztunnels differs from its prediction.
func Diagnose(snap *model.Snapshot, in Inputs) []model.Problem {
	return Run(snap, in).Problems
}

// istiodViewOf returns the view of the istiod of control plane cp, if read.
// Another revision of a primary (cluster1@canary) without a view of its
// own takes its primary's: both read the same remote secrets and resolve
// the same names.
func istiodViewOf(views []model.IstiodView, cp string) *model.IstiodView {
	for _, name := range []string{cp, model.ControlPlaneCluster(cp)} {
		for i := range views {
			if views[i].ControlPlane == name {
				return &views[i]
			}
		}
	}
	return nil
}

// ReadsOf is the set of clusters the istiod of cp reads, and where meshscope
// learned it: "secrets" (the remote secrets in cp), else "clusterz"
// (istiod's /debug/clusterz among views); known is false when neither is
// at hand.
func ReadsOf(snap *model.Snapshot, cp string, views []model.IstiodView) (ids []string, from string, known bool) {
	if ids, known := snap.ClustersReadBy(cp); known {
		return ids, "secrets", true
	}
	if v := istiodViewOf(views, cp); v != nil && len(v.Clusters) > 0 {
		for _, c := range v.Clusters {
			ids = append(ids, c.ID)
		}
		return ids, "clusterz", true
	}
	return nil, "", false
}

// ViewFor is the mesh as the istiod of cp sees it: the clusters its remote
// secrets declare, else those its /debug/clusterz lists (views), else —
// when neither is known — the whole snapshot; the gateways of a DNS name
// at the addresses istiod resolved, where its /debug/networkz is read.
func ViewFor(snap *model.Snapshot, cp string, views []model.IstiodView) *model.Snapshot {
	ids, _, known := ReadsOf(snap, cp, views)
	switch {
	case known:
		snap = snap.Restrict(cp, ids)
	case snap.RevisionPlane(cp) != nil:
		snap = snap.ForControlPlane(cp) // another revision's config, every cluster
	}
	// The gateways a DNS name gives are istiod's where its view is read.
	snap, _ = withIstiodNames(snap, views, cp)
	return snap
}

// UnknownControlPlanes are the control planes whose set of clusters
// meshscope cannot tell (their remote secrets are not read and their
// clusterz is not at hand): a diagnosis cannot say whether they miss one.
func UnknownControlPlanes(snap *model.Snapshot, views []model.IstiodView) []string {
	var out []string
	for _, cp := range snap.ControlPlanes() {
		if _, _, known := ReadsOf(snap, cp, views); !known {
			out = append(out, cp)
		}
	}
	return out
}
