package ambient

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

const (
	hello    = "helloworld.ambient.svc.cluster.local"
	helloKey = "ambient/" + hello
)

// ambientMesh is the code of the ambient profile's serviceScopeConfigs.
const ambientMesh = `serviceScopeConfigs:
- servicesSelector:
    matchExpressions:
    - {key: istio.io/global, operator: In, values: ["true"]}
  scope: GLOBAL
`

// testMesh builds snapshots like the ambient lab's: clusters that read one
// another through remote secrets, each with its system namespace's network
// and an ambient namespace.
type testMesh struct {
	s *model.Snapshot
}

func newTestMesh(t *testing.T, clusters ...[2]string) *testMesh {
	t.Helper()
	m := &testMesh{s: &model.Snapshot{}}
	mc, err := model.ParseMeshConfig(ambientMesh)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range clusters {
		id, net := c[0], c[1]
		cl := model.Cluster{ID: id, Network: net, State: model.StateSynced, Source: model.SourceRef{Kind: model.SourceContext, Name: id}}
		for _, o := range clusters {
			if o[0] != id {
				cl.Sources = append(cl.Sources, model.SourceRef{Kind: model.SourceSecret, In: o[0], Key: id})
			}
		}
		cl.Sources = append([]model.SourceRef{cl.Source}, cl.Sources...)
		m.s.Clusters = append(m.s.Clusters, cl)
		c := mc
		c.Cluster = id
		m.s.MeshConfigs = append(m.s.MeshConfigs, c)
		m.s.Ambient = append(m.s.Ambient, model.AmbientCluster{Cluster: id,
			Namespaces: map[string]map[string]string{
				"istio-system": {model.LabelNetwork: net},
				"ambient":      {model.LabelDataplaneMode: "ambient"},
			},
			ServiceLabels: map[string]map[string]string{}, Pods: map[string]model.AmbientPod{}, GatewayAPI: true})
	}
	return m
}

type testPod struct {
	name, ip     string
	notReady     bool
	notRedirect  bool
	serviceAcc   string
	tunnelLabel  bool
	missingInPod bool
}

// service adds helloworld in cluster, global or not, with pods.
func (m *testMesh) service(cluster, clusterIP string, global bool, pods ...testPod) {
	svc := m.s.Service(hello)
	if svc == nil {
		svc = &model.Service{Hostname: hello, Namespace: "ambient", Name: "helloworld", Clusters: map[string]*model.ServiceInCluster{}}
		m.s.Services = append(m.s.Services, svc)
	}
	sc := &model.ServiceInCluster{Cluster: cluster, Type: "ClusterIP", ClusterIP: clusterIP,
		Ports: []model.ServicePort{{Name: "http", Port: 5000, TargetPort: "5000"}}}
	a := m.s.AmbientFor(cluster)
	a.ServiceLabels[hello] = map[string]string{"app": "helloworld"}
	if global {
		a.ServiceLabels[hello]["istio.io/global"] = "true"
	}
	for _, p := range pods {
		ep := model.Endpoint{Cluster: cluster, Address: p.ip, Pod: p.name, Ready: !p.notReady, PodMissing: p.missingInPod}
		if p.tunnelLabel {
			ep.Labels = map[string]string{model.LabelTunnel: "http"}
		}
		sc.Endpoints = append(sc.Endpoints, ep)
		facts := model.AmbientPod{ServiceAccount: p.serviceAcc, Redirected: !p.notRedirect}
		if facts.ServiceAccount == "" {
			facts.ServiceAccount = "default"
		}
		a.Pods["ambient/"+p.name] = facts
	}
	svc.Clusters[cluster] = sc
}

