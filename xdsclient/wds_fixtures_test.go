package xdsclient

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/anypb"
)

// wdsServer is a Delta ADS server for the workload API that a test drives
// by hand, as istiod would push: it records every request and sends the
// responses the test queues, to whichever stream is open.
type wdsServer struct {
	discovery.UnimplementedAggregatedDiscoveryServiceServer
	addr string
	gs   *grpc.Server
	done chan struct{}

	mu       sync.Mutex
	requests []*discovery.DeltaDiscoveryRequest
	streams  int
	out      chan *discovery.DeltaDiscoveryResponse
	nonce    int
}

func startWDSServer(t testing.TB, addr string) *wdsServer {
	t.Helper()
	var lis net.Listener
	var err error
	for i := 0; i < 50; i++ {
		if lis, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	s := &wdsServer{addr: lis.Addr().String(), done: make(chan struct{}), out: make(chan *discovery.DeltaDiscoveryResponse, 16)}
	s.gs = grpc.NewServer()
	discovery.RegisterAggregatedDiscoveryServiceServer(s.gs, s)
	go func() { _ = s.gs.Serve(lis); close(s.done) }()
	t.Cleanup(s.stop)
	return s
}

func (s *wdsServer) stop() {
	s.gs.Stop()
	<-s.done
}

func (s *wdsServer) DeltaAggregatedResources(stream discovery.AggregatedDiscoveryService_DeltaAggregatedResourcesServer) error {
	s.mu.Lock()
	s.streams++
	s.mu.Unlock()
	errc := make(chan error, 1)
	go func() {
		for {
			r, err := stream.Recv()
			if err != nil {
				errc <- err
				return
			}
			s.mu.Lock()
			s.requests = append(s.requests, r)
			s.mu.Unlock()
		}
	}()
	for {
		select {
		case err := <-errc:
			return err
		case r := <-s.out:
			if err := stream.Send(r); err != nil {
				return err
			}
		}
	}
}

// push queues one response with the given addresses and removals.
func (s *wdsServer) push(t testing.TB, version string, removed []string, addrs ...WDSAddress) string {
	t.Helper()
	r := &discovery.DeltaDiscoveryResponse{TypeUrl: AddressTypeURL, SystemVersionInfo: version, RemovedResources: removed}
	for _, a := range addrs {
		b, err := EncodeWDSAddress(a)
		if err != nil {
			t.Fatal(err)
		}
		r.Resources = append(r.Resources, &discovery.Resource{Name: a.Name, Resource: &anypb.Any{TypeUrl: AddressTypeURL, Value: b}})
	}
	return s.send(r)
}

func (s *wdsServer) send(r *discovery.DeltaDiscoveryResponse) string {
	s.mu.Lock()
	s.nonce++
	r.Nonce = fmt.Sprintf("n%d", s.nonce)
	s.mu.Unlock()
	s.out <- r
	return r.Nonce
}

func (s *wdsServer) seen() ([]*discovery.DeltaDiscoveryRequest, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*discovery.DeltaDiscoveryRequest(nil), s.requests...), s.streams
}

// wdsPod is a pod workload as istiod builds it (podWorkloadBuilder).
func wdsPod(cluster, network, ns, name, ip string, services ...string) WDSAddress {
	w := &WDSWorkload{
		UID: cluster + "//Pod/" + ns + "/" + name, Name: name, Namespace: ns, Addresses: []string{ip},
		Network: network, TunnelProtocol: TunnelHBONE, ServiceAccount: "default", Node: "node1",
		CanonicalName: "app", CanonicalRevision: "v1", WorkloadType: WorkloadPod, WorkloadName: "app",
		Status: Healthy, ClusterID: cluster,
	}
	for _, s := range services {
		w.Services = append(w.Services, WDSServicePorts{Service: s, Ports: []WDSPort{{ServicePort: 5000, TargetPort: 5000}}})
	}
	return WDSAddress{Name: w.UID, Workload: w}
}

// wdsSplitHorizon is istiod's createSplitHorizonWorkload.
func wdsSplitHorizon(network, gwSource, gwIP, service string, capacity uint32) WDSAddress {
	uid := network + "/SplitHorizonWorkload/" + gwSource + "/" + gwIP + "/" + service
	w := &WDSWorkload{
		UID: uid, Name: uid, Namespace: "sample", Network: network, TunnelProtocol: TunnelHBONE, WorkloadType: WorkloadPod,
		Status: Healthy, ClusterID: "cluster2", Capacity: capacity, CapacitySet: true,
		NetworkGateway: &WDSGateway{Network: network, Address: gwIP, HBONEPort: 15008},
		Services:       []WDSServicePorts{{Service: service, Ports: []WDSPort{{ServicePort: 5000, TargetPort: 5000}}}},
	}
	return WDSAddress{Name: uid, Workload: w}
}

func wdsSvc(ns, name string, vips ...WDSNetworkAddress) WDSAddress {
	s := &WDSService{Name: name, Namespace: ns, Hostname: name + "." + ns + ".svc.cluster.local", Addresses: vips,
		Ports: []WDSPort{{ServicePort: 5000, TargetPort: 5000}}}
	return WDSAddress{Name: s.key(), Service: s}
}
