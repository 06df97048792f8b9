package live

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/istiod"
	"github.com/meshscope/meshscope/xdsclient"
)

// startForwardFunc port-forwards to a port of the istiod pod of kube
// context kctx ("" is the first context) — of revision rev, "" for the one
// --revision names (or the default) — and says which cluster (kube
// context) that istiod is in.
type startForwardFunc func(ctx context.Context, kctx, rev string, port int) (*istiod.PortForward, string, error)

// forwardKey is one port of the istiod of one revision in one kube context.
type forwardKey struct {
	kctx, rev string
	port      int
}

// forwarder keeps one port-forward per kube context and port of its
// istiod pod, shared by every caller (each stream, the istiod poller).
// Once up, a forward heals by itself (istiod.PortForward); a failed attempt
// is remembered and answered from memory until retry has passed, so
// callers asking at once do not hammer the API server.
type forwarder struct {
	// ctx lives until close: forwards outlive the callers that start them.
	ctx   context.Context
	retry time.Duration
	start startForwardFunc

	mu       sync.Mutex
	forwards map[forwardKey]*istiodForward
}

// istiodForward is one port-forward, or its last failure.
type istiodForward struct {
	mu       sync.Mutex
	pf       *istiod.PortForward
	target   Target
	err      error
	failedAt time.Time
}

func newForwarder(ctx context.Context, retry time.Duration, start startForwardFunc) *forwarder {
	return &forwarder{ctx: ctx, retry: retry, start: start, forwards: map[forwardKey]*istiodForward{}}
}

// get returns the local address forwarded to port of the istiod of kube
// context kctx ("" is the first context), starting the forward if there is
// none (and its last failure is older than retry).
func (fw *forwarder) get(ctx context.Context, kctx, rev string, port int) (Target, error) {
	fw.mu.Lock()
	key := forwardKey{kctx, rev, port}
	f := fw.forwards[key]
	if f == nil {
		f = &istiodForward{}
		fw.forwards[key] = f
	}
	fw.mu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pf != nil || (f.err != nil && time.Since(f.failedAt) < fw.retry) {
		return f.target, f.err
	}
	// An attempt gives up when the caller or the session is done; once up,
	// the forward serves every caller until close, whatever their contexts.
	actx, cancel := context.WithCancel(fw.ctx)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	pf, cluster, err := fw.start(actx, kctx, rev, port)
	if err != nil {
		in := ""
		if kctx != "" {
			in = fmt.Sprintf(" in context %q", kctx)
		}
		if rev != "" {
			in += fmt.Sprintf(" (revision %s)", rev)
		}
		f.err, f.failedAt = fmt.Errorf("port-forwarding to istiod's port %d%s failed: %w", port, in, err), time.Now()
		return Target{}, f.err
	}
	f.pf, f.target, f.err = pf, Target{Cluster: cluster, Address: pf.Address}, nil
	slog.Info("port-forwarding to istiod", "pod", pf.Pod, "port", port, "local", pf.Address)
	return f.target, nil
}

func (fw *forwarder) close() {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	for _, f := range fw.forwards {
		f.mu.Lock()
		f.pf.Close()
		f.mu.Unlock()
	}
}

// forwardsToIstiod says whether meshscope reaches istiod by port-forward:
// a real mesh (not the demo) and no control plane given.
func (s *Session) forwardsToIstiod() bool { return s.fwd != nil && len(s.controlPlanes) == 0 }

// controlPlaneFor picks the istiod serving a viewpoint: the one given for
// its control plane (else its cluster), else the first one given; with
// none given, a port-forward to the istiod pod of the first context.
func (s *Session) controlPlaneFor(ctx context.Context, vp xdsclient.Viewpoint) (Target, error) {
	if len(s.controlPlanes) == 0 {
		if s.fwd == nil {
			return Target{}, fmt.Errorf("no istiod address: give --xds-address")
		}
		// Another revision of the first context's primary
		// (cluster1@canary) is reached through its own pod.
		_, rev := model.SplitControlPlane(vp.ControlPlane)
		t, err := s.forwarded(ctx, rev, istiodXDSPort)
		if err != nil {
			return t, fmt.Errorf("no --xds-address, and %w", err)
		}
		return t, nil
	}
	want := vp.ControlPlane
	if want == "" {
		want = vp.Cluster
	}
	for _, t := range s.controlPlanes {
		if t.Cluster == want {
			return t, nil
		}
	}
	t := s.controlPlanes[0]
	if t.Cluster == "" {
		t.Cluster = t.Address
	}
	return t, nil
}

// forwarded is the port-forward to an istiod port, its control plane named
// by cluster ID rather than by the kube context it was found through (a
// context may be called like an EKS ARN while istiod calls its cluster
// cluster1).
func (s *Session) forwarded(ctx context.Context, rev string, port int) (Target, error) {
	t, err := s.fwd.get(ctx, "", rev, port)
	if err != nil || s.reg == nil {
		return t, err
	}
	for _, c := range s.reg.Snapshot().Clusters {
		if c.Source.Kind == model.SourceContext && c.Source.Name == t.Cluster {
			t.Cluster = c.ID
			break
		}
	}
	t.Cluster = model.JoinControlPlane(t.Cluster, rev)
	return t, nil
}
