package live

import (
	"context"
	"fmt"
	"time"

	"github.com/meshscope/meshscope/xdsclient"
)

// GatewayResult is what one impersonated gateway proxy brought back in
// FetchGateways: its listeners, clusters and the EDS of every EDS cluster.
type GatewayResult struct {
	ControlPlane string
	Listeners    []xdsclient.Listener
	Clusters     []xdsclient.Cluster
	EDS          map[string]xdsclient.LoadAssignment
	// Why says, when something did not arrive, what became of the stream.
	Why string
}

// FetchGateways impersonates each gateway viewpoint (node type router, a
// gateway pod's identity) against its control plane and waits until its
// LDS, CDS and the EDS of every EDS cluster CDS names have arrived, or
// timeout passes. The results are in the order of vps.
func (s *Session) FetchGateways(ctx context.Context, vps []xdsclient.Viewpoint, mode xdsclient.Mode, timeout time.Duration) []GatewayResult {
	out := make([]GatewayResult, len(vps))
	s.fetchEach(ctx, vps, xdsclient.Options{Mode: mode, Listeners: true}, timeout,
		func(i int, cp, why string) { out[i] = GatewayResult{ControlPlane: cp, Why: why} },
		func(ctx context.Context, i int, cp string, c *xdsclient.Client, changed <-chan struct{}, addr string) {
			out[i].ControlPlane = cp
			awaitGateway(ctx, c, changed, addr, &out[i])
		})
	return out
}

// awaitGateway runs c until it holds LDS, CDS and every EDS cluster CDS
// names, or ctx ends, and fills r. As awaitEDS: it looks again at each of
// c's events (changed, from newFetchClient), reads c while it still runs,
// and returns once c's Run has returned.
func awaitGateway(ctx context.Context, c *xdsclient.Client, changed <-chan struct{}, addr string, r *GatewayResult) {
	cctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() { _ = c.Run(cctx); close(done) }()
	defer func() { stop(); <-done }()
	for {
		p := c.Progress()
		if p.CDS && p.LDS && p.EDS >= p.EDSWanted {
			break
		}
		select {
		case <-ctx.Done():
			st := c.Status()
			r.Why = fmt.Sprintf("the gateway's config did not arrive from %s within the timeout (CDS %t, LDS %t, EDS %d/%d): %s",
				addr, p.CDS, p.LDS, p.EDS, p.EDSWanted, orText(st.Message, string(st.State)))
			r.Listeners, r.Clusters = c.Listeners(), c.Clusters()
			r.EDS = loadAssignments(c)
			return
		case <-changed:
		}
	}
	r.Listeners, r.Clusters = c.Listeners(), c.Clusters()
	r.EDS = loadAssignments(c)
}

func loadAssignments(c *xdsclient.Client) map[string]xdsclient.LoadAssignment {
	out := map[string]xdsclient.LoadAssignment{}
	for _, la := range c.LoadAssignments() {
		out[la.Cluster] = la
	}
	return out
}
