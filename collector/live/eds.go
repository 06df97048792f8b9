package live

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/meshscope/meshscope/xdsclient"
)

// EDSResult is what one viewpoint's stream brought back in FetchEDS.
type EDSResult struct {
	// ControlPlane is the istiod asked (empty when none could be).
	ControlPlane string
	// LoadAssignments are the EDS received, by EDS cluster name.
	LoadAssignments map[string]xdsclient.LoadAssignment
	// Why says, when a name is missing, what became of the stream.
	Why string
}

// FetchEDS impersonates each viewpoint against its control plane (see
// ControlPlaneFor), asks for the given EDS cluster names only, and waits
// until every name has arrived or timeout passes. The results are in the
// order of vps.
func (s *Session) FetchEDS(ctx context.Context, vps []xdsclient.Viewpoint, names []string, mode xdsclient.Mode, timeout time.Duration) []EDSResult {
	out := make([]EDSResult, len(vps))
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var wg sync.WaitGroup
	for i, vp := range vps {
		t, err := s.ControlPlaneFor(ctx, vp)
		if err != nil {
			out[i] = EDSResult{Why: err.Error()}
			continue
		}
		out[i].ControlPlane = t.Cluster
		c, err := xdsclient.New(xdsclient.Options{Viewpoint: vp, ControlPlane: t.Cluster, Transport: xdsclient.TransportConfig{Address: t.Address}, Mode: mode, EDSNames: names})
		if err != nil {
			out[i] = EDSResult{ControlPlane: t.Cluster, Why: err.Error()}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			awaitEDS(ctx, c, t.Address, names, &out[i])
		}()
	}
	wg.Wait()
	return out
}

// awaitEDS runs c until it holds every name or ctx ends, and fills r.
func awaitEDS(ctx context.Context, c *xdsclient.Client, addr string, names []string, r *EDSResult) {
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = c.Run(cctx) }()
	r.LoadAssignments = map[string]xdsclient.LoadAssignment{}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, n := range names {
			if la, ok := c.LoadAssignment(n); ok {
				r.LoadAssignments[n] = la
			}
		}
		if len(r.LoadAssignments) == len(names) {
			return
		}
		select {
		case <-cctx.Done():
			r.Why = fmt.Sprintf("no EDS from %s within the timeout: %s", addr, c.Status().Message)
			return
		case <-tick.C:
		}
	}
}
