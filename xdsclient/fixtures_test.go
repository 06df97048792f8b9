package xdsclient

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

const helloEDS = "outbound|5000||helloworld.sample.svc.cluster.local"
const sleepEDS = "outbound|80||sleep.sample.svc.cluster.local"

// testServer is go-control-plane's ADS server on a loopback port, recording
// the requests it gets so tests can check ACKs and NACKs.
type testServer struct {
	addr  string
	cache cachev3.SnapshotCache
	gs    *grpc.Server
	done  chan struct{}

	mu    sync.Mutex
	sotw  []*discovery.DiscoveryRequest
	delta []*discovery.DeltaDiscoveryRequest
}

// startServer listens on addr ("127.0.0.1:0" for a new port); reuse the
// address of a stopped server to simulate istiod restarting in place.
func startServer(t testing.TB, addr string) *testServer {
	t.Helper()
	return startServerHash(t, addr, cachev3.IDHash{})
}

func startServerHash(t testing.TB, addr string, hash cachev3.NodeHash) *testServer {
	var lis net.Listener
	var err error
	for i := 0; i < 50; i++ { // the old socket may linger for a moment
		if lis, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	s := &testServer{addr: lis.Addr().String(), done: make(chan struct{})}
	// ads=false: in ADS mode go-control-plane answers an EDS request only
	// when it names every endpoint resource of the snapshot; istiod answers
	// any subset, which is what the explicit-EDS tests need.
	s.cache = cachev3.NewSnapshotCache(false, hash, nil)
	cb := serverv3.CallbackFuncs{
		StreamRequestFunc: func(_ int64, r *discovery.DiscoveryRequest) error {
			s.mu.Lock()
			s.sotw = append(s.sotw, r)
			s.mu.Unlock()
			return nil
		},
		StreamDeltaRequestFunc: func(_ int64, r *discovery.DeltaDiscoveryRequest) error {
			s.mu.Lock()
			s.delta = append(s.delta, r)
			s.mu.Unlock()
			return nil
		},
	}
	srv := serverv3.NewServer(context.Background(), s.cache, cb)
	s.gs = grpc.NewServer()
	discovery.RegisterAggregatedDiscoveryServiceServer(s.gs, srv)
	go func() { _ = s.gs.Serve(lis); close(s.done) }()
	if _, ok := t.(*testing.T); ok {
		t.Cleanup(s.stop)
	}
	return s
}

func (s *testServer) stop() {
	s.gs.Stop()
	<-s.done
}

func (s *testServer) set(t testing.TB, node, version string, res map[resource.Type][]types.Resource) {
	t.Helper()
	snap, err := cachev3.NewSnapshot(version, res)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cache.SetSnapshot(context.Background(), node, snap); err != nil {
		t.Fatal(err)
	}
}

// requests returns the SotW and delta requests seen so far.
func (s *testServer) requests() ([]*discovery.DiscoveryRequest, []*discovery.DeltaDiscoveryRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*discovery.DiscoveryRequest(nil), s.sotw...), append([]*discovery.DeltaDiscoveryRequest(nil), s.delta...)
}

func adsSource() *core.ConfigSource {
	return &core.ConfigSource{ConfigSourceSpecifier: &core.ConfigSource_Ads{Ads: &core.AggregatedConfigSource{}}}
}

// edsCluster looks like an Istio outbound cluster: EDS, with the
// tlsMode-istio transport socket match.
func edsCluster(name string) *cluster.Cluster {
	m, _ := structpb.NewStruct(map[string]any{"tlsMode": "istio"})
	return &cluster.Cluster{
		Name:                 name,
		ClusterDiscoveryType: &cluster.Cluster_Type{Type: cluster.Cluster_EDS},
		EdsClusterConfig:     &cluster.Cluster_EdsClusterConfig{ServiceName: name, EdsConfig: adsSource()},
		TransportSocketMatches: []*cluster.Cluster_TransportSocketMatch{
			{Name: "tlsMode-istio", Match: m},
			{Name: "tlsMode-disabled"},
		},
	}
}

type ep struct {
	addr     string
	port     uint32
	weight   uint32
	workload string
}

