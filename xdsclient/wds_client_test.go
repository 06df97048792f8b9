package xdsclient

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

const helloKey = "sample/helloworld.sample.svc.cluster.local"

func startWDSClient(t *testing.T, addr string) (*WDSClient, *recorder) {
	t.Helper()
	rec := newRecorder()
	c, err := NewWDS(WDSOptions{
		Identity: ZtunnelIdentity{Cluster: "cluster1"}, ControlPlane: "cluster1",
		Transport: TransportConfig{Address: addr}, Backoff: Backoff{Initial: 20 * time.Millisecond, Max: 50 * time.Millisecond},
		OnEvent: rec.on,
	})
	if err != nil {
		t.Fatal(err)
	}
	runUntilCleanup(t, c.Run)
	return c, rec
}

func waitRequests(t *testing.T, s *wdsServer, n int) []*discovery.DeltaDiscoveryRequest {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if reqs, _ := s.seen(); len(reqs) >= n {
			return reqs
		}
		time.Sleep(5 * time.Millisecond)
	}
	reqs, _ := s.seen()
	t.Fatalf("want %d requests, got %d: %v", n, len(reqs), reqs)
	return nil
}

// TestWDSClientPushes: the client subscribes as a ztunnel (wildcard Address,
// node ID and metadata as ztunnel sends them), ACKs every push with its
// nonce, and turns each push into one event with the changes.
func TestWDSClientPushes(t *testing.T) {
	s := startWDSServer(t, "127.0.0.1:0")
	c, log := startWDSClient(t, s.addr)
	reqs := waitRequests(t, s, 1)
	first := reqs[0]
	if first.GetTypeUrl() != AddressTypeURL || len(first.GetResourceNamesSubscribe()) != 0 {
		t.Fatalf("first request: %v", first)
	}
	if id := first.GetNode().GetId(); id != "ztunnel~192.0.2.10~ztunnel-meshscope.istio-system~istio-system.svc.cluster.local" {
		t.Errorf("node id %q", id)
	}
	md := first.GetNode().GetMetadata().AsMap()
	for k, want := range map[string]any{"CLUSTER_ID": "cluster1", "NAMESPACE": "istio-system", "INSTANCE_IPS": "192.0.2.10", "NAME": "ztunnel-meshscope"} {
		if md[k] != want {
			t.Errorf("metadata %s = %v, want %v", k, md[k], want)
		}
	}

	pod1 := wdsPod("cluster1", "network1", "sample", "hello1", "10.44.0.13", helloKey)
	sleep := wdsPod("cluster1", "network1", "sample", "sleep", "10.44.0.14", "sample/sleep.sample.svc.cluster.local")
	sh := wdsSplitHorizon("network2", "istio-system/istio-eastwest", "192.168.60.9", helloKey, 1)
	svc := wdsSvc("sample", "helloworld", WDSNetworkAddress{Network: "network1", Address: "10.96.0.10"})
	n1 := s.push(t, "v1", nil, pod1, sleep, sh, svc)
	ev := log.wait(t, 5*time.Second, "first wds", func(e Event) bool { return e.Type == EventWDS })
	if ev.Version != "v1" || ev.Resources != 4 || len(ev.Added) != 4 || len(ev.Addresses) != 4 || ev.Viewpoint != "ztunnel@cluster1" {
		t.Errorf("first push event: %+v", ev)
	}
	ack := waitRequests(t, s, 2)[1]
	if ack.GetResponseNonce() != n1 || ack.GetErrorDetail() != nil {
		t.Errorf("ack: %v", ack)
	}
	v := c.ServiceView(helloKey)
	if v.Service == nil || len(v.Workloads) != 2 || v.Workloads[0].UID != pod1.Name || !v.Workloads[1].SplitHorizon() {
		t.Errorf("service view: %+v", v)
	}

	// A remote pod more: istiod re-sends the split-horizon workload with
	// capacity 2, and the same local pod (unchanged bytes).
	sh2 := wdsSplitHorizon("network2", "istio-system/istio-eastwest", "192.168.60.9", helloKey, 2)
	s.push(t, "v2", nil, sh2, pod1)
	ev = log.wait(t, 5*time.Second, "second wds", func(e Event) bool { return e.Type == EventWDS && e.Version == "v2" })
	if !reflect.DeepEqual(ev.Changed, []string{sh.Name}) || len(ev.Added)+len(ev.Removed) != 0 {
		t.Errorf("second push: %+v", ev)
	}
	if len(ev.Addresses) != 1 || !reflect.DeepEqual(ev.Addresses[0].Fields, []string{"capacity"}) || ev.Addresses[0].Workload.Capacity != 2 ||
		ev.Addresses[0].Workload.NetworkGateway.String() != "192.168.60.9:15008" {
		t.Errorf("second push changes: %+v", ev.Addresses)
	}

	// The gateway loses its address: istiod removes the split-horizon workload.
	s.push(t, "v3", []string{sh.Name})
	ev = log.wait(t, 5*time.Second, "removal", func(e Event) bool { return e.Type == EventWDS && e.Version == "v3" })
	if !reflect.DeepEqual(ev.Removed, []string{sh.Name}) || ev.Addresses[0].Change != AddressRemoved || ev.Addresses[0].Workload.Network != "network2" {
		t.Errorf("removal: %+v", ev)
	}
	if v := c.ServiceView(helloKey); len(v.Workloads) != 1 {
		t.Errorf("after removal: %+v", v.Workloads)
	}
	if c.len() != 3 || c.lastVersion() != "v3" || c.Status().State != StateConnected {
		t.Errorf("len %d version %s status %+v", c.len(), c.lastVersion(), c.Status())
	}
}

