package demo

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// xdsServer is the demo's control plane: for every proxy that connects it
// serves CDS (one EDS cluster per service port) and EDS predicted by
// horizon from the collector's current snapshot — the same rules meshscope
// checks real istiods against, so the demo's "actual" and "predicted" agree
// unless the planted churn makes them race — and LDS and RDS shaped like
// istiod's for a sidecar (lds.go), for the proxy-config view; and to every
// ztunnel the workload API of istiod in ambient multi-network mode
// (wds.go), predicted by analysis/ambient.
type xdsServer struct {
	cache cachev3.SnapshotCache
	// wds serves ztunnels (type istio.workload.Address) the workload API.
	wds  *wdsServer
	grpc *grpc.Server
	lis  net.Listener
	log  *slog.Logger
	// serving is closed when the gRPC server's Serve has returned.
	serving chan struct{}

	mu    sync.Mutex
	nodes map[string]view // viewHash ID -> what decides its resources
	snap  *model.Snapshot
	// served is the version of the last snapshot every resource was
	// computed from; servedCh is closed (and replaced) at each update, so
	// waiters (WaitServed) wake up.
	served   uint64
	servedCh chan struct{}
	// conns are the open streams, for the demo's /debug/syncz.
	conns *connections
	// controlPlane is the istiod the server stands in for: it serves
	// what that control plane sees of a snapshot (analysis/plane).
	controlPlane string
}

func newXDSServer(ctx context.Context, controlPlane string, log *slog.Logger) (*xdsServer, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo xDS server: %w", err)
	}
	s := &xdsServer{
		cache:   cachev3.NewSnapshotCache(true, viewHash{}, nil),
		grpc:    grpc.NewServer(),
		lis:     lis,
		log:     log,
		serving: make(chan struct{}),
		nodes:   map[string]view{}, servedCh: make(chan struct{}),
		wds: newWDSServer(controlPlane, log), conns: newConnections(), controlPlane: controlPlane,
	}
	cb := serverv3.CallbackFuncs{
		StreamRequestFunc: func(id int64, req *discoveryv3.DiscoveryRequest) error {
			s.conns.request(id, req.GetNode(), req.GetTypeUrl())
			s.register(req.GetNode())
			return nil
		},
		StreamDeltaRequestFunc: func(id int64, req *discoveryv3.DeltaDiscoveryRequest) error {
			s.conns.request(id, req.GetNode(), req.GetTypeUrl())
			s.register(req.GetNode())
			return nil
		},
		StreamClosedFunc:      func(id int64, node *corev3.Node) { s.conns.closed(id, node) },
		DeltaStreamClosedFunc: func(id int64, node *corev3.Node) { s.conns.closed(id, node) },
	}
	// Address requests go to the one WDS collection, the rest to each
	// sidecar's snapshot.
	classify := func(typeURL string) string {
		if typeURL == xdsclient.AddressTypeURL {
			return "wds"
		}
		return "xds"
	}
	mux := &cachev3.MuxCache{
		Classify:      func(r *cachev3.Request) string { return classify(r.GetTypeUrl()) },
		ClassifyDelta: func(r *cachev3.DeltaRequest) string { return classify(r.GetTypeUrl()) },
		Caches:        map[string]cachev3.Cache{"wds": s.wds.cache, "xds": s.cache},
	}
	discoveryv3.RegisterAggregatedDiscoveryServiceServer(s.grpc, serverv3.NewServer(ctx, mux, cb))
	go func() { defer close(s.serving); _ = s.grpc.Serve(lis) }()
	return s, nil
}

// address is where the real xdsclient connects (plaintext, loopback).
func (s *xdsServer) address() string { return s.lis.Addr().String() }

// stop closes the server's connections and waits for Serve to return.
func (s *xdsServer) stop() {
	s.grpc.Stop()
	<-s.serving
}

// register remembers a new proxy and gives it its snapshot before the
// server answers its first request.
func (s *xdsServer) register(node *corev3.Node) {
	if node == nil || node.GetId() == "" || strings.HasPrefix(node.GetId(), "ztunnel~") {
		return // a ztunnel gets the one WDS collection
	}
	s.mu.Lock()
	id := viewHash{}.ID(node)
	_, known := s.nodes[id]
	if !known {
		s.nodes[id] = viewOf(node)
	}
	snap := s.snap
	v := s.nodes[id]
	s.mu.Unlock()
	if !known && snap != nil {
		s.push(id, v, plane.NewSet(snap, nil).Of(s.controlPlane))
	}
}

