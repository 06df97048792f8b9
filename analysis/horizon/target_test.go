package horizon

import (
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/model"
)

const vmHost = "vm.sample.svc.cluster.local"

// vmWorkload is a WorkloadEntry-like endpoint of the VM ServiceEntry.
func vmWorkload(cluster, network, ip, name string, weight uint32, tls string) model.Endpoint {
	return model.Endpoint{Cluster: cluster, Network: network, Address: ip, Workload: "WorkloadEntry/" + name, TLSMode: tls,
		Labels: map[string]string{"app": "vm"}, Weight: weight, Ready: true, Serving: true,
		Ports: []model.EndpointPort{{Name: "http", Port: 8080}}}
}

// vmMesh is the seed mesh plus a VM service: a ServiceEntry of cluster1
// selecting WorkloadEntries on two networks (cluster1 is their cluster, as
// istiod's ServiceEntry registry of cluster1 gives them).
func vmMesh(eps ...model.Endpoint) *model.Snapshot {
	s := mesh(seedGateways, seedEndpoints)
	s.MeshConfigs = []model.MeshConfig{meshConfig("cluster1", "")}
	ports := []model.ServicePort{{Name: "http", Port: 8080}}
	s.Services = append(s.Services, &model.Service{Hostname: vmHost, Namespace: "sample", Name: "vm", Ports: ports,
		Source: model.SourceServiceEntry, Clusters: map[string]*model.ServiceInCluster{},
		ServiceEntries: []*model.ServiceEntryHost{{Cluster: "cluster1", Namespace: "sample", Name: "vm", Resolution: "STATIC",
			Location: "MESH_INTERNAL", Ports: ports, WorkloadSelector: map[string]string{"app": "vm"}, Endpoints: eps}}})
	return s
}

func meshConfig(cluster, text string) model.MeshConfig {
	mc, err := model.ParseMeshConfig(text)
	if err != nil {
		panic(err)
	}
	mc.Cluster = cluster
	return mc
}

func TestPredictServiceEntry(t *testing.T) {
	net1 := Proxy{Cluster: "cluster1", Network: "network1"}
	net2 := Proxy{Cluster: "cluster2", Network: "network2"}
	none := Proxy{Cluster: "cluster1"}
	vm1 := vmWorkload("cluster1", "network1", "10.44.0.80", "vm-1", 0, "istio")
	vm2 := vmWorkload("cluster1", "network2", "10.144.0.80", "vm-2", 0, "istio")
	cases := []struct {
		name, istiod string
		eps          []model.Endpoint
		proxy        Proxy
		want         []string
	}{
		{name: "VM on each network from network1", istiod: "WorkloadEntry network; its cluster is the config cluster, so network2's gateway of any cluster (selectNetworkGateways)",
			eps: []model.Endpoint{vm1, vm2}, proxy: net1, want: []string{"10.44.0.80:8080 local w=1 UNKNOWN", "192.168.60.9:15443 gateway w=1 UNKNOWN"}},
		{name: "VM on each network from network2", istiod: "EndpointsByNetworkFilter",
			eps: []model.Endpoint{vm1, vm2}, proxy: net2, want: []string{"10.144.0.80:8080 local w=1 UNKNOWN", "192.168.60.113:15443 gateway w=1 UNKNOWN"}},
		{name: "VM from a proxy without NETWORK", istiod: "forceGateway",
			eps: []model.Endpoint{vm1, vm2}, proxy: none, want: []string{"192.168.60.113:15443 forced w=1 UNKNOWN", "192.168.60.9:15443 forced w=1 UNKNOWN"}},
		{name: "WorkloadEntry weights", istiod: "GetLoadBalancingWeight, scaled, summed on the gateway",
			eps:   []model.Endpoint{vmWorkload("cluster1", "network1", "10.44.0.80", "vm-1", 4, "istio"), vmWorkload("cluster1", "network2", "10.144.0.80", "vm-2", 3, "istio"), vmWorkload("cluster1", "network2", "10.144.0.81", "vm-3", 0, "istio")},
			proxy: net1, want: []string{"10.44.0.80:8080 local w=4 UNKNOWN", "192.168.60.9:15443 gateway w=4 UNKNOWN"}},
		{name: "WorkloadEntry without mTLS across networks", istiod: "getTLSModeFromWorkloadEntry: disabled without label or serviceAccount",
			eps: []model.Endpoint{vm1, vmWorkload("cluster1", "network2", "10.144.0.80", "vm-2", 0, "disabled")}, proxy: net1,
			want: []string{"10.44.0.80:8080 local w=1 UNKNOWN", "drop 10.144.0.80 no-mtls"}},
		{name: "WorkloadEntry without network", istiod: "Endpoint.Network = we.Network only: \"\" is every network",
			eps: []model.Endpoint{vmWorkload("cluster1", "", "10.99.0.1", "vm-x", 0, "istio")}, proxy: net2,
			want: []string{"10.99.0.1:8080 local w=1 UNKNOWN"}},
		{name: "WorkloadEntry without address", istiod: "only a gateway can stand for it; direct endpoints need an address",
			eps: []model.Endpoint{vmWorkload("cluster1", "network2", "", "vm-2", 0, "istio")}, proxy: net1,
			want: []string{"192.168.60.9:15443 gateway w=1 UNKNOWN"}},
		{name: "WorkloadEntry without address on the proxy's network", istiod: "GetEndpointHost(lbEp) == \"\": not sent",
			eps: []model.Endpoint{vmWorkload("cluster1", "network2", "", "vm-2", 0, "istio")}, proxy: net2,
			want: []string{"drop  no-address"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Predict(vmMesh(c.eps...), vmHost, 8080, c.proxy)
			if !p.Found || p.Source != model.SourceServiceEntry || p.Namespace != "sample" {
				t.Fatalf("prediction %+v", p)
			}
			if got := render(p); strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("istiod behaviour: %s\n got: %q\nwant: %q", c.istiod, got, c.want)
			}
		})
	}
}