// TestWDSClientNACK: a resource that does not decode rejects the whole push
// with error_detail naming it, and the previous state stays.
func TestWDSClientNACK(t *testing.T) {
	s := startWDSServer(t, "127.0.0.1:0")
	c, log := startWDSClient(t, s.addr)
	waitRequests(t, s, 1)
	pod1 := wdsPod("cluster1", "network1", "sample", "hello1", "10.44.0.13", helloKey)
	s.push(t, "v1", nil, pod1)
	log.wait(t, 5*time.Second, "first", func(e Event) bool { return e.Type == EventWDS })
	bad := &discovery.DeltaDiscoveryResponse{TypeUrl: AddressTypeURL, SystemVersionInfo: "v2", Resources: []*discovery.Resource{
		{Name: "broken", Resource: &anypb.Any{TypeUrl: AddressTypeURL, Value: []byte{0x0a, 0x05, 0x01}}},
	}, RemovedResources: []string{pod1.Name}}
	nonce := s.send(bad)
	ev := log.wait(t, 5*time.Second, "nack", func(e Event) bool { return e.Type == EventNACK })
	if !strings.Contains(ev.Error, "broken") || ev.ResourceType != WDS {
		t.Errorf("nack event: %+v", ev)
	}
	reqs := waitRequests(t, s, 3)
	if r := reqs[2]; r.GetResponseNonce() != nonce || r.GetErrorDetail() == nil || !strings.Contains(r.GetErrorDetail().GetMessage(), "broken") {
		t.Errorf("nack request: %v", r)
	}
	if _, ok := c.Address(pod1.Name); !ok || c.lastVersion() != "v1" {
		t.Errorf("state after nack: version %s, pod kept %v", c.lastVersion(), ok)
	}
}