// gateway adds a Gateway API Gateway.
func (m *testMesh) gateway(cluster, name, class, network string, port uint32, tls string, addrs ...string) {
	g := model.K8sGateway{Cluster: cluster, Namespace: "istio-system", Name: name, Class: class, Network: network, ServiceAccount: name,
		Listeners: []model.GatewayListener{{Name: "mesh", Port: port, Protocol: "HBONE", TLSMode: tls}}}
	for _, a := range addrs {
		typ := "IPAddress"
		if strings.HasPrefix(a, "host:") {
			typ, a = "Hostname", strings.TrimPrefix(a, "host:")
		}
		g.Addresses = append(g.Addresses, model.GatewayAddress{Type: typ, Value: a})
	}
	amb := m.s.AmbientFor(cluster)
	amb.Gateways = append(amb.Gateways, g)
}

// render is one line per workload and dropped group.
func render(p Prediction) []string {
	var out []string
	if p.Sent {
		out = append(out, fmt.Sprintf("service %s from %s vips=%s sans=%s", p.Scope, p.From, strings.Join(p.VIPs, ","), strings.Join(p.SubjectAltNames, ",")))
	}
	for _, w := range p.Workloads {
		line := fmt.Sprintf("%s %s %s %s %s", w.Kind, w.UID, strings.Join(w.Addresses, ","), w.Status, w.TunnelProtocol)
		if w.Kind == KindSplitHorizon {
			line += fmt.Sprintf(" gw=%s cap=%d for=%s", w.Gateway, w.Capacity, strings.Join(w.StandsFor, ","))
		}
		if len(w.Candidates) > 0 {
			line += " candidates=" + strings.Join(w.Candidates, ",")
		}
		out = append(out, line)
	}
	for _, d := range p.Dropped {
		out = append(out, fmt.Sprintf("drop %s %s %s", d.Reason, strings.Join(d.Clusters, ","), strings.Join(d.Pods, ",")))
	}
	return out
}

const (
	shNet2 = "network2/SplitHorizonWorkload/istio-system/istio-eastwestgateway/192.168.60.10/" + helloKey
	shNet1 = "network1/SplitHorizonWorkload/istio-system/istio-eastwestgateway/192.168.60.114/" + helloKey
)