// cla builds a ClusterLoadAssignment the way istiod does: Istio metadata on
// every endpoint, weights explicit.
func cla(name string, eps ...ep) *endpoint.ClusterLoadAssignment {
	var lbs []*endpoint.LbEndpoint
	for _, e := range eps {
		tls, _ := structpb.NewStruct(map[string]any{"tlsMode": "istio"})
		wl, _ := structpb.NewStruct(map[string]any{"workload": e.workload})
		lbs = append(lbs, &endpoint.LbEndpoint{
			HostIdentifier: &endpoint.LbEndpoint_Endpoint{Endpoint: &endpoint.Endpoint{
				Address: &core.Address{Address: &core.Address_SocketAddress{SocketAddress: &core.SocketAddress{
					Address: e.addr, PortSpecifier: &core.SocketAddress_PortValue{PortValue: e.port}}}},
			}},
			HealthStatus:        core.HealthStatus_HEALTHY,
			LoadBalancingWeight: wrapperspb.UInt32(e.weight),
			Metadata: &core.Metadata{FilterMetadata: map[string]*structpb.Struct{
				"envoy.transport_socket_match": tls,
				"istio":                        wl,
			}},
		})
	}
	return &endpoint.ClusterLoadAssignment{
		ClusterName: name,
		Endpoints: []*endpoint.LocalityLbEndpoints{{
			Locality:    &core.Locality{Region: "r1", Zone: "z1"},
			LbEndpoints: lbs,
		}},
	}
}

func httpListener(name, routeName string) *listener.Listener {
	m := &hcm.HttpConnectionManager{
		StatPrefix: name,
		RouteSpecifier: &hcm.HttpConnectionManager_Rds{Rds: &hcm.Rds{
			RouteConfigName: routeName, ConfigSource: adsSource()}},
	}
	a, _ := anypb.New(m)
	return &listener.Listener{
		Name: name,
		Address: &core.Address{Address: &core.Address_SocketAddress{SocketAddress: &core.SocketAddress{
			Address: "0.0.0.0", PortSpecifier: &core.SocketAddress_PortValue{PortValue: 80}}}},
		FilterChains: []*listener.FilterChain{{Filters: []*listener.Filter{{
			Name: "envoy.filters.network.http_connection_manager", ConfigType: &listener.Filter_TypedConfig{TypedConfig: a}}}}},
	}
}

func routeConfig(name string) *route.RouteConfiguration {
	return &route.RouteConfiguration{Name: name, VirtualHosts: []*route.VirtualHost{{
		Name: "helloworld.sample.svc.cluster.local:5000", Domains: []string{"helloworld.sample.svc.cluster.local"},
		Routes: []*route.Route{{Name: "default"}}}}}
}

// lab is the lab's view from network1: the local pod and the
// cluster2 gateway standing for weight pods.
func lab(weight uint32) map[resource.Type][]types.Resource {
	return map[resource.Type][]types.Resource{
		resource.ClusterType: {edsCluster(helloEDS), edsCluster(sleepEDS)},
		resource.EndpointType: {
			cla(helloEDS, ep{"10.44.0.13", 5000, 1, "helloworld-v1-abc;sample;helloworld;v1;cluster1"}, ep{"192.168.60.9", 15443, weight, ";;;;cluster2"}),
			cla(sleepEDS, ep{"10.44.0.14", 80, 1, "sleep-abc;sample;sleep;latest;cluster1"}),
		},
		resource.ListenerType: {httpListener("0.0.0.0_80", "80")},
		resource.RouteType:    {routeConfig("80")},
	}
}

// recorder collects a client's events for tests.
type recorder struct {
	ch chan Event
}

func newRecorder() *recorder { return &recorder{ch: make(chan Event, 4096)} }

func (r *recorder) on(ev Event) { r.ch <- ev }

// wait returns the first event matching ok, failing the test after d.
func (r *recorder) wait(t *testing.T, d time.Duration, what string, ok func(Event) bool) Event {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	var seen []string
	for {
		select {
		case ev := <-r.ch:
			if ok(ev) {
				return ev
			}
			seen = append(seen, string(ev.Type)+":"+ev.Message+ev.Error)
		case <-timer.C:
			t.Fatalf("no %s within %s; saw %q", what, d, seen)
			return Event{}
		}
	}
}

func isType(typ EventType) func(Event) bool { return func(ev Event) bool { return ev.Type == typ } }

// runClient starts a client for vp against addr and stops it at cleanup.
func runClient(t *testing.T, opts Options) (*Client, *recorder) {
	t.Helper()
	rec := newRecorder()
	opts.OnEvent = rec.on
	if opts.DialTimeout == 0 {
		opts.DialTimeout = 2 * time.Second
	}
	if opts.Backoff == (Backoff{}) {
		opts.Backoff = Backoff{Initial: 50 * time.Millisecond, Max: 200 * time.Millisecond}
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	runUntilCleanup(t, c.Run)
	return c, rec
}

// runUntilCleanup runs run in the background until the test ends.
func runUntilCleanup(t *testing.T, run func(context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}
