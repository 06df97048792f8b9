package live

import (
	"context"
	"fmt"
	"time"

	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/istiod"
)

// Target is one control plane to talk to: the cluster it is primary of
// (empty when only one address is given) and its host:port.
type Target struct {
	Cluster string
	Address string
}

// Options configure Open.
type Options struct {
	// InProcess, when set, is the mesh to read instead of kube contexts:
	// one already running in this process with a control plane of its own
	// (the demo, which the command offering --demo starts and passes).
	InProcess InProcess

	// Collector configures the Registry of a real mesh (not InProcess).
	// Its Kubeconfig, Contexts, SystemNamespace and Revision also say
	// where the istiod pod to port-forward to is: in the first context.
	Collector collector.Options

	// ControlPlanes are the istiods to impersonate proxies against
	// (--xds-address). Empty means a port-forward to the istiod pod of the
	// first context, as istioctl does (the demo: its own control plane).
	ControlPlanes []Target
	// IstiodDebug are istiod HTTP debug addresses (--istiod-debug-address).
	// Empty means port 8080 of every primary's istiod pod, each through its
	// own kube context, when meshscope port-forwards to istiod anyway (no
	// ControlPlanes).
	IstiodDebug []Target

	// RetryDelay is how long a failed port-forward or a stream that failed
	// to start waits before it is tried again (istiod not ready yet, RBAC
	// fixed). Default 15s.
	RetryDelay time.Duration
	// IstiodPoll is how often a Feed reads istiod's debug view. Default 5s.
	IstiodPoll time.Duration
}

// InProcess is a mesh that runs in this process with a control plane of
// its own — the demo (demo.Start) — which a Session reads as it reads a
// real one. live does not link the demo: production sessions carry none of
// it.
type InProcess interface {
	// Collector is its Registry, started.
	Collector() *collector.Registry
	// XDS names its control plane and gives its plaintext xDS address.
	XDS() (controlPlane, address string)
	// Debug gives its istiod debug endpoint (/debug/syncz, clusterz,
	// networkz), read as --istiod-debug-address; "" for none.
	Debug() (controlPlane, address string)
	// WaitServed waits until the control plane serves a snapshot version.
	WaitServed(ctx context.Context, version uint64) error
	// Stop stops it.
	Stop()
}

// Defaults of Options.
const (
	defaultRetryDelay = 15 * time.Second
	defaultIstiodPoll = 5 * time.Second
)

// forwardTimeout bounds each attempt to port-forward to istiod.
const forwardTimeout = 15 * time.Second

// istiod's ports meshscope forwards to.
const (
	istiodXDSPort   = 15010
	istiodDebugPort = 8080
)

// Session is an open mesh: a running collector, the control planes to ask
// and, when meshscope reaches istiod through the API server, the
// port-forwards to it. It is safe for concurrent use.
type Session struct {
	reg *collector.Registry
	// demoServed waits until the demo's control plane serves a snapshot
	// version (nil outside the demo).
	demoServed    func(ctx context.Context, version uint64) error
	controlPlanes []Target
	istiodDebug   []Target
	syncTimeout   time.Duration
	retry         time.Duration
	istiodPoll    time.Duration
	// fwd port-forwards to istiod pods: xDS to the first context's, debug
	// to every primary's; nil for the demo, which serves xDS itself.
	fwd  *forwarder
	stop func()
}

// Open reads the in-process mesh (o.InProcess) or starts the collector on the kube
// contexts of o.Collector and their remote secrets. It returns at once:
// clusters sync in the background (see Settle). Close stops everything.
func Open(ctx context.Context, o Options) (*Session, error) {
	s := &Session{controlPlanes: o.ControlPlanes, istiodDebug: o.IstiodDebug,
		retry: o.RetryDelay, istiodPoll: o.IstiodPoll, syncTimeout: o.Collector.SyncTimeout}
	if s.retry <= 0 {
		s.retry = defaultRetryDelay
	}
	if s.istiodPoll <= 0 {
		s.istiodPoll = defaultIstiodPoll
	}
	if d := o.InProcess; d != nil {
		if len(s.controlPlanes) == 0 {
			cp, addr := d.XDS()
			s.controlPlanes = []Target{{Cluster: cp, Address: addr}}
		}
		if cp, addr := d.Debug(); len(s.istiodDebug) == 0 && addr != "" {
			// Its istiod debug endpoint, as --istiod-debug-address.
			s.istiodDebug = []Target{{Cluster: cp, Address: addr}}
		}
		s.reg, s.syncTimeout, s.stop = d.Collector(), 5*time.Second, d.Stop
		s.demoServed = d.WaitServed
		return s, nil
	}
	if s.syncTimeout <= 0 {
		s.syncTimeout = collector.DefaultSyncTimeout
	}
	reg, err := collector.NewRegistry(o.Collector)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = reg.Run(runCtx); close(done) }()
	kube := istiod.Kube{Kubeconfig: o.Collector.Kubeconfig, Contexts: o.Collector.Contexts, Revision: o.Collector.Revision}
	ns := o.Collector.SystemNamespace
	if ns == "" {
		ns = istiod.DefaultNamespace
	}
	s.reg = reg
	s.fwd = newForwarder(runCtx, s.retry, func(ctx context.Context, kctx, rev string, port int) (*istiod.PortForward, string, error) {
		k := kube
		if rev != "" {
			k.Revision = rev
		}
		return k.PortForwardIn(ctx, kctx, ns, port, forwardTimeout)
	})
	s.stop = func() {
		cancel()
		<-done
		s.fwd.close()
	}
	return s, nil
}

// Registry is the running collector.
func (s *Session) Registry() *collector.Registry { return s.reg }

// ControlPlanes are the control planes given (or the demo's); empty means
// istiod is reached through a port-forward (see ControlPlaneFor).
func (s *Session) ControlPlanes() []Target { return append([]Target(nil), s.controlPlanes...) }

// Settle waits until every cluster is synced, timed out or in error. Past
// its own deadline (twice the sync timeout and a margin) it returns what
// there is: unsettled clusters show their state. It fails only when ctx
// ends first.
func (s *Session) Settle(ctx context.Context) (*model.Snapshot, error) {
	// The margin covers clusters found late through remote secrets.
	waitCtx, cancel := context.WithTimeout(ctx, 2*s.syncTimeout+5*time.Second)
	defer cancel()
	snap, err := s.reg.WaitSettled(waitCtx)
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("interrupted")
	}
	if snap == nil {
		snap = s.reg.Snapshot()
	}
	if s.demoServed != nil && snap != nil {
		// The demo's control plane follows the snapshots in a goroutine of
		// its own: wait until it serves this one, as istiod answers only
		// once synced.
		if err := s.demoServed(waitCtx, snap.Version); err != nil && ctx.Err() != nil {
			return nil, fmt.Errorf("interrupted")
		}
	}
	return snap, nil
}

// Close stops the collector (or the demo) and every port-forward.
func (s *Session) Close() { s.stop() }
