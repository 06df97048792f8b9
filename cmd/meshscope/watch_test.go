package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/meshscope/meshscope/xdsclient"
)

const watchHello = "outbound|5000||helloworld.sample.svc.cluster.local"

// syncBuffer is a bytes.Buffer safe for the command's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func watchSnapshot(t *testing.T, gwWeight uint32) map[resource.Type][]types.Resource {
	ep := func(addr string, port, w uint32) *endpoint.LbEndpoint {
		return &endpoint.LbEndpoint{
			HostIdentifier: &endpoint.LbEndpoint_Endpoint{Endpoint: &endpoint.Endpoint{Address: &core.Address{
				Address: &core.Address_SocketAddress{SocketAddress: &core.SocketAddress{Address: addr, PortSpecifier: &core.SocketAddress_PortValue{PortValue: port}}}}}},
			LoadBalancingWeight: wrapperspb.UInt32(w),
		}
	}
	return map[resource.Type][]types.Resource{
		resource.ClusterType: {&cluster.Cluster{Name: watchHello, ClusterDiscoveryType: &cluster.Cluster_Type{Type: cluster.Cluster_EDS},
			EdsClusterConfig: &cluster.Cluster_EdsClusterConfig{ServiceName: watchHello}}},
		resource.EndpointType: {&endpoint.ClusterLoadAssignment{ClusterName: watchHello, Endpoints: []*endpoint.LocalityLbEndpoints{{
			LbEndpoints: []*endpoint.LbEndpoint{ep("10.44.0.13", 5000, 1), ep("192.168.60.9", 15443, gwWeight)}}}}},
	}
}

// TestWatchJSONL runs `meshscope watch` against an in-process xDS server and
// reads its JSON lines: an eds event with the endpoints, then a weight change.
func TestWatchJSONL(t *testing.T) {
	cache := cachev3.NewSnapshotCache(false, cachev3.IDHash{}, nil)
	vp := xdsclient.Viewpoint{Cluster: "cluster1", Network: "network1"}
	set := func(version string, w uint32) {
		snap, err := cachev3.NewSnapshot(version, watchSnapshot(t, w))
		if err != nil {
			t.Fatal(err)
		}
		if err := cache.SetSnapshot(context.Background(), vp.NodeID(), snap); err != nil {
			t.Fatal(err)
		}
	}
	set("v1", 1)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	discovery.RegisterAggregatedDiscoveryServiceServer(gs, serverv3.NewServer(context.Background(), cache, nil))
	go func() { _ = gs.Serve(lis) }()
	defer gs.Stop()

	out := &syncBuffer{}
	root := newRootCmd()
	root.SetOut(out)
	root.SetErr(out)
	root.SetArgs([]string{"watch", "--log-file", "-", "--xds-address", lis.Addr().String(), "--from", "cluster1/network1", "--resource", watchHello})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()

	waitLine := func(what string, ok func(map[string]any) bool) {
		t.Helper()
		end := time.Now().Add(10 * time.Second)
		for time.Now().Before(end) {
			for _, line := range strings.Split(out.String(), "\n") {
				var m map[string]any
				if json.Unmarshal([]byte(line), &m) == nil && ok(m) {
					return
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
		t.Fatalf("no %s in output:\n%s", what, out.String())
	}
	hasEndpoint := func(m map[string]any, change, addr string, port, weight float64) bool {
		eps, _ := m["endpoints"].([]any)
		for _, e := range eps {
			e := e.(map[string]any)
			if e["change"] == change && e["address"] == addr && e["port"] == port && e["weight"] == weight {
				return true
			}
		}
		return false
	}
	waitLine("connect", func(m map[string]any) bool { return m["type"] == "connect" })
	waitLine("eds with the gateway", func(m map[string]any) bool {
		return m["type"] == "eds" && m["viewpoint"] == "cluster1/network1" && hasEndpoint(m, "added", "192.168.60.9", 15443, 1)
	})
	set("v2", 3)
	waitLine("eds weight 1 -> 3", func(m map[string]any) bool {
		return m["type"] == "eds" && hasEndpoint(m, "weight", "192.168.60.9", 15443, 3) && m["endpoints"].([]any)[0].(map[string]any)["oldWeight"] == 1.0
	})
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("watch returned %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("watch did not stop on cancel")
	}
}

func TestWatchErrors(t *testing.T) {
	cases := map[string][]string{
		"at least one --from":     {"watch", "--xds-address", "127.0.0.1:1"},
		"want sotw or delta":      {"watch", "--xds-address", "127.0.0.1:1", "--from", "c/n", "--xds-mode", "rest"},
		"want jsonl or table":     {"watch", "--xds-address", "127.0.0.1:1", "--from", "c/n", "-o", "yaml"},
		"network is not known":    {"watch", "--xds-address", "cluster1=127.0.0.1:1", "--from", "cluster1"},
		"neither a known cluster": {"watch", "--xds-address", "127.0.0.1:1", "--from", "network1"},
		"only sent over TLS":      {"watch", "--xds-address", "127.0.0.1:1", "--from", "c/n", "--token-file", "/dev/null"},
		"--port goes with":        {"watch", "--xds-address", "127.0.0.1:1", "--from", "c/n", "--port", "80"},
		"want NAME.NAMESPACE":     {"watch", "--xds-address", "127.0.0.1:1", "--from", "c/n", "--service", "helloworld"},
		"drop one of them":        {"watch", "--xds-address", "127.0.0.1:1", "--from", "c/n", "--service", "a.b", "--listeners"},
	}
	for want, args := range cases {
		root := newRootCmd()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(append(args, "--log-file", "-"))
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: err = %v, want %q", args, err, want)
		}
	}
}

func TestWatchTable(t *testing.T) {
	var b bytes.Buffer
	ww, err := newWatchWriter(&b, "table")
	if err != nil {
		t.Fatal(err)
	}
	ww.write(xdsclient.Event{Time: time.Date(2026, 1, 1, 1, 2, 3, 0, time.UTC), ControlPlane: "cluster1", Viewpoint: "cluster1/network1",
		Type: "eds", Version: "v2", Resources: 1, Bytes: 2048, Changed: []string{watchHello},
		Endpoints: []xdsclient.EndpointChange{{Cluster: watchHello, Change: "weight", Address: "192.168.60.9", Port: 15443, Weight: 3, OldWeight: 1, WorkloadCluster: "cluster2"}}})
	sh := "network2/SplitHorizonWorkload/istio-system/istio-eastwestgateway/192.168.60.10/ambient/echo.ambient.svc.cluster.local"
	ww.write(xdsclient.Event{Time: time.Date(2026, 1, 1, 1, 2, 4, 0, time.UTC), ControlPlane: "cluster1", Viewpoint: "ztunnel@cluster1",
		Type: "wds", Version: "7", Resources: 1, Removed: []string{sh}, Changed: []string{"ambient/echo.ambient.svc.cluster.local"},
		Addresses: []xdsclient.AddressChange{
			{Name: sh, Kind: "workload", Change: "removed", Workload: &xdsclient.WDSWorkload{UID: sh, Network: "network2", Capacity: 3, CapacitySet: true,
				TunnelProtocol: xdsclient.TunnelHBONE, NetworkGateway: &xdsclient.WDSGateway{Network: "network2", Address: "192.168.60.10", HBONEPort: 15008}}},
			{Name: "ambient/echo.ambient.svc.cluster.local", Kind: "service", Change: "changed", Fields: []string{"addresses"},
				Service: &xdsclient.WDSService{Addresses: []xdsclient.WDSNetworkAddress{{Network: "network1", Address: "10.96.0.49"}}}},
		}})
	got := b.String()
	for _, want := range []string{"01:02:03.000", "cluster1/network1", "eds", "~1 resources", "2.0KiB", "~ 192.168.60.9:15443 weight 1 -> 3  cluster cluster2  (gateway)",
		"ztunnel@cluster1", "-1 ~1 resources", "- workload " + sh + "  (network2 via 192.168.60.10:15008 cap 3 HBONE HEALTHY)",
		"* service ambient/echo.ambient.svc.cluster.local  (vips network1/10.96.0.49)  changed: addresses"} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
}

// watchDemo runs `meshscope watch --demo ARGS...` for 3 s and returns
// the events of its JSON lines.
func watchDemo(t *testing.T, args ...string) []xdsclient.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&bytes.Buffer{})
	root.SetArgs(append(append([]string{"watch", "--demo"}, args...), "--log-file", "-"))
	if err := root.ExecuteContext(ctx); err != nil {
		t.Fatalf("watch --demo %v: %v", args, err)
	}
	var evs []xdsclient.Event
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var ev xdsclient.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		evs = append(evs, ev)
	}
	return evs
}

