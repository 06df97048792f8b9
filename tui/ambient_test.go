package tui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/meshscope/meshscope/analysis/ambient"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

const echoHost = "echo.ambient.svc.cluster.local"

// ambientSnapshot is testSnapshot with namespace ambient in ambient mode:
// echo, global, one pod in cluster1 and two in cluster2, whose east-west
// Gateway (Gateway API) is at 192.168.60.10; the istiod of cluster1 reads
// cluster2 through a remote secret, runs ambient multi-network mode and
// makes istio.io/global=true services global.
func ambientSnapshot(t *testing.T) *model.Snapshot {
	t.Helper()
	s := testSnapshot()
	mc, err := model.ParseMeshConfig("serviceScopeConfigs:\n- servicesSelector: {matchLabels: {istio.io/global: \"true\"}}\n  scope: GLOBAL\n")
	if err != nil {
		t.Fatal(err)
	}
	mc.Cluster = "cluster1"
	s.MeshConfigs = []model.MeshConfig{mc}
	echo := svc("ambient", "echo", httpPort, map[string][]model.Endpoint{
		"cluster1": {ep("cluster1", "network1", "10.10.0.30", "echo-1", false)},
		"cluster2": {ep("cluster2", "network2", "10.20.0.30", "echo-2a", false), ep("cluster2", "network2", "10.20.0.31", "echo-2b", false)},
	})
	echo.Clusters["cluster1"].ClusterIP, echo.Clusters["cluster2"].ClusterIP = "10.96.0.30", "10.97.0.30"
	s.Services = append(s.Services, echo)
	sortServices(s.Services)
	// cluster1's istiod runs ambient multi-network mode (its pod's env).
	s.Clusters[0].Istiods[0].Env = map[string]string{model.SettingAmbient: "true", model.SettingAmbientMultiNetwork: "true"}
	redirected := model.AmbientPod{ServiceAccount: "default", Redirected: true}
	global := map[string]map[string]string{echoHost: {"app": "echo", "istio.io/global": "true"}}
	s.Ambient = []model.AmbientCluster{
		{Cluster: "cluster1", GatewayAPI: true, ServiceLabels: global,
			Namespaces: map[string]map[string]string{"istio-system": {model.LabelNetwork: "network1"}, "ambient": {model.LabelDataplaneMode: "ambient"}},
			Pods:       map[string]model.AmbientPod{"ambient/echo-1": redirected}},
		{Cluster: "cluster2", GatewayAPI: true, ServiceLabels: global,
			Namespaces: map[string]map[string]string{"istio-system": {model.LabelNetwork: "network2"}, "ambient": {model.LabelDataplaneMode: "ambient"}},
			Pods:       map[string]model.AmbientPod{"ambient/echo-2a": redirected, "ambient/echo-2b": redirected},
			Gateways: []model.K8sGateway{{Cluster: "cluster2", Namespace: "istio-system", Name: "istio-eastwestgateway", Class: model.ClassEastWest,
				Network: "network2", ServiceAccount: "istio-eastwestgateway",
				Listeners: []model.GatewayListener{{Name: "mesh", Port: 15008, Protocol: "HBONE", TLSMode: "Terminate"}},
				Addresses: []model.GatewayAddress{{Type: "IPAddress", Value: "192.168.60.10"}}}}},
	}
	return s
}

// ambientFeed is testFeed plus a ztunnel on cluster1's istiod that holds
// res (what the prediction says istiod sends, unless a test edits it).
type ambientFeed struct {
	*fakeFeed
	res []xdsclient.WDSAddress
}

func (f *ambientFeed) Ztunnels() []string { return []string{"cluster1"} }
func (f *ambientFeed) WDS(cp, key string) (xdsclient.WDSServiceView, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if cp != "cluster1" || f.res == nil {
		return xdsclient.WDSServiceView{}, false
	}
	return ambient.ServiceView(f.res, key), true
}

func newAmbientFeed(snap *model.Snapshot) *ambientFeed {
	f := &ambientFeed{fakeFeed: testFeed(snap), res: plane.NewSet(snap, nil).Of("cluster1").Ambient().Resources()}
	f.status = append(f.status, xdsclient.StreamStatus{Viewpoint: "ztunnel@cluster1", ControlPlane: "cluster1", State: "connected", LastPush: ago(2 * time.Second)})
	return f
}

func openEcho(t *testing.T, m *Model) string {
	t.Helper()
	m.push(viewServices)
	press(m, "/")
	typeText(m, "echo")
	press(m, "enter", "enter")
	if m.currentID() != viewService || m.service.host != echoHost {
		t.Fatalf("enter did not open %s", echoHost)
	}
	return plain(m)
}

