package live

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/xdsclient"
)

// TestAwaitEDSSaysWhy: a stream that never answers says what kept it
// from answering (nothing listens there), not the "stopped" its client
// says once the wait is over.
func TestAwaitEDSSaysWhy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c, changed, err := newFetchClient(xdsclient.Options{Viewpoint: xdsclient.Viewpoint{Cluster: "cluster1", Network: "network1", NodeType: xdsclient.Sidecar},
		ControlPlane: "cluster1", Transport: xdsclient.TransportConfig{Address: addr}, EDSNames: []string{"outbound|5000||a.b.svc.cluster.local"}, EDSOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var r EDSResult
	awaitEDS(ctx, c, changed, addr, []string{"outbound|5000||a.b.svc.cluster.local"}, &r)
	if !strings.HasPrefix(r.Why, "no EDS from "+addr+" within the timeout: ") || strings.HasSuffix(r.Why, ": stopped") || !strings.Contains(r.Why, "connection refused") {
		t.Errorf("why %q", r.Why)
	}
}