// TestWatchDemo: watch --demo --from network1 streams push events as JSON
// lines until interrupted; --from ztunnel@cluster1 adds the workload API
// pushes of a ztunnel, with their workloads.
func TestWatchDemo(t *testing.T) {
	var eds, wds int
	for _, ev := range watchDemo(t, "--from", "network1", "--from", "ztunnel@cluster1") {
		if ev.Type == "eds" && ev.Viewpoint != "" {
			eds++
		}
		if ev.Type == "wds" && ev.Viewpoint == "ztunnel@cluster1" && len(ev.Addresses) > 0 && (ev.Addresses[0].Workload != nil || ev.Addresses[0].Service != nil) {
			wds++
		}
	}
	if eds == 0 || wds == 0 {
		t.Errorf("%d eds and %d wds events in 3s of watch --demo", eds, wds)
	}
}

// TestWatchServiceDemo: watch --service asks EDS for that service's ports
// only: no CDS, and every eds event is about helloworld.
func TestWatchServiceDemo(t *testing.T) {
	var eds int
	for _, ev := range watchDemo(t, "--from", "network1", "--service", "helloworld.sample") {
		switch ev.Type {
		case xdsclient.EventCDS:
			t.Errorf("a one-service watch got CDS: %+v", ev)
		case xdsclient.EventEDS:
			eds++
			for _, n := range append(append(ev.Added, ev.Changed...), ev.Removed...) {
				if n != watchHello {
					t.Errorf("eds event about %s", n)
				}
			}
		}
	}
	if eds == 0 {
		t.Error("no eds events in 3s of watch --demo --service")
	}
}

func TestServiceHost(t *testing.T) {
	for in, want := range map[string]string{
		"helloworld.sample":                      "helloworld sample helloworld.sample.svc.cluster.local",
		"helloworld.sample.svc.cluster.local":    "helloworld sample helloworld.sample.svc.cluster.local",
		" reviews.bookinfo.svc.corp.example.com": "reviews bookinfo reviews.bookinfo.svc.corp.example.com",
		"helloworld":                             "error",
		"a.b.c":                                  "error",
		".sample":                                "error",
		"a.b.svc":                                "error",
	} {
		name, ns, host, err := serviceHost(in)
		got := name + " " + ns + " " + host
		if err != nil {
			got = "error"
		}
		if got != want {
			t.Errorf("serviceHost(%q) = %q, want %q", in, got, want)
		}
	}
}
