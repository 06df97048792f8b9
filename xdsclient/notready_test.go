package xdsclient

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// notReady answers like istiod before its caches sync (pilot/pkg/xds/ads.go):
// Unavailable "server is not ready to serve discovery information", for the
// first few streams; then it serves.
type notReady struct {
	serverv3.Server
	refuse atomic.Int32
}

func (n *notReady) DeltaAggregatedResources(s discovery.AggregatedDiscoveryService_DeltaAggregatedResourcesServer) error {
	if n.refuse.Add(-1) >= 0 {
		return status.Error(codes.Unavailable, "server is not ready to serve discovery information")
	}
	return n.Server.DeltaAggregatedResources(s)
}

func TestIstiodNotReady(t *testing.T) {
	cache := cachev3.NewSnapshotCache(false, cachev3.IDHash{}, nil)
	snap, _ := cachev3.NewSnapshot("v1", lab(1))
	_ = cache.SetSnapshot(context.Background(), net1.NodeID(), snap)
	nr := &notReady{Server: serverv3.NewServer(context.Background(), cache, nil)}
	nr.refuse.Store(2)
	gs := grpc.NewServer()
	discovery.RegisterAggregatedDiscoveryServiceServer(gs, nr)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)

	c, rec := runClient(t, Options{Viewpoint: net1, Transport: TransportConfig{Address: lis.Addr().String()}})
	ev := rec.wait(t, 5*time.Second, "not-ready error", isType(EventError))
	if !strings.Contains(ev.Message, "not ready yet") {
		t.Errorf("message = %q", ev.Message)
	}
	rec.wait(t, 5*time.Second, "connect once ready", isType(EventConnect))
	rec.wait(t, 5*time.Second, "eds", isType("eds"))
	if st := c.Status(); st.State != StateConnected || st.Stale {
		t.Errorf("status = %+v", st)
	}
}
