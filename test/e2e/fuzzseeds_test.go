package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/xdsclient"
)

const (
	cdsType = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
	// updateSeedsEnv makes TestCaptureFuzzSeeds write what it captures into
	// xdsclient/testdata/fuzz/FuzzDecodeEDS (commit the result); without
	// it the files go to a temporary folder.
	updateSeedsEnv = "MESHSCOPE_UPDATE_FUZZ_SEEDS"
)

// adsCapture is one plain SotW ADS stream to istiod that keeps the raw
// bytes of every resource: what the fuzz corpus needs is istiod's own
// encoding, not a re-marshalled copy.
type adsCapture struct {
	t      *testing.T
	stream discoveryv3.AggregatedDiscoveryService_StreamAggregatedResourcesClient
	node   *discoveryv3.DiscoveryRequest
}

func newADSCapture(t *testing.T, ctx context.Context, addr string, vp xdsclient.Viewpoint) *adsCapture {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	node, err := vp.Node()
	if err != nil {
		t.Fatal(err)
	}
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(conn).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return &adsCapture{t: t, stream: stream, node: &discoveryv3.DiscoveryRequest{Node: node}}
}

func (a *adsCapture) send(typeURL string, names []string, ack *discoveryv3.DiscoveryResponse) {
	a.t.Helper()
	req := &discoveryv3.DiscoveryRequest{Node: a.node.Node, TypeUrl: typeURL, ResourceNames: names}
	if ack != nil {
		req.VersionInfo, req.ResponseNonce = ack.VersionInfo, ack.Nonce
	}
	if err := a.stream.Send(req); err != nil {
		a.t.Fatal(err)
	}
}

// recv returns the next response of typeURL, ACKing (and skipping) others.
func (a *adsCapture) recv(typeURL string, names []string) *discoveryv3.DiscoveryResponse {
	a.t.Helper()
	for {
		resp, err := a.stream.Recv()
		if err != nil {
			a.t.Fatalf("waiting for %s: %v", typeURL, err)
		}
		if resp.TypeUrl == typeURL {
			return resp
		}
		a.send(resp.TypeUrl, names, resp)
	}
}