// snapshot is the collector snapshot the server serves now.
func (s *xdsServer) snapshot() *model.Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap
}

// update recomputes every known proxy's resources for a new snapshot.
func (s *xdsServer) update(snap *model.Snapshot) {
	s.mu.Lock()
	s.snap = snap
	nodes := make(map[string]view, len(s.nodes))
	for id, v := range s.nodes {
		nodes[id] = v
	}
	s.mu.Unlock()
	pv := plane.NewSet(snap, nil).Of(s.controlPlane) // one view for every node
	for id, v := range nodes {
		s.push(id, v, pv)
	}
	s.wds.update(pv)
	s.mu.Lock()
	s.served = max(s.served, snap.Version)
	close(s.servedCh)
	s.servedCh = make(chan struct{})
	s.mu.Unlock()
}

// waitServed returns once the resources served were computed from a
// snapshot of at least version v (or ctx ends): a client that connects
// then gets what that snapshot predicts, as a real istiod's first answer
// follows its synced registries.
func (s *xdsServer) waitServed(ctx context.Context, v uint64) error {
	for {
		s.mu.Lock()
		served, ch := s.served, s.servedCh
		s.mu.Unlock()
		if served >= v {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// push sets a proxy's snapshot: every type (CDS, EDS, LDS, RDS) at the
// collector snapshot's version, like istiod's full push.
func (s *xdsServer) push(nodeID string, v view, pv *plane.View) {
	snap := pv.Full
	res := resources(pv.Snap, pv.Index, v)
	if v.router {
		res = routerResources(pv.Snap, pv.Index, v, s.controlPlane)
	}
	cs, err := cachev3.NewSnapshot(strconv.FormatUint(snap.Version, 10), res)
	if err == nil {
		err = s.cache.SetSnapshot(context.Background(), nodeID, cs)
	}
	if err != nil {
		s.log.Warn("demo xDS: snapshot", "node", nodeID, "err", err)
	}
}

// resources builds CDS, EDS, LDS and RDS for one proxy from a collector
// snapshot.
func resources(snap *model.Snapshot, ix *horizon.Index, v view) map[resource.Type][]types.Resource {
	cds, eds := defaultClusters(), []types.Resource(nil)
	for _, svc := range snap.Services {
		// The whole service, and each subset of its DestinationRules (the
		// demo's rules are exported everywhere: every proxy sees them).
		subsets := append([]string{""}, horizon.SubsetNames(snap, svc.Hostname)...)
		for _, port := range svc.Ports {
			for _, subset := range subsets {
				p := horizon.PredictSubset(snap, ix, svc.Hostname, subset, port.Port, v.proxy)
				cds = append(cds, outboundEDSCluster(p.EDSCluster))
				eds = append(eds, loadAssignment(p, svc))
			}
		}
	}
	lds, rds := listenersAndRoutes(snap, v)
	return map[resource.Type][]types.Resource{
		resource.ClusterType: cds, resource.EndpointType: eds,
		resource.ListenerType: lds, resource.RouteType: rds,
	}
}

// loadAssignment renders a prediction the way istiod renders EDS: locality
// groups, weights, health, and the istio.workload / tlsMode metadata.
func loadAssignment(p horizon.Prediction, svc *model.Service) *endpointv3.ClusterLoadAssignment {
	cla := &endpointv3.ClusterLoadAssignment{ClusterName: p.EDSCluster}
	var group *endpointv3.LocalityLbEndpoints
	for _, e := range p.Endpoints {
		if group == nil || localityString(group.Locality) != e.Locality || group.Priority != e.Priority {
			group = &endpointv3.LocalityLbEndpoints{Locality: locality(e.Locality), Priority: e.Priority,
				LoadBalancingWeight: wrapperspb.UInt32(e.LocalityWeight)}
			cla.Endpoints = append(cla.Endpoints, group)
		}
		lb := &endpointv3.LbEndpoint{
			HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{Address: &corev3.Address{
				Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
					Address: e.Address, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: e.Port},
				}},
			}}},
			LoadBalancingWeight: wrapperspb.UInt32(e.Weight),
		}
		tls, workload := "istio", ";;;;"+e.Cluster
		switch e.Kind {
		case horizon.Gateway, horizon.Forced:
			// istiod sets no health on a gateway endpoint.
		default:
			// A pod's readiness; a WorkloadEntry or inline ServiceEntry
			// endpoint goes without health, as istiod sends it.
			switch e.Health {
			case horizon.Healthy:
				lb.HealthStatus = corev3.HealthStatus_HEALTHY
			case horizon.Unhealthy:
				lb.HealthStatus = corev3.HealthStatus_UNHEALTHY
			}
			// istio.workload names the pod, or a WorkloadEntry's workload.
			name := e.Pod
			if _, we, ok := strings.Cut(e.Workload, "/"); ok && name == "" {
				name = we
			}
			workload = fmt.Sprintf("%s;%s;%s;%s;%s", name, svc.Namespace, svc.Name, "v1", e.Cluster)
			if len(e.StandsFor) > 0 && !mtls(svc, e) {
				tls = "disabled"
			}
		}
		lb.Metadata = &corev3.Metadata{FilterMetadata: map[string]*structpb.Struct{
			"envoy.transport_socket_match": {Fields: map[string]*structpb.Value{"tlsMode": structpb.NewStringValue(tls)}},
			"istio":                        {Fields: map[string]*structpb.Value{"workload": structpb.NewStringValue(workload)}},
		}}
		group.LbEndpoints = append(group.LbEndpoints, lb)
	}
	return cla
}