// TestWDSClientReconnect: after istiod restarts, the client reconnects,
// names what it holds (initial_resource_versions), and takes the first
// response as the whole state: what istiod no longer sends is removed.
func TestWDSClientReconnect(t *testing.T) {
	s := startWDSServer(t, "127.0.0.1:0")
	addr := s.addr
	c, log := startWDSClient(t, addr)
	waitRequests(t, s, 1)
	pod1 := wdsPod("cluster1", "network1", "sample", "hello1", "10.44.0.13", helloKey)
	pod2 := wdsPod("cluster1", "network1", "sample", "hello2", "10.44.0.20", helloKey)
	s.push(t, "v1", nil, pod1, pod2)
	log.wait(t, 5*time.Second, "first", func(e Event) bool { return e.Type == EventWDS })
	s.stop()
	log.wait(t, 5*time.Second, "disconnect", func(e Event) bool { return e.Type == EventDisconnect })
	if st := c.Status(); !st.Stale {
		t.Errorf("status while disconnected: %+v", st)
	}
	s2 := startWDSServer(t, addr)
	reqs := waitRequests(t, s2, 1)
	if got := reqs[0].GetInitialResourceVersions(); len(got) != 2 || got[pod1.Name] != "" {
		t.Errorf("initial_resource_versions: %v", got)
	}
	s2.push(t, "v9", nil, pod1)
	log.wait(t, 5*time.Second, "reconnect", func(e Event) bool { return e.Type == EventReconnect })
	ev := log.wait(t, 5*time.Second, "full state", func(e Event) bool { return e.Type == EventWDS && e.Version == "v9" })
	if !reflect.DeepEqual(ev.Removed, []string{pod2.Name}) || len(ev.Added) != 0 || len(ev.Changed) != 0 {
		t.Errorf("first push after reconnect: %+v", ev)
	}
	if c.len() != 1 || c.Status().Stale {
		t.Errorf("after reconnect: len %d status %+v", c.len(), c.Status())
	}
}

func TestZtunnelIdentity(t *testing.T) {
	if _, err := (ZtunnelIdentity{IP: "nope"}).Node(); err == nil {
		t.Error("a bad IP is accepted")
	}
	z := ZtunnelIdentity{Cluster: "c2", IP: "10.1.2.3", Pod: "ztunnel-abc", NodeName: "n1", Metadata: map[string]string{"FOO": "bar"}}
	n, err := z.Node()
	if err != nil {
		t.Fatal(err)
	}
	if n.GetId() != "ztunnel~10.1.2.3~ztunnel-abc.istio-system~istio-system.svc.cluster.local" {
		t.Errorf("id %s", n.GetId())
	}
	md := n.GetMetadata().AsMap()
	if md["FOO"] != "bar" || md["NODE_NAME"] != "n1" || md["CLUSTER_ID"] != "c2" || md["ISTIO_VERSION"] != probeVersion(defaultIstioVersion) {
		t.Errorf("metadata %v", md)
	}
}

func TestParseZtunnel(t *testing.T) {
	for in, want := range map[string]struct {
		cp string
		ok bool
	}{
		"ztunnel": {"", true}, "ztunnel@cluster1": {"cluster1", true}, " ztunnel@c2 ": {"c2", true},
		"ztunnel@": {"", false}, "cluster1/network1": {"", false}, "ztunnels": {"", false},
	} {
		if cp, ok := ParseZtunnel(in); cp != want.cp || ok != want.ok {
			t.Errorf("%q: %q %v, want %q %v", in, cp, ok, want.cp, want.ok)
		}
	}
}

// TestWDSEnumsJSON: the workload API's enums read back what they write.
func TestWDSEnumsJSON(t *testing.T) {
	w := WDSWorkload{UID: "u", TunnelProtocol: TunnelHBONE, Status: Unhealthy, WorkloadType: WorkloadPod, NetworkMode: networkHost}
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	var back WDSWorkload
	if err := json.Unmarshal(b, &back); err != nil || back.TunnelProtocol != w.TunnelProtocol || back.Status != w.Status ||
		back.WorkloadType != w.WorkloadType || back.NetworkMode != w.NetworkMode {
		t.Errorf("%s read back as %+v (%v)", b, back, err)
	}
	var s WorkloadStatus
	if err := s.UnmarshalText([]byte("7")); err != nil || s != 7 {
		t.Errorf("a newer number: %v %v", s, err)
	}
	if err := s.UnmarshalText([]byte("SICK")); err == nil || !strings.Contains(err.Error(), "HEALTHY, UNHEALTHY") {
		t.Errorf("an unknown name: %v", err)
	}
}
