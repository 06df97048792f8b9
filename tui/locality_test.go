package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/model"
)

const vmHost = "vm.mesh.internal"

// localitySnapshot is the test mesh with helloworld's cluster2 pods in two
// zones (istiod's groups "region2/zone-b/" and "region2/zone-c/", as from
// their nodes), so that network1 gets network2's gateway once per zone and
// Envoy keeps only the first (istio/istio#56355); a DestinationRule with
// subsets v1 and v2 for helloworld; and a VM service from a ServiceEntry
// whose WorkloadEntries sit on both networks.
func localitySnapshot() *model.Snapshot {
	s := testSnapshot()
	hello := s.Service(helloHost)
	eps := hello.Clusters["cluster2"].Endpoints
	eps = append(eps, ep("cluster2", "network2", "10.20.0.10", "helloworld-v2-3c4d5", true))
	for i := range eps {
		eps[i].Labels["version"] = "v2"
		eps[i].Locality = "region2/zone-c/"
	}
	eps[0].Locality = "region2/zone-b/"
	hello.Clusters["cluster2"].Endpoints = eps
	hello.Clusters["cluster1"].Endpoints[0].Labels["version"] = "v1"
	s.DestinationRules = []model.DestinationRule{{Cluster: "cluster1", Namespace: "sample", Name: "helloworld", Host: "helloworld",
		Subsets: []model.Subset{{Name: "v1", Labels: map[string]string{"version": "v1"}}, {Name: "v2", Labels: map[string]string{"version": "v2"}}}}}
	vmPort := []model.ServicePort{{Name: "http", Port: 8080, Protocol: "HTTP"}}
	vm := func(cluster, network, addr, name string) model.Endpoint {
		e := ep(cluster, network, addr, "", true)
		e.Workload, e.Labels["app"] = "WorkloadEntry/"+name, "vm"
		e.Ports = []model.EndpointPort{{Name: "http", Port: 8080}}
		return e
	}
	s.Services = append(s.Services, &model.Service{Hostname: vmHost, Namespace: "sample", Name: "vm", Ports: vmPort,
		Source: model.SourceServiceEntry, Clusters: map[string]*model.ServiceInCluster{},
		ServiceEntries: []*model.ServiceEntryHost{{Cluster: "cluster1", Namespace: "sample", Name: "vm", Resolution: "STATIC", Location: "MESH_INTERNAL",
			Ports: vmPort, WorkloadSelector: map[string]string{"app": "vm"},
			Endpoints: []model.Endpoint{vm("cluster1", "network1", "10.10.0.80", "vm-net1"), vm("cluster1", "network2", "10.20.0.80", "vm-net2")}}}})
	sortServices(s.Services)
	return s
}

// localityFeed sends exactly the prediction, subsets included.
func localityFeed(snap *model.Snapshot) *fakeFeed {
	f := testFeed(snap)
	for _, vp := range f.vps {
		proxy := horizon.Proxy{Cluster: vp.Cluster, Network: vp.Network}
		for _, subset := range []string{"", "v1", "v2"} {
			f.setActual(vp, loadAssignmentOf(horizon.PredictSubset(snap, horizon.NewIndex(snap), helloHost, subset, 5000, proxy)))
		}
		f.setActual(vp, loadAssignmentOf(horizon.Predict(snap, vmHost, 8080, proxy)))
	}
	return f
}

// TestGoldenServiceLocalities: the service view shows what explain shows
// for a remote network in two zones — each entry's locality and Envoy's
// share (istiod's intended share in parentheses, dup for the entry Envoy
// drops), the split per viewpoint, and doctor's duplicate-gateway problem;
// S cycles the DestinationRule's subsets; a ServiceEntry's workloads are
// named.
func TestGoldenServiceLocalities(t *testing.T) {
	snap := localitySnapshot()
	m := newTestModel(t, "default", 120, 40, snap, localityFeed(snap))
	m.openService(helloHost)
	out := plain(m)
	checkSize(t, out, 120, 40)
	for _, want := range []string{
		"locality region2/zone-b", "locality region2/zone-c", "50% (25%)", "0% (50%) dup",
		"split: network1 50% (istiod's weights mean 25%),", "network2 50% (istiod's weights mean 75%) —",
		"! error duplicate-gateway: helloworld.sample port 5000: network2 gets 50 % of a network1 proxy's requests instead of",
		"subset [all] v1  v2 ", "verdict match",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("service view lacks %q:\n%s", want, out)
		}
	}
	golden.RequireEqual(t, out)

	press(m, "S", "S")
	out = plain(m)
	if !strings.Contains(out, "Service "+helloHost+" · subset v2") || !strings.Contains(out, "[v2]") || !strings.Contains(out, "10.10.0.5:5000 subset") ||
		strings.Count(out, "verdict match") != 2 {
		t.Errorf("S S should show subset v2 (cluster2's pods only, as sent):\n%s", out)
	}
	press(m, "S")
	if m.service.subset != "" {
		t.Errorf("S after the last subset should go back to the whole service, got %q", m.service.subset)
	}

	// The services view marks the ServiceEntry's host and the duplicate
	// gateway; the VM service names its WorkloadEntries.
	m.push(viewServices)
	out = plain(m)
	for _, want := range []string{"✓✓·", vmHost, " SE", "dup-gw"} {
		if !strings.Contains(out, want) {
			t.Errorf("services view lacks %q:\n%s", want, out)
		}
	}
	m.openService(vmHost)
	out = plain(m)
	if !strings.Contains(out, "sample · ServiceEntry") || !strings.Contains(out, "WorkloadEntry/vm-net1") || !strings.Contains(out, "→ WorkloadEntry/vm-net2 10.20.0.80") {
		t.Errorf("the VM service should name its WorkloadEntries:\n%s", out)
	}
}
