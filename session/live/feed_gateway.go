package live

import (
	"context"
	"sort"

	"google.golang.org/grpc"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/xdsclient"
)

// The feed's east-west gateways: one impersonated gateway pod per network
// gateway (a router with the pod's identity, LDS included), started when a
// reader first asks for its config (":pc gateway@network2") — a gateway
// proxy is sent every service's clusters twice over (outbound and SNI-DNAT),
// so the feed does not hold one per network unless someone looks.

// gatewayPrefix starts a gateway's name among the feed's streams.
const gatewayPrefix = "gateway@"

// GatewayNames are the gateways whose config the feed can show, by name:
// "gateway@NETWORK", "gateway@NETWORK/CLUSTER" when a network has gateways
// in several clusters.
func (f *Feed) GatewayNames() []string {
	gws := f.gatewayViewpoints()
	out := make([]string, 0, len(gws))
	for name := range gws {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// gatewayViewpoints names the first ready router pod behind each network
// gateway of the latest snapshot.
func (f *Feed) gatewayViewpoints() map[string]explain.SentGateway {
	snap := f.s.reg.Snapshot()
	out := map[string]explain.SentGateway{}
	perNet := map[string]int{}
	sents := explain.GatewayViewpoints(snap, nil)
	seen := map[string]bool{}
	for _, s := range sents {
		if !seen[s.Gateway] {
			seen[s.Gateway] = true
			perNet[s.Workload.Network()]++
		}
	}
	for _, s := range sents {
		name := gatewayPrefix + s.Workload.Network()
		if perNet[s.Workload.Network()] > 1 {
			name += "/" + s.Workload.Cluster
		}
		if _, dup := out[name]; !dup {
			out[name] = s
		}
	}
	return out
}

// watchGateway starts the stream of a gateway name (LDS included) unless
// it runs; false for a name that is no gateway.
func (f *Feed) watchGateway(name string) bool {
	s, ok := f.gatewayViewpoints()[name]
	if !ok {
		return false
	}
	vp := s.Viewpoint()
	f.launch(name, vp, func() bool {
		_, have := f.clients[name]
		return have
	}, func() { f.gateways = append(f.gateways, name) }, func(t Target, conn *grpc.ClientConn) (func(context.Context) error, error) {
		c, err := xdsclient.New(xdsclient.Options{Viewpoint: vp, ControlPlane: t.Cluster, Conn: conn, Mode: f.mode, Listeners: true,
			Transport: xdsclient.TransportConfig{Address: t.Address}, OnEvent: f.onEvent, Shared: f.shared})
		if err != nil {
			return nil, err
		}
		f.mu.Lock()
		f.clients[name], f.cps[name], f.gatewayPods[name] = c, t.Cluster, s
		f.mu.Unlock()
		return c.Run, nil
	})
	return true
}

// SentGateways is what each gateway stream started so far holds, as
// doctor's sent-gateway check compares it (streams without CDS yet are
// left out).
func (f *Feed) SentGateways() []explain.SentGateway {
	f.mu.Lock()
	names := append([]string(nil), f.gateways...)
	f.mu.Unlock()
	var out []explain.SentGateway
	for _, name := range names {
		f.mu.Lock()
		c, cp, s := f.clients[name], f.cps[name], f.gatewayPods[name]
		f.mu.Unlock()
		if c == nil || !c.Progress().CDS {
			continue
		}
		s.ControlPlane = clusterIDOf(f.s.reg.Snapshot(), cp)
		s.Listeners, s.Clusters = c.Listeners(), c.Clusters()
		s.EDS = map[string]xdsclient.LoadAssignment{}
		for _, la := range c.LoadAssignments() {
			s.EDS[la.Cluster] = la
		}
		out = append(out, s)
	}
	return out
}
