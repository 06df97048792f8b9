package build

import (
	"testing"
	"time"

	"github.com/meshscope/meshscope/model"
)

// TestAssemble: assemble is pure — two clusters' shares become one
// snapshot: a hostname both hold is one service (the first cluster names
// it), gateways are sorted, networks list their clusters, a meshNetworks
// warning lands on its cluster, and an unwatched cluster keeps its state.
func TestAssemble(t *testing.T) {
	part := func(id, network, gwIP string) *Part {
		return &Part{ID: id, Network: network,
			Services:    map[string]*model.ServiceInCluster{"hello.sample.svc.cluster.local": {Cluster: id, Ports: []model.ServicePort{{Name: "http", Port: 5000}}}},
			serviceMeta: map[string][3]string{"hello.sample.svc.cluster.local": {"sample", "hello"}},
			gateways:    []model.Gateway{{Network: network, Cluster: id, Address: gwIP, Port: 15443}},
			networks:    map[string]bool{network: true}}
	}
	mn := &model.MeshNetworks{Networks: map[string]model.MeshNetwork{"network3": {Endpoints: []model.MeshNetworkEndpoint{{FromCIDR: "10.9.0.0/16"}}}}}
	in := Input{Version: 7, Time: time.Unix(1, 0), SystemNamespace: "istio-system", MeshNetworks: mn,
		NetworkWarnings: map[string][]string{"k2": {"meshNetworks in ConfigMap istio does not parse"}},
		Clusters: []Share{
			{Key: "k2", Cluster: model.Cluster{ID: "cluster2", State: model.StateSynced}, Part: part("cluster2", "network2", "192.168.60.9")},
			{Key: "k1", FromContext: true, Cluster: model.Cluster{ID: "cluster1", State: model.StateSynced}, Part: part("cluster1", "network1", "192.168.60.113"),
				MeshConfig: &model.MeshConfig{Cluster: "cluster1", RootNamespace: "istio-system"}},
			{Key: "k3", Cluster: model.Cluster{ID: "cluster3", State: model.StateError, Reason: "unreachable"}},
		}}
	s := Assemble(in)
	if s.Version != 7 || len(s.Clusters) != 3 || s.Clusters[0].Network != "network2" || s.Clusters[2].State != model.StateError {
		t.Fatalf("clusters: %+v", s.Clusters)
	}
	if len(s.Clusters[0].Warnings) != 1 || len(s.Clusters[1].Warnings) != 0 {
		t.Errorf("meshNetworks warning on the wrong cluster: %+v", s.Clusters)
	}
	if len(s.Services) != 1 || len(s.Services[0].Clusters) != 2 || s.Services[0].Source != model.SourceKube {
		t.Errorf("services: %+v", s.Services)
	}
	if len(s.Gateways) != 2 || s.Gateways[0].Network != "network1" {
		t.Errorf("gateways not sorted by network: %+v", s.Gateways)
	}
	var names []string
	for _, n := range s.Networks {
		names = append(names, n.Name)
	}
	if len(names) != 3 || names[2] != "network3" || s.Networks[2].FromCIDR[0] != "10.9.0.0/16" || s.Networks[0].Clusters[0] != "cluster1" {
		t.Errorf("networks: %+v", s.Networks)
	}
	if len(s.MeshConfigs) != 1 || s.MeshConfigFor("cluster1").RootNamespace != "istio-system" {
		t.Errorf("mesh configs: %+v", s.MeshConfigs)
	}
}
