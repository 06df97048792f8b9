package explain

import (
	"time"

	"github.com/meshscope/meshscope/analysis/fleet"
	"github.com/meshscope/meshscope/analysis/plane"
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
	// Gateways is what the control planes really sent the east-west
	// gateway pods meshscope impersonated.
	Gateways []SentGateway
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
	// Planes are the control-plane views of the diagnosed snapshot, built
	// with Istiod (nil: Run builds them; a reader that also explains the
	// same snapshot, the UI, builds them once for both).
	Planes *plane.Set
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