func TestPredict(t *testing.T) {
	two := [][2]string{{"cluster1", "network1"}, {"cluster2", "network2"}}
	lab := func(m *testMesh, global1, global2 bool) {
		m.service("cluster1", "10.96.0.10", global1, testPod{name: "hw-1", ip: "10.44.0.30"})
		m.service("cluster2", "10.97.0.10", global2, testPod{name: "hw-2a", ip: "10.144.0.30"}, testPod{name: "hw-2b", ip: "10.144.0.32"})
		m.gateway("cluster1", "istio-eastwestgateway", model.ClassEastWest, "network1", 15008, "Terminate", "192.168.60.114")
		m.gateway("cluster2", "istio-eastwestgateway", model.ClassEastWest, "network2", 15008, "Terminate", "192.168.60.10")
	}
	cases := []struct {
		name     string
		clusters [][2]string
		build    func(m *testMesh)
		cp       string
		want     []string
		notes    []string
	}{
		{
			name: "global: own pods one by one, the other network's merged behind its gateway", clusters: two, cp: "cluster1",
			build: func(m *testMesh) { lab(m, true, true) },
			want: []string{
				"service global from cluster1 vips=network1/10.96.0.10,network2/10.97.0.10 sans=spiffe://cluster.local/ns/ambient/sa/default",
				"pod cluster1//Pod/ambient/hw-1 10.44.0.30 HEALTHY HBONE",
				"split-horizon " + shNet2 + "  HEALTHY HBONE gw=192.168.60.10:15008 cap=2 for=cluster2//Pod/ambient/hw-2a,cluster2//Pod/ambient/hw-2b",
			},
		},
		{
			name: "the same from the other istiod: its own network is the local one", clusters: two, cp: "cluster2",
			build: func(m *testMesh) { lab(m, true, true) },
			want: []string{
				"service global from cluster2 vips=network1/10.96.0.10,network2/10.97.0.10 sans=spiffe://cluster.local/ns/ambient/sa/default",
				"pod cluster2//Pod/ambient/hw-2a 10.144.0.30 HEALTHY HBONE",
				"pod cluster2//Pod/ambient/hw-2b 10.144.0.32 HEALTHY HBONE",
				"split-horizon " + shNet1 + "  HEALTHY HBONE gw=192.168.60.114:15008 cap=1 for=cluster1//Pod/ambient/hw-1",
			},
		},
		{
			name: "not global in the remote cluster: its pods are dropped", clusters: two, cp: "cluster1",
			build: func(m *testMesh) { lab(m, true, false) },
			want: []string{
				"service global from cluster1 vips=network1/10.96.0.10 sans=",
				"pod cluster1//Pod/ambient/hw-1 10.44.0.30 HEALTHY HBONE",
				"drop not-global cluster2 cluster2//Pod/ambient/hw-2a,cluster2//Pod/ambient/hw-2b",
			},
		},
		{
			name: "not global in istiod's own cluster: nothing is merged across networks", clusters: two, cp: "cluster2",
			build: func(m *testMesh) { lab(m, true, false) },
			want: []string{
				"service local from cluster2 vips=network2/10.97.0.10 sans=",
				"pod cluster2//Pod/ambient/hw-2a 10.144.0.30 HEALTHY HBONE",
				"pod cluster2//Pod/ambient/hw-2b 10.144.0.32 HEALTHY HBONE",
				"drop local-not-global cluster1 cluster1//Pod/ambient/hw-1",
			},
		},
		{
			name: "the other network has no gateway address", clusters: two, cp: "cluster1",
			build: func(m *testMesh) {
				lab(m, true, true)
				m.s.AmbientFor("cluster2").Gateways[0].Addresses = nil
			},
			want: []string{
				"service global from cluster1 vips=network1/10.96.0.10,network2/10.97.0.10 sans=spiffe://cluster.local/ns/ambient/sa/default",
				"pod cluster1//Pod/ambient/hw-1 10.44.0.30 HEALTHY HBONE",
				"drop no-gateway cluster2 cluster2//Pod/ambient/hw-2a,cluster2//Pod/ambient/hw-2b",
			},
		},
		{
			name: "istiod's own east-west gateway is not its network gateway; without TLS termination none is", clusters: two, cp: "cluster1",
			build: func(m *testMesh) {
				m.service("cluster1", "10.96.0.10", true, testPod{name: "hw-1", ip: "10.44.0.30"})
				m.service("cluster2", "10.97.0.10", true, testPod{name: "hw-2a", ip: "10.144.0.30"})
				m.gateway("cluster1", "istio-eastwestgateway", model.ClassEastWest, "network2", 15008, "Terminate", "192.168.60.10")
				m.gateway("cluster2", "istio-eastwestgateway", model.ClassEastWest, "network2", 15008, "Passthrough", "192.168.60.10")
			},
			want: []string{
				"service global from cluster1 vips=network1/10.96.0.10,network2/10.97.0.10 sans=spiffe://cluster.local/ns/ambient/sa/default",
				"pod cluster1//Pod/ambient/hw-1 10.44.0.30 HEALTHY HBONE",
				"drop no-gateway cluster2 cluster2//Pod/ambient/hw-2a",
			},
		},
		{
			name: "an istio-remote Gateway in istiod's own cluster declares the other network's gateway, with its port", clusters: two, cp: "cluster1",
			build: func(m *testMesh) {
				m.service("cluster1", "10.96.0.10", true, testPod{name: "hw-1", ip: "10.44.0.30"})
				m.service("cluster2", "10.97.0.10", true, testPod{name: "hw-2a", ip: "10.144.0.30"})
				m.gateway("cluster1", "net2-gw", model.ClassRemote, "network2", 15009, "", "host:gw.example.com")
			},
			want: []string{
				"service global from cluster1 vips=network1/10.96.0.10,network2/10.97.0.10 sans=spiffe://cluster.local/ns/ambient/sa/default",
				"pod cluster1//Pod/ambient/hw-1 10.44.0.30 HEALTHY HBONE",
				"split-horizon network2/SplitHorizonWorkload/istio-system/net2-gw/gw.example.com/" + helloKey + "  HEALTHY HBONE gw=istio-system/gw.example.com:15009 cap=1 for=cluster2//Pod/ambient/hw-2a",
			},
		},
		{
			name: "several gateways in one network: any of them, flagged", clusters: two, cp: "cluster1",
			build: func(m *testMesh) {
				lab(m, true, true)
				m.gateway("cluster2", "istio-eastwestgateway-b", model.ClassEastWest, "network2", 15008, "Terminate", "192.168.60.11")
			},
			want: []string{
				"service global from cluster1 vips=network1/10.96.0.10,network2/10.97.0.10 sans=spiffe://cluster.local/ns/ambient/sa/default",
				"pod cluster1//Pod/ambient/hw-1 10.44.0.30 HEALTHY HBONE",
				"split-horizon " + shNet2 + "  HEALTHY HBONE gw=192.168.60.10:15008 cap=2 for=cluster2//Pod/ambient/hw-2a,cluster2//Pod/ambient/hw-2b candidates=" +
					shNet2 + ",network2/SplitHorizonWorkload/istio-system/istio-eastwestgateway-b/192.168.60.11/" + helloKey,
			},
			notes: []string{"network network2 has 2 gateways"},
		},
		{
			name: "pods: not ready, not enrolled, terminating HBONE themselves, missing from the cache", clusters: two, cp: "cluster1",
			build: func(m *testMesh) {
				m.service("cluster1", "10.96.0.10", false,
					testPod{name: "a", ip: "10.44.0.1", notReady: true},
					testPod{name: "b", ip: "10.44.0.2", notRedirect: true},
					testPod{name: "c", ip: "10.44.0.3", notRedirect: true, tunnelLabel: true},
					testPod{name: "d", ip: "10.44.0.4", missingInPod: true})
			},
			want: []string{
				"service local from cluster1 vips=network1/10.96.0.10 sans=",
				"pod cluster1//Pod/ambient/a 10.44.0.1 UNHEALTHY HBONE",
				"pod cluster1//Pod/ambient/b 10.44.0.2 HEALTHY NONE",
				"pod cluster1//Pod/ambient/c 10.44.0.3 HEALTHY HBONE",
			},
		},
		{
			name:     "a remote cluster on istiod's network: its pods go one by one, when global there",
			clusters: [][2]string{{"cluster1", "network1"}, {"cluster3", "network1"}, {"cluster2", "network2"}}, cp: "cluster1",
			build: func(m *testMesh) {
				lab(m, true, true)
				m.service("cluster3", "10.98.0.10", true, testPod{name: "hw-3", ip: "10.45.0.30", serviceAcc: "hw"})
			},
			want: []string{
				"service global from cluster1 vips=network1/10.96.0.10,network1/10.98.0.10,network2/10.97.0.10 sans=spiffe://cluster.local/ns/ambient/sa/default",
				"pod cluster1//Pod/ambient/hw-1 10.44.0.30 HEALTHY HBONE",
				"pod cluster3//Pod/ambient/hw-3 10.45.0.30 HEALTHY HBONE",
				"split-horizon " + shNet2 + "  HEALTHY HBONE gw=192.168.60.10:15008 cap=2 for=cluster2//Pod/ambient/hw-2a,cluster2//Pod/ambient/hw-2b",
			},
		},
		{
			name: "only a remote cluster has the service, global there", clusters: two, cp: "cluster1",
			build: func(m *testMesh) {
				m.service("cluster2", "10.97.0.10", true, testPod{name: "hw-2a", ip: "10.144.0.30", serviceAcc: "hw"})
				m.gateway("cluster2", "istio-eastwestgateway", model.ClassEastWest, "network2", 15008, "Terminate", "192.168.60.10")
			},
			want: []string{
				"service global from cluster2 vips=network2/10.97.0.10 sans=spiffe://cluster.local/ns/ambient/sa/hw",
				"split-horizon " + shNet2 + "  HEALTHY HBONE gw=192.168.60.10:15008 cap=1 for=cluster2//Pod/ambient/hw-2a",
			},
		},
		{
			name: "a cluster istiod holds no secret for is not read", clusters: two, cp: "cluster1",
			build: func(m *testMesh) {
				lab(m, true, true)
				m.s.Clusters[1].Sources = []model.SourceRef{{Kind: model.SourceContext, Name: "cluster2"}}
			},
			want: []string{
				"service global from cluster1 vips=network1/10.96.0.10 sans=",
				"pod cluster1//Pod/ambient/hw-1 10.44.0.30 HEALTHY HBONE",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestMesh(t, tc.clusters...)
			tc.build(m)
			p := testView(m.s, tc.cp).Predict(hello)
			if got := render(p); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
			for _, n := range tc.notes {
				if !slices.ContainsFunc(p.Notes, func(s string) bool { return strings.Contains(s, n) }) {
					t.Errorf("notes %v lack %q", p.Notes, n)
				}
			}
			for _, w := range p.Workloads {
				if w.Why == "" {
					t.Errorf("%s has no reason", w.UID)
				}
			}
		})
	}
}

