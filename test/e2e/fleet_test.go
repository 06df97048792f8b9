package e2e

// The fleet against the real lab (multi-primary): proxies that carry the
// identity of lab pods connect to both real istiods over ADS — some ACK
// everything, one never ACKs, one NACKs — beside a pod with an istio-proxy
// container connected to no istiod, a pod injected with an old network, and
// one of meshscope's own probes. `meshscope proxies` must show each with its
// state and control plane as istiod's /debug/syncz has them, and doctor
// must report each problem and clear it when the condition goes.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/structpb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/fleet"
	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/xdsclient"
)

// ackMode is how a fake proxy answers istiod's pushes.
type ackMode int

const (
	ackAll ackMode = iota
	ackNever
	nackAll
)

// fakeProxy is a real ADS client with a lab pod's identity: it asks CDS of
// an istiod and answers every push as mode says, until ctx ends.
func fakeProxy(ctx context.Context, t *testing.T, addr, pod, ns, cluster, network, ip string, mode ackMode) {
	t.Helper()
	fakeProxyVersion(ctx, t, "1.31.0", addr, pod, ns, cluster, network, ip, mode)
}

// fakeProxyVersion is fakeProxy telling istiod it runs Istio version.
func fakeProxyVersion(ctx context.Context, t *testing.T, version, addr, pod, ns, cluster, network, ip string, mode ackMode) {
	t.Helper()
	fakeNode(ctx, t, "sidecar", version, addr, pod, ns, cluster, network, ip, mode)
}

// fakeNode is fakeProxyVersion for a node of any type (a gateway is a router).
func fakeNode(ctx context.Context, t *testing.T, nodeType, version, addr, pod, ns, cluster, network, ip string, mode ackMode) {
	t.Helper()
	startFakeNode(ctx, t, nodeType, version, addr, pod, ns, cluster, network, ip, mode, false)
}

// startFakeNode is fakeNode; with reconnect it opens a new stream whenever
// one ends (an istiod restarted), as a running Envoy does, until ctx ends.
func startFakeNode(ctx context.Context, t *testing.T, nodeType, version, addr, pod, ns, cluster, network, ip string, mode ackMode, reconnect bool) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	context.AfterFunc(ctx, func() { conn.Close() })
	meta, err := structpb.NewStruct(map[string]any{
		"ISTIO_VERSION": version, "CLUSTER_ID": cluster, "NETWORK": network, "NAMESPACE": ns,
		"LABELS": map[string]any{"app": pod}, "PROXY_CONFIG": map[string]any{},
	})
	if err != nil {
		t.Fatal(err)
	}
	node := &core.Node{Id: fmt.Sprintf("%s~%s~%s.%s~%s.svc.cluster.local", nodeType, ip, pod, ns, ns), Metadata: meta}
	open := func() (discovery.AggregatedDiscoveryService_StreamAggregatedResourcesClient, error) {
		stream, err := discovery.NewAggregatedDiscoveryServiceClient(conn).StreamAggregatedResources(ctx)
		if err == nil {
			err = stream.Send(&discovery.DiscoveryRequest{Node: node, TypeUrl: xdsclient.ClusterTypeURL})
		}
		return stream, err
	}
	stream, err := open()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			answerPushes(stream, mode)
			for reconnect {
				select {
				case <-ctx.Done():
					return
				case <-time.After(300 * time.Millisecond):
				}
				if stream, err = open(); err == nil {
					break
				}
			}
			if !reconnect {
				return
			}
		}
	}()
}

// answerPushes answers istiod's pushes on a stream as mode says, until
// the stream ends.
func answerPushes(stream discovery.AggregatedDiscoveryService_StreamAggregatedResourcesClient, mode ackMode) {
	for {
		resp, err := stream.Recv()
		if err != nil {
			return
		}
		req := &discovery.DiscoveryRequest{TypeUrl: resp.TypeUrl, ResponseNonce: resp.Nonce}
		switch mode {
		case ackNever:
			continue
		case ackAll:
			req.VersionInfo = resp.VersionInfo
		case nackAll:
			req.ErrorDetail = &status.Status{Code: 3, Message: "e2e: cluster rejected on purpose"}
		}
		if stream.Send(req) != nil {
			return
		}
	}
}

// labIstiodsXDS is each lab istiod's plaintext xDS address, by cluster.
func labIstiodsXDS() map[string]string {
	istiods := map[string]string{}
	for _, is := range theLab.Istiods() {
		istiods[is.Cluster] = is.XDSAddress()
	}
	return istiods
}

