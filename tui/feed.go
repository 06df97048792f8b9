package tui

import (
	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// Feed delivers everything the UI shows. session/live's Feed implements
// it on top of the collector and the xDS clients; tests use a fake.
//
// The UI reads the channels through tea.Cmds that wait on them and re-arm
// after each message, so Update never blocks. Snapshots is latest-wins (the
// sender may drop an older snapshot nobody read yet); Events is bounded (the
// sender may drop events when the UI falls behind). Closing a channel stops
// the UI from reading it; it does not quit the program.
//
// Actual, Viewpoints and Status are called from Update and from background
// commands: they must be cheap, never block, and be safe for concurrent use
// (they read in-memory copies).
type Feed interface {
	// Snapshots delivers collector snapshots, latest wins.
	Snapshots() <-chan *model.Snapshot
	// Events delivers xDS push and stream events, bounded.
	Events() <-chan xdsclient.Event
	// Actual returns the EDS istiod last sent to a viewpoint (named by
	// xdsclient.Viewpoint.String()) for an EDS cluster name
	// (outbound|PORT||HOST), and the control plane that sent it, if any.
	Actual(viewpoint string, edsCluster string) (*xdsclient.LoadAssignment, string, bool)
	// Viewpoints are the live viewpoints (by default one per network).
	Viewpoints() []xdsclient.Viewpoint
	// Status is the stream state of every viewpoint.
	Status() []xdsclient.StreamStatus
}

// AmbientFeed is the optional part of a Feed that serves, in ambient mode,
// what one impersonated ztunnel per control plane holds (the workload API,
// WDS). What an istiod sends ztunnels does not depend on the ztunnel, so
// the view is per control plane, not per viewpoint.
type AmbientFeed interface {
	// Ztunnels are the control planes with a ztunnel stream (or an
	// attempt at one).
	Ztunnels() []string
	// WDS is what the ztunnel on a control plane holds for a service key
	// ("namespace/hostname"); false before istiod's first response.
	WDS(controlPlane, serviceKey string) (xdsclient.WDSServiceView, bool)
}

// GatewayFeed is the optional part of a Feed that impersonates the
// mesh's east-west gateway pods (routers): their names for ":pc
// gateway@NETWORK" (ConfigFeed.WatchListeners of a name starts its
// stream, Config serves it), and what each started one was sent, for
// doctor's comparison.
type GatewayFeed interface {
	GatewayNames() []string
	SentGateways() []explain.SentGateway
}
