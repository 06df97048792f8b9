package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/meshscope/meshscope/xdsclient"
)

// sidecar is the baseline client: a plain sidecar-shaped ADS stream, what
// an Envoy behind the istio agent asks istiod for. Delta xDS (the agent's
// default, ISTIO_DELTA_XDS), CDS wildcard, then EDS for every EDS cluster
// CDS names; with listeners, LDS wildcard and RDS for every route
// configuration the listeners' HTTP connection managers name, as Envoy
// does. It ACKs every response, decodes only what it needs to follow (CDS,
// LDS) and counts the rest; it shares nothing with meshscope's xdsclient
// but the node identity, so istiod generates the same config for both.
type sidecar struct {
	vp        xdsclient.Viewpoint
	listeners bool

	mu        sync.Mutex
	eds, rds  map[string]bool // wanted -> received
	cds, lds  bool            // a response of each wildcard type arrived
	full      time.Time       // when every wanted resource had arrived once
	responses map[string]int  // by type, after full
	err       error
	done      chan struct{}
}

func newSidecar(vp xdsclient.Viewpoint, listeners bool) *sidecar {
	return &sidecar{vp: vp, listeners: listeners, eds: map[string]bool{}, rds: map[string]bool{},
		responses: map[string]int{}, done: make(chan struct{})}
}

const (
	typeCDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
	typeEDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"
	typeLDS = "type.googleapis.com/envoy.config.listener.v3.Listener"
	typeRDS = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"
	typeHCM = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"
)

// run streams until ctx ends or the stream fails.
func (s *sidecar) run(ctx context.Context, conn *grpc.ClientConn) error {
	defer close(s.done)
	err := s.stream(ctx, conn)
	if ctx.Err() != nil {
		err = nil
	}
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
	return err
}

func (s *sidecar) stream(ctx context.Context, conn *grpc.ClientConn) error {
	node, err := s.vp.Node()
	if err != nil {
		return err
	}
	st, err := discovery.NewAggregatedDiscoveryServiceClient(conn).DeltaAggregatedResources(ctx)
	if err != nil {
		return err
	}
	if err := st.Send(&discovery.DeltaDiscoveryRequest{Node: node, TypeUrl: typeCDS}); err != nil {
		return err
	}
	if s.listeners {
		if err := st.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: typeLDS}); err != nil {
			return err
		}
	}
	clusters := map[string][]string{} // CDS cluster -> the EDS name it asks for
	routes := map[string][]string{}   // listener -> the route names it asks for
	for {
		r, err := st.Recv()
		if err != nil {
			return err
		}
		var follow *discovery.DeltaDiscoveryRequest
		switch r.GetTypeUrl() {
		case typeCDS:
			if err := track(clusters, r, edsNameOf); err != nil {
				return fmt.Errorf("cds: %w", err)
			}
			follow = s.resubscribe(typeEDS, s.eds, union(clusters))
			s.mu.Lock()
			s.cds = true
			s.mu.Unlock()
		case typeLDS:
			if err := track(routes, r, routeNames); err != nil {
				return fmt.Errorf("lds: %w", err)
			}
			follow = s.resubscribe(typeRDS, s.rds, union(routes))
			s.mu.Lock()
			s.lds = true
			s.mu.Unlock()
		case typeEDS:
			s.received(s.eds, r)
		case typeRDS:
			s.received(s.rds, r)
		}
		s.mu.Lock()
		if !s.full.IsZero() {
			s.responses[r.GetTypeUrl()]++
		}
		s.checkFull()
		s.mu.Unlock()
		if err := st.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: r.GetTypeUrl(), ResponseNonce: r.GetNonce()}); err != nil {
			return err
		}
		if follow != nil {
			if err := st.Send(follow); err != nil {
				return err
			}
		}
	}
}