func TestPredictDNSServiceEntry(t *testing.T) {
	s := vmMesh(vmWorkload("cluster1", "network1", "10.44.0.80", "vm-1", 0, "istio"))
	s.Services[1].ServiceEntries[0].Resolution = "DNS"
	p := Predict(s, vmHost, 8080, Proxy{Cluster: "cluster1", Network: "network1"})
	if !p.Found || len(p.Endpoints) != 0 || !strings.Contains(p.NoEndpoints, "resolution DNS") {
		t.Errorf("a DNS ServiceEntry has no EDS (findShards: IsDNSCluster): %+v", p)
	}
}

// TestPredictKubeAndServiceEntry: a ServiceEntry declaring a Kubernetes
// Service's hostname in its namespace adds its workloads to the Service's
// endpoints on ports of the same name; in another namespace it is another
// service, seen only by proxies of that namespace.
func TestPredictKubeAndServiceEntry(t *testing.T) {
	net1 := Proxy{Cluster: "cluster1", Network: "network1", Namespace: "sample"}
	s := mesh(seedGateways, seedEndpoints)
	s.MeshConfigs = []model.MeshConfig{meshConfig("cluster1", "")}
	vm := vmWorkload("cluster1", "network1", "10.44.0.80", "vm-1", 0, "istio")
	vm.Ports[0].Port = 5000
	s.Services[0].ServiceEntries = []*model.ServiceEntryHost{{Cluster: "cluster1", Namespace: "sample", Name: "extra", Resolution: "STATIC",
		Ports: []model.ServicePort{{Name: "http", Port: 5000}}, Endpoints: []model.Endpoint{vm}}}
	p := Predict(s, hello, 5000, net1)
	if p.Source != model.SourceBoth || strings.Join(render(p), "|") != "10.44.0.13:5000 local w=1 HEALTHY|10.44.0.80:5000 local w=1 UNKNOWN|192.168.60.9:15443 gateway w=1 UNKNOWN" {
		t.Errorf("merged by port name: %s %q", p.Source, render(p))
	}
	s.Services[0].ServiceEntries[0].Endpoints[0].Ports[0].Name = "web"
	if got := render(Predict(s, hello, 5000, net1)); len(got) != 3 || got[2] != "drop 10.44.0.80 port-name" {
		t.Errorf("another port name is filtered out, and said so (svcPort.Name != ep.ServicePortName): %q", got)
	}
	s.Services[0].ServiceEntries[0].Endpoints[0].Ports[0].Name = "http"
	// In namespace "other": only proxies of "other" use it.
	s.Services[0].ServiceEntries[0].Namespace = "other"
	if p := Predict(s, hello, 5000, net1); p.Source != model.SourceKube || len(p.Endpoints) != 2 {
		t.Errorf("proxy in sample: the Kubernetes Service wins: %s %q", p.Source, render(p))
	}
	other := net1
	other.Namespace = "other"
	if p := Predict(s, hello, 5000, other); p.Source != model.SourceServiceEntry || p.Namespace != "other" || strings.Join(render(p), "|") != "10.44.0.80:5000 local w=1 UNKNOWN" {
		t.Errorf("proxy in other: its own namespace's ServiceEntry: %s %s %q", p.Source, p.Namespace, render(p))
	}
}