// TestScope: serviceScopeConfigs select on namespace and Service labels;
// a missing selector selects everything; an unknown namespace skips the entry.
func TestScope(t *testing.T) {
	m := newTestMesh(t, [2]string{"cluster1", "network1"})
	m.service("cluster1", "10.96.0.10", false)
	mc, err := model.ParseMeshConfig(`serviceScopeConfigs:
- namespaceSelector: {matchLabels: {team: a}}
  servicesSelector: {matchLabels: {app: helloworld}}
  scope: GLOBAL
- namespaceSelector: {matchLabels: {all: global}}
  scope: GLOBAL
`)
	if err != nil {
		t.Fatal(err)
	}
	mc.Cluster = "cluster1"
	m.s.MeshConfigs = []model.MeshConfig{mc}
	a := m.s.AmbientFor("cluster1")
	scope := func() Scope { return testView(m.s, "cluster1").scopeIn("cluster1", "ambient", hello) }
	if s := scope(); s != Local {
		t.Errorf("no selector matches: %s", s)
	}
	a.Namespaces["ambient"]["team"] = "a"
	if s := scope(); s != Global {
		t.Errorf("namespace and service selected: %s", s)
	}
	delete(a.Namespaces["ambient"], "team")
	a.Namespaces["ambient"]["all"] = "global"
	if s := scope(); s != Global {
		t.Errorf("namespace selected, no service selector: %s", s)
	}
	delete(a.Namespaces, "ambient")
	if s := scope(); s != Local {
		t.Errorf("unknown namespace: %s", s)
	}
}

