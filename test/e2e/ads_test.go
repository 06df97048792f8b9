package e2e

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/structpb"
)

const (
	edsType       = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"
	helloworldEDS = "outbound|5000||helloworld.sample.svc.cluster.local"
	// The fixture's helloworld EDS as a sidecar of each network gets it
	// (probe.eds, comma-joined): its own pod and the other network's
	// east-west gateway standing for the other pod.
	seedEDSNetwork1 = "10.44.0.13:5000 w=1,192.168.60.9:15443 w=1"
	seedEDSNetwork2 = "10.144.0.15:5000 w=1,192.168.60.113:15443 w=1"
)

// rawEDS asks istiod for one EDS cluster over plain SotW ADS, impersonating
// a sidecar in cluster/network, and returns "address:port weight" per
// endpoint. It is deliberately independent of meshscope's xdsclient: it
// proves what the real istiod sends, against which xdsclient is tested.
func rawEDS(t *testing.T, addr, cluster, network, resource string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	meta, err := structpb.NewStruct(map[string]any{
		"ISTIO_VERSION": "1.31.0",
		"CLUSTER_ID":    cluster,
		"NETWORK":       network,
		"NAMESPACE":     "sample",
		"LABELS":        map[string]any{"app": "e2e-probe"},
		"PROXY_CONFIG":  map[string]any{},
	})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(conn).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node := &corev3.Node{Id: "sidecar~10.44.0.99~e2e-probe.sample~sample.svc.cluster.local", Metadata: meta}
	if err := stream.Send(&discoveryv3.DiscoveryRequest{Node: node, TypeUrl: edsType, ResourceNames: []string{resource}}); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatalf("EDS from %s as %s/%s: %v", addr, cluster, network, err)
	}
	var out []string
	for _, any := range resp.Resources {
		var cla endpointv3.ClusterLoadAssignment
		if err := any.UnmarshalTo(&cla); err != nil {
			t.Fatal(err)
		}
		if cla.ClusterName != resource {
			continue
		}
		for _, loc := range cla.Endpoints {
			for _, lb := range loc.LbEndpoints {
				sa := lb.GetEndpoint().GetAddress().GetSocketAddress()
				out = append(out, fmt.Sprintf("%s:%d w=%d", sa.GetAddress(), sa.GetPortValue(), lb.GetLoadBalancingWeight().GetValue()))
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestLabSplitHorizonEDS: a network1 sidecar gets its own helloworld pod and
// network2's pod rewritten to network2's east-west gateway — the seed
// article's proxy-config endpoints output.
func TestLabSplitHorizonEDS(t *testing.T) {
	addr := theLab.Istiods()[0].XDSAddress()
	got := rawEDS(t, addr, "cluster1", "network1", helloworldEDS)
	want := []string{"10.44.0.13:5000 w=1", "192.168.60.9:15443 w=1"}
	if !slices.Equal(got, want) {
		t.Errorf("network1 EDS for helloworld = %v, want %v", got, want)
	}
	got = rawEDS(t, addr, "cluster2", "network2", helloworldEDS)
	want = []string{"10.144.0.15:5000 w=1", "192.168.60.113:15443 w=1"}
	if !slices.Equal(got, want) {
		t.Errorf("network2 EDS for helloworld = %v, want %v", got, want)
	}
}

// TestLabNoNetworkEDS: a proxy that sends no NETWORK (istiod's
// forceGateway) — record what the real istiod sends it.
func TestLabNoNetworkEDS(t *testing.T) {
	addr := theLab.Istiods()[0].XDSAddress()
	got := rawEDS(t, addr, "cluster1", "", helloworldEDS)
	t.Logf("no-network EDS: %v", got)
	want := []string{"192.168.60.113:15443 w=1", "192.168.60.9:15443 w=1"}
	if !slices.Equal(got, want) {
		t.Errorf("no-network EDS for helloworld = %v, want %v", got, want)
	}
}