// TestGoldenAmbientService: in a mesh that uses ambient mode the services
// view shows each service's data-plane mode; an ambient service opens on
// its ztunnel view — one column per istiod (said plainly: WDS does not
// depend on the ztunnel's network), the Service resource, the workloads
// sent with the predicted reason for each (echo's network2 pods as one
// split-horizon workload behind the gateway, capacity 2); w switches to
// the sidecar viewpoints and back.
func TestGoldenAmbientService(t *testing.T) {
	snap := ambientSnapshot(t)
	m := newTestModel(t, "default", 120, 40, snap, newAmbientFeed(snap))
	m.push(viewServices)
	s := plain(m)
	for _, want := range []string{"MODE", "ambient", "sidecar"} {
		if !strings.Contains(s, want) {
			t.Errorf("the services view lacks %q:\n%s", want, s)
		}
	}
	if i := m.ix.byHost[echoHost]; m.ix.services[i].verdict != "match" {
		t.Errorf("echo's verdict %q, want match (its ztunnel view matches)", m.ix.services[i].verdict)
	}
	out := openEcho(t, m)
	checkSize(t, out, 120, 40)
	for _, want := range []string{"ztunnel @ cluster1 (network1)", "WDS is per istiod", "WORKLOADS SENT (2)", "via 192.168.60.10:15008 cap 2 HBONE",
		"2 pod(s) of network network2 merged", "→ cluster2//Pod/ambient/echo-2a", "verdict match", "global (from cluster1)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the ztunnel view lacks %q", want)
		}
	}
	golden.RequireEqual(t, out)
	press(m, "w")
	if s := plain(m); !strings.Contains(s, "cluster1/network1") || strings.Contains(s, "WORKLOADS SENT") {
		t.Errorf("w did not switch to the sidecar view:\n%s", s)
	}
	press(m, "w")
	if s := plain(m); !strings.Contains(s, "WORKLOADS SENT") {
		t.Errorf("w did not switch back:\n%s", s)
	}
}

// TestAmbientMismatchAndPushes: a ztunnel missing the split-horizon
// workload makes echo's row and column mismatch; a WDS push is on the
// timeline with what it changed and refreshes the open ztunnel view.
func TestAmbientMismatchAndPushes(t *testing.T) {
	snap := ambientSnapshot(t)
	f := newAmbientFeed(snap)
	full := f.res
	f.res = slices.DeleteFunc(slices.Clone(full), func(a xdsclient.WDSAddress) bool { return a.Workload != nil && a.Workload.SplitHorizon() })
	m := newTestModel(t, "default", 120, 40, snap, f)
	if i := m.ix.byHost[echoHost]; m.ix.services[i].verdict != "mismatch" {
		t.Errorf("echo's verdict %q, want mismatch", m.ix.services[i].verdict)
	}
	out := openEcho(t, m)
	for _, want := range []string{"mismatch (1 difference)", "PREDICTED, NOT SENT (1)", "! istiod did not send"} {
		if !strings.Contains(out, want) {
			t.Errorf("the ztunnel view lacks %q:\n%s", want, out)
		}
	}
	// istiod pushes the split-horizon workload.
	var sh xdsclient.WDSAddress
	for _, a := range full {
		if a.Workload != nil && a.Workload.SplitHorizon() {
			sh = a
		}
	}
	f.mu.Lock()
	f.res = full
	f.mu.Unlock()
	m.Update(eventsMsg{[]xdsclient.Event{{Seq: 9, Time: testNow, ControlPlane: "cluster1", Viewpoint: "ztunnel@cluster1", Type: xdsclient.EventWDS,
		Version: "12", Resources: 1, Added: []string{sh.Name},
		Addresses: []xdsclient.AddressChange{{Name: sh.Name, Kind: "workload", Change: xdsclient.AddressAdded, Workload: sh.Workload}}}}})
	if s := plain(m); !strings.Contains(s, "verdict match") {
		t.Errorf("the push did not refresh the ztunnel view:\n%s", s)
	}
	m.push(viewEvents)
	s := plain(m)
	for _, want := range []string{"ztunnel@cluster1", "wds", "workloads +1 -0 ~0 · added", "added workload", "(network2 via 192.168.60.10:15008 cap 2 HBONE HEALTHY)"} {
		if !strings.Contains(s, want) {
			t.Errorf("the timeline lacks %q:\n%s", want, s)
		}
	}
}