// TestGatewayWorkloads: one NetworkGateway workload per gateway istiod
// knows, with the port it holds (0 for another cluster's east-west gateway).
func TestGatewayWorkloads(t *testing.T) {
	m := newTestMesh(t, [2]string{"cluster1", "network1"}, [2]string{"cluster2", "network2"})
	m.gateway("cluster1", "istio-eastwestgateway", model.ClassEastWest, "network1", 15008, "Terminate", "192.168.60.114")
	m.gateway("cluster2", "istio-eastwestgateway", model.ClassEastWest, "network2", 15008, "Terminate", "192.168.60.10")
	m.gateway("cluster1", "net3", model.ClassRemote, "network3", 15008, "", "192.168.70.1")
	var got []string
	for _, w := range testView(m.s, "cluster1").GatewayWorkloads() {
		got = append(got, w.UID+" "+strings.Join(w.Addresses, ","))
	}
	want := []string{"NetworkGateway/network2/192.168.60.10/0 192.168.60.10", "NetworkGateway/network3/192.168.70.1/15008 192.168.70.1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestCompare: the verdict holds the actual WDS against the prediction and
// names each difference.
func TestCompare(t *testing.T) {
	m := newTestMesh(t, [2]string{"cluster1", "network1"}, [2]string{"cluster2", "network2"})
	m.service("cluster1", "10.96.0.10", true, testPod{name: "hw-1", ip: "10.44.0.30"})
	m.service("cluster2", "10.97.0.10", true, testPod{name: "hw-2a", ip: "10.144.0.30"}, testPod{name: "hw-2b", ip: "10.144.0.32"})
	m.gateway("cluster2", "istio-eastwestgateway", model.ClassEastWest, "network2", 15008, "Terminate", "192.168.60.10")
	p := testView(m.s, "cluster1").Predict(hello)
	actual := func() xdsclient.WDSServiceView {
		return xdsclient.WDSServiceView{Key: helloKey,
			Service: &xdsclient.WDSService{Name: "helloworld", Namespace: "ambient", Hostname: hello,
				Addresses:       []xdsclient.WDSNetworkAddress{{Network: "network2", Address: "10.97.0.10"}, {Network: "network1", Address: "10.96.0.10"}},
				Ports:           []xdsclient.WDSPort{{ServicePort: 5000, TargetPort: 5000, AppProtocol: "HTTP11"}},
				SubjectAltNames: []string{"spiffe://cluster.local/ns/ambient/sa/default"}},
			Workloads: []xdsclient.WDSWorkload{
				{UID: "cluster1//Pod/ambient/hw-1", Addresses: []string{"10.44.0.30"}, Network: "network1", Status: xdsclient.Healthy, TunnelProtocol: xdsclient.TunnelHBONE},
				{UID: shNet2, Network: "network2", Status: xdsclient.Healthy, TunnelProtocol: xdsclient.TunnelHBONE, Capacity: 2, CapacitySet: true,
					NetworkGateway: &xdsclient.WDSGateway{Network: "network2", Address: "192.168.60.10", HBONEPort: 15008}},
			}}
	}
	if c := Compare(p, actual()); c.Verdict != Match {
		t.Fatalf("the lab's WDS: %+v", c)
	}
	for name, tc := range map[string]struct {
		edit func(*xdsclient.WDSServiceView)
		want string
	}{
		"capacity":   {func(a *xdsclient.WDSServiceView) { a.Workloads[1].Capacity = 1 }, "capacity 1, predicted 2"},
		"gateway":    {func(a *xdsclient.WDSServiceView) { a.Workloads[1].NetworkGateway.HBONEPort = 15009 }, "gateway 192.168.60.10:15009, predicted 192.168.60.10:15008"},
		"missing":    {func(a *xdsclient.WDSServiceView) { a.Workloads = a.Workloads[:1] }, "istiod did not send " + shNet2},
		"unexpected": {func(a *xdsclient.WDSServiceView) { a.Workloads[0].UID = "cluster2//Pod/ambient/x" }, "istiod sent cluster2//Pod/ambient/x"},
		"status":     {func(a *xdsclient.WDSServiceView) { a.Workloads[0].Status = xdsclient.Unhealthy }, "status UNHEALTHY, predicted HEALTHY"},
		"no service": {func(a *xdsclient.WDSServiceView) { a.Service = nil }, "istiod sent no Service"},
		"vips":       {func(a *xdsclient.WDSServiceView) { a.Service.Addresses = a.Service.Addresses[1:] }, "has VIPs network1/10.96.0.10; predicted network1/10.96.0.10,network2/10.97.0.10"},
		"sans":       {func(a *xdsclient.WDSServiceView) { a.Service.SubjectAltNames = nil }, "subject alt names none"},
	} {
		a := actual()
		tc.edit(&a)
		c := Compare(p, a)
		if c.Verdict != Mismatch || !slices.ContainsFunc(c.Differences, func(d Difference) bool { return strings.Contains(d.Why, tc.want) }) {
			t.Errorf("%s: %+v, want a difference saying %q", name, c, tc.want)
		}
	}
}

// TestHostnameGateway: an east-west Gateway whose status address is a DNS
// name (an AWS NLB's). In ambient mode istiod does not resolve it: the
// split-horizon workload names it as namespace/name on 15008, the gateway
// workload carries it as its hostname with no address — whatever DNS
// answers — and a ztunnel holding what meshscope predicts matches.
func TestHostnameGateway(t *testing.T) {
	m := newTestMesh(t, [2]string{"cluster1", "network1"}, [2]string{"cluster2", "network2"})
	m.service("cluster1", "10.96.0.10", true, testPod{name: "hw-1", ip: "10.44.0.30"})
	m.service("cluster2", "10.97.0.10", true, testPod{name: "hw-2a", ip: "10.144.0.30"}, testPod{name: "hw-2b", ip: "10.144.0.32"})
	m.gateway("cluster2", "istio-eastwestgateway", model.ClassEastWest, "network2", 15008, "Terminate", "host:gw2.example.com")
	// meshscope's answer for the name plays no part in ambient predictions.
	m.s.GatewayNames = []model.GatewayName{{Name: "gw2.example.com", Addresses: []string{"192.168.60.21", "192.168.60.22"}}}
	v := testView(m.s, "cluster1")
	p := v.Predict(hello)
	sh := "network2/SplitHorizonWorkload/istio-system/istio-eastwestgateway/gw2.example.com/" + helloKey
	want := []string{
		"service global from cluster1 vips=network1/10.96.0.10,network2/10.97.0.10 sans=spiffe://cluster.local/ns/ambient/sa/default",
		"pod cluster1//Pod/ambient/hw-1 10.44.0.30 HEALTHY HBONE",
		"split-horizon " + sh + "  HEALTHY HBONE gw=istio-system/gw2.example.com:15008 cap=2 for=cluster2//Pod/ambient/hw-2a,cluster2//Pod/ambient/hw-2b",
	}
	if got := render(p); !slices.Equal(got, want) {
		t.Errorf("prediction\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(want, "\n "))
	}
	if w := p.Workloads[1]; !strings.Contains(w.Why, "gw2.example.com is a DNS name, sent unresolved") {
		t.Errorf("why: %s", w.Why)
	}
	gws := v.GatewayWorkloads()
	if len(gws) != 1 || gws[0].UID != "NetworkGateway/network2/gw2.example.com/0" || gws[0].Hostname != "gw2.example.com" || len(gws[0].Addresses) != 0 {
		t.Errorf("gateway workloads: %+v", gws)
	}
	res := v.Resources()
	for _, a := range res {
		b, err := xdsclient.EncodeWDSAddress(a)
		if err != nil {
			t.Fatalf("%s does not encode: %v", a.Name, err)
		}
		if back, err := xdsclient.DecodeWDSAddress(a.Name, b); err != nil || !reflect.DeepEqual(back, a) {
			t.Errorf("%s: round trip\n got %+v\nwant %+v (%v)", a.Name, back, a, err)
		}
		if w := a.Workload; w != nil && w.UID == gws[0].UID && (w.Hostname != "gw2.example.com" || w.Namespace != "istio-system" || len(w.Addresses) != 0) {
			t.Errorf("the gateway's workload: %+v", w)
		}
	}
	actual := ServiceView(res, helloKey)
	if c := Compare(p, actual); c.Verdict != Match {
		t.Fatalf("a ztunnel holding the predicted resources: %+v", c)
	}
	// What a ztunnel would hold if istiod had resolved the name: the
	// gateway by address is a difference.
	for i, w := range actual.Workloads {
		if w.UID == sh {
			g := *w.NetworkGateway
			g.Namespace, g.Hostname, g.Network, g.Address = "", "", "network2", "192.168.60.21"
			actual.Workloads[i].NetworkGateway = &g
		}
	}
	c := Compare(p, actual)
	if c.Verdict != Mismatch || !slices.ContainsFunc(c.Differences, func(d Difference) bool {
		return strings.Contains(d.Why, "gateway 192.168.60.21:15008, predicted istio-system/gw2.example.com:15008")
	}) {
		t.Errorf("a resolved gateway: %+v", c)
	}
}

// testView is the view of control plane cp as analysis/plane builds it
// for a primary whose remote secrets are read: its own cluster and its
// secrets' clusters.
func testView(snap *model.Snapshot, cp string) *View {
	reads, _ := snap.ClustersReadBy(cp)
	return NewView(snap, cp, reads)
}
