package xdsclient

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/anypb"
)

// badServer is a hand-written ADS server: its first CDS response holds a
// Cluster whose Any has garbage bytes, the second a valid one. It records
// the requests so the test can see the NACK and then the ACK.
type badServer struct {
	discovery.UnimplementedAggregatedDiscoveryServiceServer
	mu    sync.Mutex
	sotw  []*discovery.DiscoveryRequest
	delta []*discovery.DeltaDiscoveryRequest
}

var garbage = &anypb.Any{TypeUrl: ClusterTypeURL, Value: []byte{0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01}}

func goodCluster(t *testing.T) *anypb.Any {
	a, err := anypb.New(edsCluster(helloEDS))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func (b *badServer) StreamAggregatedResources(s discovery.AggregatedDiscoveryService_StreamAggregatedResourcesServer) error {
	sent := 0
	for {
		r, err := s.Recv()
		if err != nil {
			return err
		}
		b.mu.Lock()
		b.sotw = append(b.sotw, r)
		b.mu.Unlock()
		if r.GetTypeUrl() != ClusterTypeURL {
			continue
		}
		switch sent {
		case 0:
			err = s.Send(&discovery.DiscoveryResponse{TypeUrl: ClusterTypeURL, VersionInfo: "bad", Nonce: "n1", Resources: []*anypb.Any{garbage}})
		case 1:
			err = s.Send(&discovery.DiscoveryResponse{TypeUrl: ClusterTypeURL, VersionInfo: "good", Nonce: "n2", Resources: []*anypb.Any{testGood}})
		}
		sent++
		if err != nil {
			return err
		}
	}
}

func (b *badServer) DeltaAggregatedResources(s discovery.AggregatedDiscoveryService_DeltaAggregatedResourcesServer) error {
	sent := 0
	for {
		r, err := s.Recv()
		if err != nil {
			return err
		}
		b.mu.Lock()
		b.delta = append(b.delta, r)
		b.mu.Unlock()
		if r.GetTypeUrl() != ClusterTypeURL {
			continue
		}
		switch sent {
		case 0:
			err = s.Send(&discovery.DeltaDiscoveryResponse{TypeUrl: ClusterTypeURL, SystemVersionInfo: "bad", Nonce: "n1",
				Resources: []*discovery.Resource{{Name: helloEDS, Version: "1", Resource: garbage}}})
		case 1:
			err = s.Send(&discovery.DeltaDiscoveryResponse{TypeUrl: ClusterTypeURL, SystemVersionInfo: "good", Nonce: "n2",
				Resources: []*discovery.Resource{{Name: helloEDS, Version: "2", Resource: testGood}}})
		}
		sent++
		if err != nil {
			return err
		}
	}
}

var testGood *anypb.Any

func TestNACKMalformed(t *testing.T) {
	testGood = goodCluster(t)
	for _, mode := range []Mode{ModeSotW, ModeDelta} {
		t.Run(string(mode), func(t *testing.T) {
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			bs := &badServer{}
			gs := grpc.NewServer()
			discovery.RegisterAggregatedDiscoveryServiceServer(gs, bs)
			go func() { _ = gs.Serve(lis) }()
			t.Cleanup(gs.Stop)
			c, rec := runClient(t, Options{Viewpoint: net1, Mode: mode, Transport: TransportConfig{Address: lis.Addr().String()}})

			nack := rec.wait(t, 5*time.Second, "nack", isType(EventNACK))
			if nack.ResourceType != CDS || nack.Nonce != "n1" || !strings.Contains(nack.Error, "cluster") {
				t.Errorf("nack event = %+v", nack)
			}
			// The NACK on the wire: the bad nonce, an error_detail with the
			// reason, and (SotW) the last accepted version, i.e. none.
			waitFor(t, 3*time.Second, "NACK request", func() bool {
				bs.mu.Lock()
				defer bs.mu.Unlock()
				for _, r := range bs.sotw {
					if r.GetResponseNonce() == "n1" && r.GetErrorDetail() != nil {
						if r.GetVersionInfo() != "" {
							t.Errorf("NACK carries version %q, want the last accepted (none)", r.GetVersionInfo())
						}
						return strings.Contains(r.GetErrorDetail().GetMessage(), "cluster")
					}
				}
				for _, r := range bs.delta {
					if r.GetResponseNonce() == "n1" && r.GetErrorDetail() != nil {
						return strings.Contains(r.GetErrorDetail().GetMessage(), "cluster")
					}
				}
				return false
			})
			// The next, valid response is applied and ACKed.
			cds := rec.wait(t, 5*time.Second, "cds", isType("cds"))
			// "added" proves the rejected response never entered the state.
			if len(cds.Added) != 1 || cds.Added[0] != helloEDS {
				t.Errorf("cds after nack = %+v", cds)
			}
			if cl := c.Clusters(); len(cl) != 1 || cl[0].Name != helloEDS {
				t.Errorf("clusters = %+v", cl)
			}
			waitFor(t, 3*time.Second, "ACK", func() bool {
				bs.mu.Lock()
				defer bs.mu.Unlock()
				for _, r := range bs.sotw {
					if r.GetResponseNonce() == "n2" && r.GetErrorDetail() == nil && r.GetVersionInfo() == "good" {
						return true
					}
				}
				for _, r := range bs.delta {
					if r.GetResponseNonce() == "n2" && r.GetErrorDetail() == nil {
						return true
					}
				}
				return false
			})
		})
	}
}

// listenSilent accepts connections and never answers.
func listenSilent(t *testing.T) string {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		lis.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return lis.Addr().String()
}