// resubscribe brings have (wanted name -> received) in line with want and
// returns the delta request that says so, or nil when nothing changed.
func (s *sidecar) resubscribe(typeURL string, have, want map[string]bool) *discovery.DeltaDiscoveryRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	req := &discovery.DeltaDiscoveryRequest{TypeUrl: typeURL}
	for n := range want {
		if _, ok := have[n]; !ok {
			have[n] = false
			req.ResourceNamesSubscribe = append(req.ResourceNamesSubscribe, n)
		}
	}
	for n := range have {
		if !want[n] {
			delete(have, n)
			req.ResourceNamesUnsubscribe = append(req.ResourceNamesUnsubscribe, n)
		}
	}
	if len(req.ResourceNamesSubscribe)+len(req.ResourceNamesUnsubscribe) == 0 {
		return nil
	}
	return req
}

func (s *sidecar) received(have map[string]bool, r *discovery.DeltaDiscoveryResponse) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, res := range r.GetResources() {
		if _, ok := have[res.GetName()]; ok {
			have[res.GetName()] = true
		}
	}
	for _, n := range r.GetRemovedResources() {
		if _, ok := have[n]; ok {
			have[n] = true // istiod says it does not exist: answered
		}
	}
}

// checkFull records when every wanted resource has arrived. Caller holds mu.
func (s *sidecar) checkFull() {
	if !s.full.IsZero() || !s.cds || (s.listeners && !s.lds) {
		return
	}
	for _, m := range []map[string]bool{s.eds, s.rds} {
		for _, ok := range m {
			if !ok {
				return
			}
		}
	}
	s.full = time.Now()
}

// fullAt is when the sidecar held every resource (zero: not yet), and the
// EDS clusters it follows.
func (s *sidecar) fullAt() (time.Time, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.full, len(s.eds), s.err
}

// track applies a delta response of a wildcard type to held (resource ->
// the names it asks for of the next type), decoding each resource with
// asks.
func track(held map[string][]string, r *discovery.DeltaDiscoveryResponse, asks func([]byte) (string, []string, error)) error {
	for _, n := range r.GetRemovedResources() {
		delete(held, n)
	}
	for _, res := range r.GetResources() {
		name, names, err := asks(res.GetResource().GetValue())
		if err != nil {
			return err
		}
		held[name] = names
	}
	return nil
}

func union(held map[string][]string) map[string]bool {
	want := map[string]bool{}
	for _, ns := range held {
		for _, n := range ns {
			want[n] = true
		}
	}
	return want
}

// edsNameOf decodes a Cluster: its name and, for an EDS cluster, the EDS
// name it asks for.
func edsNameOf(b []byte) (string, []string, error) {
	var c cluster.Cluster
	if err := proto.Unmarshal(b, &c); err != nil {
		return "", nil, err
	}
	if c.GetType() != cluster.Cluster_EDS {
		return c.GetName(), nil, nil
	}
	n := c.GetEdsClusterConfig().GetServiceName()
	if n == "" {
		n = c.GetName()
	}
	return c.GetName(), []string{n}, nil
}

// routeNames decodes a Listener: its name and the RDS names its HTTP
// connection managers ask for.
func routeNames(b []byte) (string, []string, error) {
	var l listener.Listener
	if err := proto.Unmarshal(b, &l); err != nil {
		return "", nil, err
	}
	var out []string
	chains := l.GetFilterChains()
	if dc := l.GetDefaultFilterChain(); dc != nil {
		chains = append(chains, dc)
	}
	for _, fc := range chains {
		for _, f := range fc.GetFilters() {
			tc := f.GetTypedConfig()
			if tc.GetTypeUrl() != typeHCM {
				continue
			}
			var m hcm.HttpConnectionManager
			if proto.Unmarshal(tc.GetValue(), &m) == nil {
				if n := m.GetRds().GetRouteConfigName(); n != "" {
					out = append(out, n)
				}
			}
		}
	}
	return l.GetName(), out, nil
}