func TestPredictExportTo(t *testing.T) {
	s := mesh(seedGateways, seedEndpoints)
	for _, sic := range s.Services[0].Clusters {
		sic.ExportTo = []string{"."}
	}
	inDefault := Proxy{Cluster: "cluster1", Network: "network1"}
	inSample := Proxy{Cluster: "cluster1", Network: "network1", Namespace: "sample"}
	if p := Predict(s, hello, 5000, inDefault); !p.Found || len(p.Endpoints) != 0 || !strings.Contains(p.NoEndpoints, "exported to . only") {
		t.Errorf("exportTo . from namespace default: %+v", p)
	}
	if p := Predict(s, hello, 5000, inSample); len(p.Endpoints) != 2 {
		t.Errorf("exportTo . from its own namespace: %q", render(p))
	}
	// The mesh default applies to services without exportTo.
	for _, sic := range s.Services[0].Clusters {
		sic.ExportTo = nil
	}
	s.MeshConfigs = []model.MeshConfig{meshConfig("cluster1", `defaultServiceExportTo: ["~"]`)}
	if p := Predict(s, hello, 5000, inSample); len(p.Endpoints) != 0 || p.NoEndpoints == "" {
		t.Errorf("defaultServiceExportTo ~ hides every service: %q", render(p))
	}
	for _, c := range []struct {
		exportTo []string
		ns       string
		want     bool
	}{{nil, "x", true}, {[]string{"*"}, "x", true}, {[]string{"~", "x"}, "x", false}, {[]string{"x"}, "sample", false}, {[]string{"sample"}, "sample", true}, {[]string{"."}, "sample", true}} {
		if got := visible(c.exportTo, []string{"*"}, "sample", c.ns); got != c.want {
			t.Errorf("IsServiceVisible(exportTo %v, proxy in %s) = %v, want %v", c.exportTo, c.ns, got, c.want)
		}
	}
}

func TestPredictClusterLocalFromMeshConfig(t *testing.T) {
	s := mesh(seedGateways, seedEndpoints)
	s.MeshConfigs = []model.MeshConfig{meshConfig("cluster1", `serviceSettings: [{settings: {clusterLocal: true}, hosts: ["*.sample.svc.cluster.local"]}]`)}
	for _, c := range []struct {
		proxy Proxy
		want  string
	}{
		{Proxy{Cluster: "cluster1", Network: "network1"}, "10.44.0.13:5000 local w=1 HEALTHY|drop 10.144.0.15 cluster-local"},
		{Proxy{Cluster: "cluster2", Network: "network2"}, "10.144.0.15:5000 local w=1 HEALTHY|drop 10.44.0.13 cluster-local"},
		{Proxy{Cluster: "cluster1"}, "192.168.60.113:15443 forced w=1 UNKNOWN|drop 10.144.0.15 cluster-local"},
	} {
		if got := strings.Join(render(Predict(s, hello, 5000, c.proxy)), "|"); got != c.want {
			t.Errorf("serviceSettings clusterLocal (wildcard) from %+v: %s, want %s", c.proxy, got, c.want)
		}
	}
	// The mesh config of the proxy's control plane decides.
	s.MeshConfigs = append(s.MeshConfigs, meshConfig("cluster2", ""))
	if got := render(Predict(s, hello, 5000, Proxy{Cluster: "cluster2", Network: "network2", ConfigCluster: "cluster2"})); len(got) != 2 || strings.Contains(strings.Join(got, ""), "cluster-local") {
		t.Errorf("cluster2's istiod has no serviceSettings: %q", got)
	}
}

func subsetRule(mode string) model.DestinationRule {
	return model.DestinationRule{Cluster: "cluster1", Namespace: "sample", Name: "hw", Host: "helloworld", Subsets: []model.Subset{
		{Name: "v1", Labels: map[string]string{"version": "v1"}},
		{Name: "v2", Labels: map[string]string{"version": "v2"}, TLSMode: mode},
		{Name: "c2", Labels: map[string]string{"topology.istio.io/cluster": "cluster2"}},
	}}
}