func mtls(svc *model.Service, e horizon.Endpoint) bool {
	if sic := svc.Clusters[e.Cluster]; sic != nil {
		for _, ep := range sic.Endpoints {
			if ep.Address == e.Address {
				return ep.TLSMode == "istio"
			}
		}
	}
	return true
}

func locality(s string) *corev3.Locality {
	if s == "" {
		return &corev3.Locality{}
	}
	parts := strings.SplitN(s, "/", 3)
	for len(parts) < 3 {
		parts = append(parts, "")
	}
	return &corev3.Locality{Region: parts[0], Zone: parts[1], SubZone: parts[2]}
}

func localityString(l *corev3.Locality) string {
	return strings.TrimRight(l.GetRegion()+"/"+l.GetZone()+"/"+l.GetSubZone(), "/")
}

// viewHash keys the snapshot cache by what decides a proxy's resources, not
// by node ID alone: meshscope's probes from different viewpoints may share a
// node ID, and istiod answers each connection for its own metadata. The node
// ID is part of the key, so the DNS domain in it (RDS short names) is too.
type viewHash struct{}

func (viewHash) ID(node *corev3.Node) string {
	p := proxyOf(node)
	return node.GetId() + "|" + p.Cluster + "|" + p.Network + "|" + p.IP + "|" + strings.Join(p.NetworkView, ",")
}

// view is what decides a proxy's resources: its horizon viewpoint (EDS;
// its cluster also picks the ClusterIPs of LDS and RDS) and the DNS domain
// of its node ID, "<namespace>.svc.cluster.local", which istiod reads to
// give RDS virtual hosts their short names.
type view struct {
	proxy     horizon.Proxy
	dnsDomain string
	// A gateway proxy (router) is served its second hop (gateway.go): its
	// pod, namespace and labels decide which Gateways select it.
	router         bool
	pod, namespace string
	labels         map[string]string
}

func viewOf(node *corev3.Node) view {
	v := view{proxy: proxyOf(node)}
	if parts := strings.Split(node.GetId(), "~"); len(parts) == 4 {
		v.dnsDomain = parts[3]
	}
	return routerView(node, v)
}

// proxyOf reads the viewpoint istiod would read from a node: CLUSTER_ID,
// NETWORK, the IP in the node ID (or INSTANCE_IPS), REQUESTED_NETWORK_VIEW.
func proxyOf(node *corev3.Node) horizon.Proxy {
	f := node.GetMetadata().GetFields()
	p := horizon.Proxy{
		Cluster: f["CLUSTER_ID"].GetStringValue(),
		Network: f["NETWORK"].GetStringValue(),
	}
	if parts := strings.Split(node.GetId(), "~"); len(parts) == 4 {
		p.IP = parts[1]
	}
	if ips := f["INSTANCE_IPS"].GetStringValue(); ips != "" {
		p.IP = strings.Split(ips, ",")[0]
	}
	if v := f["REQUESTED_NETWORK_VIEW"].GetStringValue(); v != "" {
		p.NetworkView = strings.Split(v, ",")
	}
	return p
}
