package explain

import (
	"testing"

	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

const vmHost = "vm.sample.svc.cluster.local"

// withVM adds a ServiceEntry VM service with a WorkloadEntry on each network.
func withVM(s *model.Snapshot, net2TLS string) *model.Snapshot {
	we := func(network, ip, name, tls string) model.Endpoint {
		return model.Endpoint{Cluster: "cluster1", Network: network, Address: ip, Workload: "WorkloadEntry/" + name, TLSMode: tls,
			Ready: true, Ports: []model.EndpointPort{{Name: "http", Port: 8080}}}
	}
	ports := []model.ServicePort{{Name: "http", Port: 8080}}
	s.Services = append(s.Services, &model.Service{Hostname: vmHost, Namespace: "sample", Name: "vm", Ports: ports, Source: model.SourceServiceEntry,
		Clusters: map[string]*model.ServiceInCluster{}, ServiceEntries: []*model.ServiceEntryHost{{Cluster: "cluster1", Namespace: "sample", Name: "vm",
			Resolution: "STATIC", Location: "MESH_INTERNAL", Ports: ports, WorkloadSelector: map[string]string{"app": "vm"},
			Endpoints: []model.Endpoint{we("network1", "10.44.0.80", "vm-1", "istio"), we("network2", "10.144.0.80", "vm-2", net2TLS)}}}})
	return s
}

func TestExplainServiceEntry(t *testing.T) {
	s := withVM(seed(), "istio")
	vp := xdsclient.Viewpoint{Cluster: "cluster1", Network: "network1"}
	la := xdsclient.LoadAssignment{Cluster: "outbound|8080||" + vmHost, Endpoints: []xdsclient.Endpoint{
		{Address: "10.44.0.80", Port: 8080, Weight: 1, Health: "UNKNOWN", Workload: xdsclient.Workload{Name: "vm-1", Namespace: "sample", Cluster: "cluster1"}},
		{Address: "192.168.60.9", Port: 15443, Weight: 1, Health: "UNKNOWN", TLSMode: "istio", Workload: xdsclient.Workload{Cluster: "cluster2"}},
	}}
	v := Explain(s, vmHost, 8080, vp, "cluster1", &la)
	if v.Verdict != Match || v.Source != model.SourceServiceEntry {
		t.Fatalf("verdict %s (%s): %+v", v.Verdict, v.Source, v.Differences)
	}
	if a := v.Actual[0]; a.Kind != horizon.Local || a.Workload != "WorkloadEntry/vm-1" || a.Pod != "" || a.Network != "network1" {
		t.Errorf("WorkloadEntry endpoint attributed as %+v", a)
	}
	if a := v.Actual[1]; a.Kind != horizon.Gateway || len(a.StandsFor) != 1 || a.StandsFor[0].Workload != "WorkloadEntry/vm-2" {
		t.Errorf("gateway stands for %+v", a.StandsFor)
	}
}