// edsNames asks for every cluster (wildcard CDS) and returns the EDS names
// of the outbound ones.
func (a *adsCapture) edsNames() []string {
	a.send(cdsType, nil, nil)
	resp := a.recv(cdsType, nil)
	a.send(cdsType, nil, resp)
	var names []string
	for _, r := range resp.Resources {
		var c clusterv3.Cluster
		if err := proto.Unmarshal(r.Value, &c); err != nil {
			a.t.Fatal(err)
		}
		if c.GetType() != clusterv3.Cluster_EDS || !strings.HasPrefix(c.Name, "outbound|") {
			continue
		}
		name := c.GetEdsClusterConfig().GetServiceName()
		if name == "" {
			name = c.Name
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// eds returns the raw ClusterLoadAssignments of the next EDS response by
// cluster name, and ACKs it.
func (a *adsCapture) eds(names []string) map[string][]byte {
	a.t.Helper()
	resp := a.recv(edsType, names)
	a.send(edsType, names, resp)
	out := map[string][]byte{}
	for _, r := range resp.Resources {
		var cla endpointv3.ClusterLoadAssignment
		if err := proto.Unmarshal(r.Value, &cla); err != nil {
			a.t.Fatalf("istiod sent an EDS resource proto cannot read: %v", err)
		}
		out[cla.ClusterName] = r.Value
	}
	return out
}

// TestCaptureFuzzSeeds records istiod's own EDS encoding for the fuzz
// corpus of the fast EDS decoder (xdsclient FuzzDecodeEDS): every outbound
// cluster as sidecars in each network, a proxy that sends no NETWORK and an
// east-west gateway see it, from both control planes, plus a real push
// sequence (helloworld scaled up by two in cluster2, then down again) as
// (previous, next) pairs. It checks what it captures (istiod's answers
// parse, helloworld has its two endpoints); with MESHSCOPE_UPDATE_FUZZ_SEEDS=1
// it replaces the istiod-* seeds in xdsclient/testdata/fuzz/FuzzDecodeEDS.
func TestCaptureFuzzSeeds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	type view struct {
		name    string
		istiod  int
		vp      xdsclient.Viewpoint
		helloEP int // helloworld endpoints this view gets
	}
	views := []view{
		{"network1", 0, xdsclient.Viewpoint{Cluster: "cluster1", Network: "network1"}, 2},
		{"network2", 0, xdsclient.Viewpoint{Cluster: "cluster2", Network: "network2"}, 2},
		{"no-network", 0, xdsclient.Viewpoint{Cluster: "cluster1", NoNetwork: true}, 2},
		{"gateway-network1", 0, xdsclient.Viewpoint{Cluster: "cluster1", Network: "network1", NodeType: xdsclient.Router, Namespace: "istio-system",
			Labels: map[string]string{"istio": "eastwestgateway", "topology.istio.io/network": "network1"}}, 2},
		{"network2-istiod2", 1, xdsclient.Viewpoint{Cluster: "cluster2", Network: "network2"}, 2},
	}
	captured := map[string]map[string][]byte{} // view → cluster → raw
	var order []string
	for _, v := range views {
		if v.istiod >= len(theLab.Istiods()) {
			continue
		}
		// An earlier test's mutation may still be on its way through
		// istiod: ask again until helloworld is back to the fixture.
		var got map[string][]byte
		eventually(t, 20*time.Second, func() string {
			actx, acancel := context.WithTimeout(ctx, 10*time.Second)
			defer acancel()
			a := newADSCapture(t, actx, theLab.Istiods()[v.istiod].XDSAddress(), v.vp)
			names := a.edsNames()
			if len(names) == 0 {
				return v.name + ": no outbound EDS clusters in CDS"
			}
			a.send(edsType, names, nil)
			got = a.eds(names)
			var cla endpointv3.ClusterLoadAssignment
			if err := proto.Unmarshal(got[helloworldEDS], &cla); err != nil || countEndpoints(&cla) != v.helloEP {
				return fmt.Sprintf("%s: helloworld EDS has %d endpoints (%v), want %d", v.name, countEndpoints(&cla), err, v.helloEP)
			}
			return ""
		})
		captured[v.name] = got
		order = append(order, v.name)
		t.Logf("%s: %d EDS clusters", v.name, len(got))
	}

	// A push sequence on one stream: scale helloworld in cluster2 up by
	// two, then down, as a network1 sidecar sees it.
	a := newADSCapture(t, ctx, theLab.Istiods()[0].XDSAddress(), views[0].vp)
	a.send(edsType, []string{helloworldEDS}, nil)
	before := a.eds([]string{helloworldEDS})[helloworldEDS]
	added := []string{"helloworld-v2-fuzzseed-1", "helloworld-v2-fuzzseed-2"}
	var pods []lab.PodSpec
	for i, name := range added {
		pods = append(pods, lab.PodSpec{Namespace: lab.SampleNamespace, Name: name, IP: fmt.Sprintf("10.144.0.%d", 60+i), Labels: lab.AppLabels("helloworld", "v2", "network2")})
	}
	if err := theLab.AddPods(ctx, "cluster2", pods...); err != nil {
		t.Fatal(err)
	}
	removed := false
	t.Cleanup(func() {
		if !removed {
			for _, name := range added {
				_ = theLab.RemovePod(context.Background(), "cluster2", lab.SampleNamespace, name)
			}
		}
	})
	scaled := nextPush(t, a, before)
	for _, name := range added {
		if err := theLab.RemovePod(ctx, "cluster2", lab.SampleNamespace, name); err != nil {
			t.Fatal(err)
		}
	}
	removed = true
	back := nextPush(t, a, scaled)

	seeds := map[string][2][]byte{
		"istiod-push-scale-up":   {before, scaled},
		"istiod-push-scale-down": {scaled, back},
	}
	// Each capture, with the same cluster as another view got it as the
	// previous state (different endpoints at the same positions).
	for i, name := range order {
		other := captured[order[(i+1)%len(order)]]
		for cluster, raw := range captured[name] {
			prev, ok := other[cluster]
			if !ok {
				prev = raw
			}
			seeds["istiod-"+name+"-"+slug(cluster)] = [2][]byte{prev, raw}
		}
	}
	dir := t.TempDir()
	if os.Getenv(updateSeedsEnv) == "1" {
		root, err := lab.FindRoot()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(root, "xdsclient", "testdata", "fuzz", "FuzzDecodeEDS")
		old, _ := filepath.Glob(filepath.Join(dir, "istiod-*"))
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, pair := range seeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n[]byte(%q)\n", pair[0], pair[1])
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d seeds written to %s", len(seeds), dir)
}

// nextPush waits for an EDS push of helloworld that differs from prev.
func nextPush(t *testing.T, a *adsCapture, prev []byte) []byte {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if raw, ok := a.eds([]string{helloworldEDS})[helloworldEDS]; ok && string(raw) != string(prev) {
			return raw
		}
	}
	t.Fatal("no helloworld EDS push in 20s")
	return nil
}

func countEndpoints(cla *endpointv3.ClusterLoadAssignment) int {
	n := 0
	for _, l := range cla.Endpoints {
		n += len(l.LbEndpoints)
	}
	return n
}

var notSlug = regexp.MustCompile(`[^a-z0-9]+`)

// slug makes a cluster name a file name: outbound|5000||helloworld.sample.svc.cluster.local
// becomes outbound-5000-helloworld-sample.
func slug(s string) string {
	s = strings.TrimSuffix(s, ".svc.cluster.local")
	return strings.Trim(notSlug.ReplaceAllString(strings.ToLower(s), "-"), "-")
}
