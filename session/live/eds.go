package live

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/meshscope/meshscope/xdsclient"
)

// EDSResult is what one viewpoint's stream brought back in FetchEDS or
// FetchAll.
type EDSResult struct {
	// ControlPlane is the istiod asked (empty when none could be).
	ControlPlane string
	// LoadAssignments are the EDS received, by EDS cluster name.
	LoadAssignments map[string]xdsclient.LoadAssignment
	// Clusters are, for FetchAll, the EDS cluster names CDS listed.
	Clusters []string
	// CDS are the CDS clusters of the EDS names received (how Envoy load
	// balances them), when istiod sent them.
	CDS map[string]xdsclient.Cluster
	// Why says, when a name is missing, what became of the stream.
	Why string
}

// FetchEDS impersonates each viewpoint against its control plane (see
// ControlPlaneFor), asks for the given EDS cluster names only — EDS by
// name, no CDS, so what it receives does not grow with the mesh — and
// waits until every name has arrived or timeout passes. The results are in
// the order of vps.
func (s *Session) FetchEDS(ctx context.Context, vps []xdsclient.Viewpoint, names []string, mode xdsclient.Mode, timeout time.Duration) []EDSResult {
	return s.fetch(ctx, vps, names, mode, timeout)
}

// FetchAll is FetchEDS for everything a proxy at each viewpoint is sent:
// it follows CDS and waits for every EDS cluster CDS names (doctor's
// comparison of what each control plane sends).
func (s *Session) FetchAll(ctx context.Context, vps []xdsclient.Viewpoint, mode xdsclient.Mode, timeout time.Duration) []EDSResult {
	return s.fetch(ctx, vps, nil, mode, timeout)
}

// fetch runs one client per viewpoint until it holds names (nil: every EDS
// cluster of its CDS) or timeout passes.
func (s *Session) fetch(ctx context.Context, vps []xdsclient.Viewpoint, names []string, mode xdsclient.Mode, timeout time.Duration) []EDSResult {
	out := make([]EDSResult, len(vps))
	s.fetchEach(ctx, vps, xdsclient.Options{Mode: mode, EDSNames: names, EDSOnly: names != nil}, timeout,
		func(i int, cp, why string) { out[i] = EDSResult{ControlPlane: cp, Why: why} },
		func(ctx context.Context, i int, cp string, c *xdsclient.Client, changed <-chan struct{}, addr string) {
			out[i].ControlPlane = cp
			awaitEDS(ctx, c, changed, addr, names, &out[i])
		})
	return out
}

// fetchEach is the one-shot fetch of every viewpoint at once (FetchEDS,
// FetchAll, FetchGateways): a client per viewpoint on its control plane —
// o with the viewpoint, control plane, address and a decoder shared by all
// (viewpoints sent the same resource share one decoded copy) filled in —
// run by await until timeout passes; failed says why a viewpoint got no
// client (cp is "" when no control plane could be picked for it).
func (s *Session) fetchEach(ctx context.Context, vps []xdsclient.Viewpoint, o xdsclient.Options, timeout time.Duration,
	failed func(i int, cp, why string), await func(ctx context.Context, i int, cp string, c *xdsclient.Client, changed <-chan struct{}, addr string)) {
	o.Shared = xdsclient.NewShared()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var wg sync.WaitGroup
	for i, vp := range vps {
		t, err := s.controlPlaneFor(ctx, vp)
		if err != nil {
			failed(i, "", err.Error())
			continue
		}
		o := o
		o.Viewpoint, o.ControlPlane, o.Transport = vp, t.Cluster, xdsclient.TransportConfig{Address: t.Address}
		c, changed, err := newFetchClient(o)
		if err != nil {
			failed(i, t.Cluster, err.Error())
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			await(ctx, i, t.Cluster, c, changed, t.Address)
		}()
	}
	wg.Wait()
}

// newFetchClient makes the client of a one-shot fetch, and the channel its
// events wake awaitEDS through: every event of the stream (a response, a
// NACK, a disconnect) says look again, and the client has stored a
// response before it tells of it.
func newFetchClient(o xdsclient.Options) (*xdsclient.Client, <-chan struct{}, error) {
	changed := make(chan struct{}, 1)
	o.OnEvent = func(xdsclient.Event) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	c, err := xdsclient.New(o)
	return c, changed, err
}

// awaitEDS runs c until it holds every name (nil: every EDS cluster its CDS
// names, once CDS has come) or ctx ends, and fills r. It looks again at
// each of c's events (changed, from newFetchClient), and returns once c's
// Run has returned. Run ends when awaitEDS stops it, not with ctx, so that
// its state is read one last time while it still runs.
func awaitEDS(ctx context.Context, c *xdsclient.Client, changed <-chan struct{}, addr string, names []string, r *EDSResult) {
	cctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() { _ = c.Run(cctx); close(done) }()
	defer func() { stop(); <-done }()
	followCDS := names == nil
	r.LoadAssignments = map[string]xdsclient.LoadAssignment{}
	// why is what kept the stream from answering: the last failure seen
	// (between attempts the client is "connecting" again, and at the end
	// only "stopped"), else its state as last seen running.
	why, failed := "no answer", false
	look := func() {
		switch st := c.Status(); {
		case st.State == xdsclient.StateDisconnected && st.Message != "":
			why, failed = st.Message, true
		case st.State == xdsclient.StateConnected:
			why, failed = st.Message, false // it answers: what is missing is not the stream's doing
		case !failed && st.State != xdsclient.StateStopped && st.Message != "":
			why = st.Message
		}
	}
	for {
		look()
		if followCDS {
			names = names[:0]
			for _, cl := range c.Clusters() {
				if cl.Type == "EDS" {
					names = append(names, cl.EDSName())
				}
			}
			r.Clusters = names
		}
		missing := 0
		for _, n := range names {
			if la, ok := c.LoadAssignment(n); ok {
				r.LoadAssignments[n] = la
			} else {
				missing++
			}
		}
		// CDS comes before EDS on a stream that has it: once any cluster
		// arrived, the load balancing of the names is known.
		cds := c.Clusters()
		for _, cl := range cds {
			if _, ok := r.LoadAssignments[cl.EDSName()]; ok {
				if r.CDS == nil {
					r.CDS = map[string]xdsclient.Cluster{}
				}
				r.CDS[cl.EDSName()] = cl
			}
		}
		if len(names) > 0 && missing == 0 && (len(cds) > 0 || !c.FollowsCDS()) {
			return
		}
		select {
		case <-ctx.Done():
			look() // a state that came without an event ("waiting for istiod's first response")
			switch {
			case followCDS && len(names) == 0:
				r.Why = fmt.Sprintf("no CDS from %s within the timeout: %s", addr, why)
			case followCDS:
				r.Why = fmt.Sprintf("%d of %d EDS clusters did not arrive from %s within the timeout: %s", missing, len(names), addr, why)
			default:
				r.Why = fmt.Sprintf("no EDS from %s within the timeout: %s", addr, why)
			}
			return
		case <-changed:
		}
	}
}
