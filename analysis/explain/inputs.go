package explain

import (
	"github.com/meshscope/meshscope/analysis/ambient"
	"github.com/meshscope/meshscope/analysis/fleet"
	"github.com/meshscope/meshscope/model"
)

// Answers are what a reader holds of the control planes beyond the
// snapshot: istiod's own views, what the sidecars meshscope impersonates
// were sent, and what its ztunnels were sent. doctor reads them once (its
// fetches), the UI from its live streams.
type Answers interface {
	// Istiod is each reachable istiod's own view (clusterz, networkz).
	Istiod() []model.IstiodView
	// Fleet is the mesh's real proxies joined with every istiod's syncz
	// (nil: not read).
	Fleet() *fleet.Fleet
	// Sent is what the control planes sent, one entry per (control
	// plane, viewpoint).
	Sent() []Sent
	// SentWDS is what the control planes sent a ztunnel, one entry per
	// control plane.
	SentWDS() []SentWDS
	// SentGateways is what the control planes sent the east-west gateway
	// pods meshscope impersonates (GatewayViewpoints).
	SentGateways() []SentGateway
}

// Gather is the one place a diagnosis's inputs are put together, for
// doctor and the UI alike: base (the clock, thresholds, the stale
// tracker), istiod's views, the fleet of real proxies, what the sidecars
// and the east-west gateway pods were sent and — when the mesh uses ambient
// mode — what the ztunnels were sent, read in that order (what a sidecar is asked may depend on istiod's
// views). src nil: a prediction-only diagnosis.
func Gather(snap *model.Snapshot, base Inputs, src Answers) Inputs {
	if src == nil {
		return base
	}
	base.Istiod = src.Istiod()
	base.Fleet = src.Fleet()
	base.Sent = src.Sent()
	base.Gateways = src.SentGateways()
	if ambient.InUse(snap) {
		base.WDS = src.SentWDS()
	}
	return base
}
