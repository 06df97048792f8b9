package live

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// Ambient mode: ztunnels get the workload API (WDS), and what an istiod
// sends over it does not depend on the client, so one impersonated ztunnel
// per control plane shows what every ztunnel of that istiod gets.

// ControlPlaneIDs are the control planes meshscope can ask, named by
// cluster ID: every one given (an address given without a cluster is the
// first context's istiod), else the istiod of the first context, reached
// through the port-forward.
func (s *Session) ControlPlaneIDs(snap *model.Snapshot) []string {
	first := firstContextCluster(snap)
	if len(s.controlPlanes) == 0 {
		if first == "" {
			return nil
		}
		// The first context's istiod, and its other revisions (each
		// reached through its own pod).
		return append([]string{first}, snap.RevisionControlPlanes(first)...)
	}
	var out []string
	for _, t := range s.controlPlanes {
		cp := t.Cluster
		if cp == "" {
			cp = first
		}
		out = append(out, ContextClusterID(snap, cp))
	}
	return out
}

// firstContextCluster is the ID of the first cluster read through a context.
func firstContextCluster(snap *model.Snapshot) string {
	for i := range snap.Clusters {
		if snap.Clusters[i].IsContext() {
			return snap.Clusters[i].ID
		}
	}
	return ""
}

// ContextClusterID maps a kube context name to the ID of its cluster (they
// differ when a remote secret or --cluster-id names it otherwise).
func ContextClusterID(snap *model.Snapshot, name string) string {
	if cluster, rev := model.SplitControlPlane(name); rev != "" {
		// A revision of it: CONTEXT@REV.
		return model.JoinControlPlane(ContextClusterID(snap, cluster), rev)
	}
	if snap.ClusterByID(name) != nil {
		return name
	}
	for _, c := range snap.Clusters {
		for _, s := range append([]model.SourceRef{c.Source}, c.Sources...) {
			if s.Kind == model.SourceContext && s.Name == name {
				return c.ID
			}
		}
	}
	return name
}

// ztunnelViewpoint asks ControlPlaneFor for the istiod of cp.
func ztunnelViewpoint(cp string) xdsclient.Viewpoint { return xdsclient.Viewpoint{ControlPlane: cp} }

// ensureZtunnel starts the ztunnel of control plane cp (see launch).
func (f *Feed) ensureZtunnel(cp string) {
	id := xdsclient.ZtunnelIdentity{Cluster: cp}
	f.launch(id.String(), ztunnelViewpoint(cp), func() bool {
		_, have := f.ztunnels[cp]
		return have
	}, func() { f.ztOrder = append(f.ztOrder, cp) }, func(t Target, conn *grpc.ClientConn) (func(context.Context) error, error) {
		c, err := xdsclient.NewWDS(xdsclient.WDSOptions{Identity: id, ControlPlane: cp, Conn: conn,
			Transport: xdsclient.TransportConfig{Address: t.Address}, OnEvent: f.onEvent})
		if err != nil {
			return nil, err
		}
		f.mu.Lock()
		f.ztunnels[cp] = c
		f.mu.Unlock()
		return c.Run, nil
	})
}

// Ztunnels are the control planes the feed impersonates a ztunnel
// against (running, or tried), in the order they appeared.
func (f *Feed) Ztunnels() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ztOrder...)
}

// WDS is what the ztunnel on control plane cp holds for a service
// ("namespace/hostname"); false without a stream, or before istiod's first
// response (a stream that went down keeps what it held: see Status).
func (f *Feed) WDS(cp, serviceKey string) (xdsclient.WDSServiceView, bool) {
	f.mu.Lock()
	c := f.ztunnels[cp]
	f.mu.Unlock()
	if c == nil || c.Status().LastResponse.IsZero() {
		return xdsclient.WDSServiceView{}, false
	}
	return c.ServiceView(serviceKey), true
}

// ztunnelStatus is the stream state of every ztunnel, in ztOrder (f.mu held).
func (f *Feed) ztunnelStatus() []xdsclient.StreamStatus {
	out := make([]xdsclient.StreamStatus, 0, len(f.ztOrder))
	for _, cp := range f.ztOrder {
		k := xdsclient.ZtunnelIdentity{Cluster: cp}.String()
		if c := f.ztunnels[cp]; c != nil {
			st := c.Status()
			out = append(out, xdsclient.StreamStatus{Viewpoint: k, ControlPlane: cp, State: st.State, Stale: st.Stale, LastPush: st.LastResponse})
			continue
		}
		out = append(out, xdsclient.StreamStatus{Viewpoint: k, ControlPlane: cp, State: xdsclient.StateNoStream, Reason: f.failed[k].why, Stale: true})
	}
	return out
}

// WDSResult is what one control plane's ztunnel stream brought back in
// FetchWDS.
type WDSResult struct {
	ControlPlane string
	// Client holds istiod's first (full) response, and is stopped; nil
	// when none came.
	Client *xdsclient.WDSClient
	// Why says what became of the stream when nothing came.
	Why string
}

// FetchWDS impersonates a ztunnel against each control plane (named as
// ControlPlaneIDs names them; one not given is answered by the istiod
// ControlPlaneFor picks, and named after it) and waits until each has istiod's first
// response (the whole state: a ztunnel's subscription is a wildcard) or
// timeout passes. The results are in the order of cps.
func (s *Session) FetchWDS(ctx context.Context, cps []string, timeout time.Duration) []WDSResult {
	out := make([]WDSResult, len(cps))
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var wg sync.WaitGroup
	for i, cp := range cps {
		out[i].ControlPlane = cp
		t, err := s.controlPlaneFor(ctx, ztunnelViewpoint(cp))
		if err != nil {
			out[i].Why = err.Error()
			continue
		}
		// Without a control plane of that name, ControlPlaneFor picks
		// another: the result is that istiod's.
		if t.Cluster != cp && s.reg.Snapshot().ClusterByID(t.Cluster) != nil {
			cp = t.Cluster
			out[i].ControlPlane = cp
		}
		first := make(chan xdsclient.Event, 1)
		c, err := xdsclient.NewWDS(xdsclient.WDSOptions{Identity: xdsclient.ZtunnelIdentity{Cluster: cp}, ControlPlane: cp,
			Transport: xdsclient.TransportConfig{Address: t.Address},
			OnEvent: func(e xdsclient.Event) {
				if e.Type == xdsclient.EventWDS || e.Type == xdsclient.EventNACK {
					select {
					case first <- e:
					default:
					}
				}
			}})
		if err != nil {
			out[i].Why = err.Error()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, stop := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { _ = c.Run(cctx); close(done) }()
			defer func() { stop(); <-done }()
			select {
			case e := <-first:
				if e.Type == xdsclient.EventWDS {
					out[i].Client = c
					return
				}
				out[i].Why = "meshscope rejected istiod's WDS: " + e.Error
			case <-ctx.Done():
				out[i].Why = fmt.Sprintf("no WDS from %s within the timeout: %s", t.Address, c.Status().Message)
			}
		}()
	}
	wg.Wait()
	return out
}