func versioned() *model.Snapshot {
	s := mesh(seedGateways, seedEndpoints)
	for _, sic := range s.Services[0].Clusters {
		for i := range sic.Endpoints {
			v := "v1"
			if sic.Cluster == "cluster2" {
				v = "v2"
			}
			sic.Endpoints[i].Labels = map[string]string{"app": "helloworld", "version": v, "team": "blue-" + v}
		}
	}
	return s
}

func TestPredictSubset(t *testing.T) {
	s := versioned()
	s.DestinationRules = []model.DestinationRule{subsetRule("")}
	net1, net2 := Proxy{Cluster: "cluster1", Network: "network1"}, Proxy{Cluster: "cluster2", Network: "network2"}
	ix := NewIndex(s)
	for _, c := range []struct {
		subset string
		proxy  Proxy
		want   string
	}{
		{"v2", net1, "192.168.60.9:15443 gateway w=1 UNKNOWN|drop 10.44.0.13 subset"},
		{"v2", net2, "10.144.0.15:5000 local w=1 HEALTHY|drop 10.44.0.13 subset"},
		{"v1", net1, "10.44.0.13:5000 local w=1 HEALTHY|drop 10.144.0.15 subset"},
		{"c2", net1, "192.168.60.9:15443 gateway w=1 UNKNOWN|drop 10.44.0.13 subset"}, // an augmented label
		{"nope", net1, "10.44.0.13:5000 local w=1 HEALTHY|192.168.60.9:15443 gateway w=1 UNKNOWN"},
	} {
		p := PredictSubset(s, ix, hello, c.subset, 5000, c.proxy)
		if got := strings.Join(render(p), "|"); got != c.want {
			t.Errorf("subset %s from %s: %s, want %s (getSubSetLabels, subsetLabels.SubsetOf)", c.subset, c.proxy.Network, got, c.want)
		}
		if p.EDSCluster != "outbound|5000|"+c.subset+"|"+hello {
			t.Errorf("cluster name %s", p.EDSCluster)
		}
	}
	// The subset's own TLS mode.
	s.DestinationRules = []model.DestinationRule{subsetRule("DISABLE")}
	p := PredictSubset(s, NewIndex(s), hello, "v2", 5000, net1)
	if len(p.Endpoints) != 0 || len(p.Dropped) != 2 || p.Dropped[1].Cause != CauseDestinationRule || !strings.Contains(p.Dropped[1].Why, "subset v2") {
		t.Errorf("subset TLS DISABLE (tlsModeForDestinationRule): %q %+v", render(p), p.Dropped)
	}
	if got := render(PredictSubset(s, NewIndex(s), hello, "", 5000, net1)); len(got) != 2 {
		t.Errorf("the subset's TLS does not apply to the whole service: %q", got)
	}
}

func TestDestinationRuleIndex(t *testing.T) {
	old, young := time.Unix(100, 0), time.Unix(200, 0)
	dr := func(ns, name, host string, created time.Time, exportTo []string, mode string, subsets ...string) model.DestinationRule {
		d := model.DestinationRule{Cluster: "cluster1", Namespace: ns, Name: name, Host: host, Created: created, ExportTo: exportTo}
		if mode != "" {
			d.TrafficPolicy, d.TLSMode = true, mode
		}
		for _, s := range subsets {
			d.Subsets = append(d.Subsets, model.Subset{Name: s})
		}
		return d
	}
	mc := meshConfig("cluster1", "")
	ix := indexDestinationRules([]model.DestinationRule{
		dr("sample", "b", "helloworld", young, nil, "DISABLE", "v2"),
		dr("sample", "a", "helloworld", old, nil, "SIMPLE", "v1"),
		dr("sample", "private", "sleep", old, []string{"."}, "DISABLE"),
	}, mc)
	m := forProxy(ix.lookup(hello, "sample", "sample"), "sample", nil)
	if m == nil || m.rule.TLSMode != "SIMPLE" || len(m.rule.Subsets) != 2 || strings.Join(m.from, ",") != "sample/a,sample/b" {
		t.Fatalf("merged rule (oldest's policy, all subsets): %+v", m)
	}
	if forProxy(ix.lookup("sleep.sample.svc.cluster.local", "sample", "default"), "default", nil) != nil {
		t.Error("exportTo . rule applies to another namespace's proxy")
	}
	if forProxy(ix.lookup("sleep.sample.svc.cluster.local", "sample", "sample"), "sample", nil) == nil {
		t.Error("exportTo . rule does not apply in its own namespace")
	}
	if mode, ok := m.tlsModeFor("v2", 5000); !ok || mode != "SIMPLE" {
		t.Errorf("subset without TLS falls back to the rule's: %s %v", mode, ok)
	}
	if _, ok := m.tlsModeFor("v9", 5000); ok {
		t.Error("unknown subset has no TLS mode")
	}
}