// fleetNamespace creates namespace ns with its default ServiceAccount (what
// admission asks of a Pod) in both lab clusters; it is left in place (the
// lab has no namespace controller), its pods are each test's to remove.
func fleetNamespace(ctx context.Context, t *testing.T, ns string) {
	t.Helper()
	for _, c := range []string{"cluster1", "cluster2"} {
		cs := theLab.Cluster(c).Client()
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !strings.Contains(err.Error(), "already exists") {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !strings.Contains(err.Error(), "already exists") {
			t.Fatal(err)
		}
	}
}

// proxiesJSON runs meshscope proxies -o json.
func proxiesJSON(t *testing.T, args ...string) fleet.Fleet {
	t.Helper()
	out, code := runMeshscope(t, append([]string{"proxies", "-o", "json", "--istiod-debug-address", debugAll(), "--xds-address", xdsAll()}, args...)...)
	if code != 0 {
		t.Fatalf("meshscope proxies: exit %d\n%s", code, out)
	}
	var f fleet.Fleet
	if err := json.Unmarshal([]byte(out), &f); err != nil {
		t.Fatalf("proxies -o json: %v\n%s", err, out)
	}
	return f
}

func findProxy(f fleet.Fleet, ns, name string) *fleet.Proxy {
	for i := range f.Proxies {
		if f.Proxies[i].Namespace == ns && f.Proxies[i].Name == name {
			return &f.Proxies[i]
		}
	}
	return nil
}

func TestFleet(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const ns = "fleet"
	istiods := labIstiodsXDS()
	fleetNamespace(ctx, t, ns)
	gatewayStandIns(ctx, t) // the gateways' proxies are connected, as in a real mesh
	type podDef struct {
		cluster, name, ip, network string
		injectedNetwork            string
		connect                    bool
		mode                       ackMode
	}
	pods := []podDef{
		{cluster: "cluster1", name: "fleet-synced", ip: "10.44.9.1", network: "network1", injectedNetwork: "network1", connect: true, mode: ackAll},
		{cluster: "cluster2", name: "fleet-synced2", ip: "10.144.9.1", network: "network2", injectedNetwork: "network2", connect: true, mode: ackAll},
		{cluster: "cluster1", name: "fleet-noack", ip: "10.44.9.2", network: "network1", injectedNetwork: "network1", connect: true, mode: ackNever},
		{cluster: "cluster1", name: "fleet-nack", ip: "10.44.9.3", network: "network1", injectedNetwork: "network1", connect: true, mode: nackAll},
		{cluster: "cluster1", name: "fleet-orphan", ip: "10.44.9.4", network: "network1", injectedNetwork: "network1"},
		// Injected when cluster2 was still on network0: its pod carries no
		// network label, so the mesh puts it on cluster2's network2 today.
		{cluster: "cluster2", name: "fleet-drift", ip: "10.144.9.2", network: "network0", injectedNetwork: "network0", connect: true, mode: ackAll},
	}
	conns := map[string]context.CancelFunc{}
	for _, p := range pods {
		env := map[string]string{"ISTIO_META_NETWORK": p.injectedNetwork, "ISTIO_META_CLUSTER_ID": p.cluster}
		if err := theLab.AddPod(ctx, p.cluster, lab.PodSpec{Namespace: ns, Name: p.name, IP: p.ip, Labels: map[string]string{"app": p.name},
			Container: "istio-proxy", Image: "example.invalid/istio/proxyv2:1.31.0", Args: []string{"proxy", "sidecar"}, Env: env}); err != nil {
			t.Fatal(err)
		}
		p := p
		t.Cleanup(func() { _ = theLab.RemovePod(context.Background(), p.cluster, ns, p.name) })
		if p.connect {
			cctx, ccancel := context.WithCancel(ctx)
			conns[p.name] = ccancel
			t.Cleanup(ccancel)
			fakeProxy(cctx, t, istiods[p.cluster], p.name, ns, p.cluster, p.network, p.ip, p.mode)
		}
	}
	// One of meshscope's own probes, connected to cluster1's istiod.
	probe, err := xdsclient.New(xdsclient.Options{Transport: xdsclient.TransportConfig{Address: istiods["cluster1"]},
		Viewpoint: xdsclient.Viewpoint{Cluster: "cluster1", Network: "network1", Namespace: ns}})
	if err != nil {
		t.Fatal(err)
	}
	pctx, pcancel := context.WithCancel(ctx)
	t.Cleanup(pcancel)
	go func() { _ = probe.Run(pctx) }()

	want := map[string]struct {
		state fleet.State
		cp    string
	}{
		"fleet-synced": {fleet.Synced, "cluster1"}, "fleet-synced2": {fleet.Synced, "cluster2"},
		"fleet-noack": {fleet.Stale, "cluster1"}, "fleet-nack": {fleet.Rejected, "cluster1"},
		"fleet-orphan": {fleet.Disconnected, ""}, "fleet-drift": {fleet.Synced, "cluster2"},
	}
	var f fleet.Fleet
	deadline := time.Now().Add(90 * time.Second)
	for {
		f = proxiesJSON(t, "--namespace", ns)
		bad := []string{}
		for name, w := range want {
			p := findProxy(f, ns, name)
			if p == nil || p.State != w.state || p.ControlPlane != w.cp || p.Probe {
				bad = append(bad, fmt.Sprintf("%s: got %+v, want %s on %q", name, p, w.state, w.cp))
			}
		}
		if len(bad) == 0 && f.Complete {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("proxies never matched:\n%s", strings.Join(bad, "\n"))
		}
		time.Sleep(2 * time.Second)
	}
	table, _ := runMeshscope(t, "proxies", "-n", ns, "--istiod-debug-address", debugAll(), "--xds-address", xdsAll())
	t.Logf("meshscope proxies -n %s:\n%s", ns, table)
	for _, want := range []string{"fleet-orphan.fleet", "DISCONNECTED", "NACK", "network network0≠network2", "sidecar (probe)"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q", want)
		}
	}
	if p := findProxy(f, ns, xdsclient.DefaultPodName); p == nil || !p.Probe || p.ControlPlane != "cluster1" {
		t.Errorf("meshscope's probe is not marked: %+v", p)
	}
	if d := findProxy(f, ns, "fleet-drift").Drift; len(d) != 1 || d[0].Field != "network" || d[0].Injected != "network0" || d[0].Derived != "network2" {
		t.Errorf("fleet-drift drift = %+v, want network network0 → network2", d)
	}
	if d := findProxy(f, ns, "fleet-synced").Drift; len(d) != 0 {
		t.Errorf("fleet-synced drifts: %+v", d)
	}
	if p := findProxy(f, ns, "fleet-nack"); !strings.Contains(fmt.Sprint(p.Types), "rejected on purpose") {
		t.Errorf("fleet-nack carries no NACK error: %+v", p.Types)
	}

	// explain as the drifted pod really is: what istiod sends its injected
	// identity (network0: even its own network's pod through network2's
	// gateway) matches the prediction for that identity, and a note says
	// what it would get with the network the mesh gives it today.
	out, code := runMeshscope(t, "explain", "helloworld.sample", "--from", "pod:"+ns+"/fleet-drift@cluster2", "-o", "json", "--xds-address", xdsAll())
	var res struct {
		Views []explain.View `json:"views"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || len(res.Views) != 1 {
		t.Fatalf("explain --from pod: exit %d, %v\n%s", code, err, out)
	}
	v := res.Views[0]
	var actual []string
	for _, a := range v.Actual {
		actual = append(actual, fmt.Sprintf("%s:%d", a.Address, a.Port))
	}
	if v.Verdict != explain.Match || strings.Join(actual, ",") != "192.168.60.113:15443,192.168.60.9:15443" {
		t.Errorf("the drifted pod: verdict %s, actual %v; want MATCH with both gateways (its own network's pod too)", v.Verdict, actual)
	}
	if n := strings.Join(v.Notes, "\n"); !strings.Contains(n, "injected with NETWORK network0, but the mesh gives its pod network2") ||
		!strings.Contains(n, "10.144.0.15:5000 w=1") {
		t.Errorf("the drifted pod's notes: %s", n)
	}

	// doctor reports each, and nothing for the healthy ones or the probe.
	doctor := func() map[string][]string {
		ps, _ := doctorJSON(t, "--istiod-debug-address", debugAll(), "--xds-address", xdsAll(), "--offline", "--stale-after", "3s")
		got := map[string][]string{}
		for _, p := range ps {
			if strings.HasPrefix(string(p.Kind), "proxy-") {
				got[string(p.Kind)] = append(got[string(p.Kind)], p.Sentence+strings.Join(p.Examples, ","))
			}
		}
		return got
	}
	time.Sleep(3 * time.Second) // past --stale-after for the proxy that never ACKs
	got := doctor()
	for kind, subject := range map[string]string{"proxy-disconnected": "fleet-orphan", "proxy-identity-drift": "fleet-drift"} {
		if !strings.Contains(strings.Join(got[kind], "\n"), subject) {
			t.Errorf("doctor: no %s for %s: %v", kind, subject, got)
		}
	}
	stale := strings.Join(got["proxy-stale"], "\n")
	if !strings.Contains(stale, "fleet-noack") || !strings.Contains(stale, "fleet-nack") || !strings.Contains(stale, "NACK") {
		t.Errorf("doctor: proxy-stale should name fleet-noack and fleet-nack (NACK): %v", got["proxy-stale"])
	}
	all := fmt.Sprint(got)
	for _, healthy := range []string{"fleet-synced ", "fleet-synced2", xdsclient.DefaultPodName} {
		if strings.Contains(all, healthy) {
			t.Errorf("doctor reports a healthy proxy %s: %v", healthy, got)
		}
	}

	// The conditions go: the orphan pod and the drifted pod are removed,
	// the proxies that did not ACK disconnect.
	for _, n := range []string{"fleet-noack", "fleet-nack"} {
		conns[n]()
	}
	for _, rm := range [][2]string{{"cluster1", "fleet-orphan"}, {"cluster2", "fleet-drift"}, {"cluster1", "fleet-noack"}, {"cluster1", "fleet-nack"}} {
		if err := theLab.RemovePod(ctx, rm[0], ns, rm[1]); err != nil {
			t.Fatal(err)
		}
	}
	deadline = time.Now().Add(60 * time.Second)
	for {
		got = doctor()
		if len(got) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("doctor still reports proxies after the conditions went: %v", got)
		}
		time.Sleep(2 * time.Second)
	}
}
