package ambient

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/proto"

	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/xdsclient"
)

// TestCaptureWDSTestdata rewrites xdsclient/testdata/wds-istiod-CLUSTER.pb,
// the pushes the WDS decoder is tested against: the first response each
// lab istiod sends a ztunnel, as raw bytes. It runs only with
// MESHSCOPE_UPDATE_WDS_TESTDATA=1.
func TestCaptureWDSTestdata(t *testing.T) {
	if os.Getenv("MESHSCOPE_UPDATE_WDS_TESTDATA") != "1" {
		t.Skip("set MESHSCOPE_UPDATE_WDS_TESTDATA=1 to rewrite xdsclient/testdata")
	}
	root, err := lab.FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, is := range theLab.Istiods() {
		conn, err := xdsclient.Dial(xdsclient.TransportConfig{Address: is.XDSAddress()})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		s, err := discovery.NewAggregatedDiscoveryServiceClient(conn).DeltaAggregatedResources(ctx)
		if err != nil {
			t.Fatal(err)
		}
		node, err := xdsclient.ZtunnelIdentity{Cluster: is.Cluster}.Node()
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(&discovery.DeltaDiscoveryRequest{Node: node, TypeUrl: xdsclient.AddressTypeURL}); err != nil {
			t.Fatal(err)
		}
		r, err := s.Recv()
		cancel()
		conn.Close()
		if err != nil {
			t.Fatal(err)
		}
		b, err := proto.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(root, "xdsclient", "testdata", "wds-istiod-"+is.Cluster+".pb")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d resources, %d bytes", path, len(r.GetResources()), len(b))
	}
}