// TestPeerAuthenticationAnyLabel: a PeerAuthentication selects workloads
// on any of their labels, including those istiod adds (cluster, network,
// locality).
func TestPeerAuthenticationAnyLabel(t *testing.T) {
	for _, sel := range []map[string]string{{"team": "blue-v2"}, {"topology.istio.io/cluster": "cluster2"}} {
		s := versioned()
		s.PeerAuthentications = []model.PeerAuthentication{{Cluster: "cluster1", Namespace: "sample", Name: "off", Selector: sel, Mode: "DISABLE"}}
		p := Predict(s, hello, 5000, Proxy{Cluster: "cluster1", Network: "network1"})
		if got := strings.Join(render(p), "|"); got != "10.44.0.13:5000 local w=1 HEALTHY|drop 10.144.0.15 no-mtls" {
			t.Errorf("PeerAuthentication selector %v: %s", sel, got)
		}
	}
}

func TestPredictDiscoverySelectors(t *testing.T) {
	s := mesh(seedGateways, seedEndpoints)
	mc := meshConfig("cluster1", `discoverySelectors: [{matchLabels: {mesh: "on"}}]`)
	mc.DiscoveryNamespaces = map[string][]string{"cluster1": {"sample"}, "cluster2": {}}
	s.MeshConfigs = []model.MeshConfig{mc}
	got := strings.Join(render(Predict(s, hello, 5000, Proxy{Cluster: "cluster1", Network: "network1"})), "|")
	if got != "10.44.0.13:5000 local w=1 HEALTHY|drop 10.144.0.15 not-discovered" {
		t.Errorf("cluster2's sample namespace is not read by istiod: %s", got)
	}
	mc.DiscoveryNamespaces["cluster1"] = nil
	s.MeshConfigs = []model.MeshConfig{mc}
	if p := Predict(s, hello, 5000, Proxy{Cluster: "cluster1", Network: "network1"}); len(p.Endpoints) != 0 || p.NoEndpoints == "" {
		t.Errorf("no cluster's namespace is read: %q", render(p))
	}
}

// TestFirstRegistryPorts: a hostname in two clusters whose Services name
// port 5000 differently is one service with the first registry's ports —
// the config cluster's — and the other cluster's endpoints, whose slices
// carry the other name, are not sent (aggregate Controller.Services,
// mergeService); a port only the other cluster has gets no cluster at all.
func TestFirstRegistryPorts(t *testing.T) {
	s := mesh(seedGateways, seedEndpoints)
	s.Clusters = []model.Cluster{{ID: "cluster1"}, {ID: "cluster2"}}
	s.MeshConfigs = []model.MeshConfig{meshConfig("cluster1", ""), meshConfig("cluster2", "")}
	sic2 := s.Services[0].Clusters["cluster2"]
	sic2.Ports = []model.ServicePort{{Name: "tcp-web", Port: 5000}, {Name: "metrics", Port: 9090}}
	for i := range sic2.Endpoints {
		sic2.Endpoints[i].Ports = []model.EndpointPort{{Name: "tcp-web", Port: 5000}, {Name: "metrics", Port: 9090}}
	}
	from1 := Proxy{Cluster: "cluster1", Network: "network1", ConfigCluster: "cluster1"}
	got := render(Predict(s, hello, 5000, from1))
	if strings.Join(got, "|") != "10.44.0.13:5000 local w=1 HEALTHY|drop 10.144.0.15 port-name" {
		t.Errorf("istiod cluster1 uses cluster1's port names: %q", got)
	}
	if p := Predict(s, hello, 9090, from1); p.Found {
		t.Errorf("port 9090 exists only in cluster2's Service: istiod cluster1 has no such port: %+v", p)
	}
	// istiod cluster2 takes its own Service first.
	from2 := Proxy{Cluster: "cluster2", Network: "network2", ConfigCluster: "cluster2"}
	got = render(Predict(s, hello, 5000, from2))
	if strings.Join(got, "|") != "10.144.0.15:5000 local w=1 HEALTHY|drop 10.44.0.13 port-name" {
		t.Errorf("istiod cluster2 uses cluster2's port names: %q", got)
	}
}
