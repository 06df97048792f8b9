package explain

import (
	"testing"

	"github.com/meshscope/meshscope/model"
)

func labIstiodView() model.IstiodView {
	return model.IstiodView{ControlPlane: "cluster1",
		Clusters: []model.IstiodCluster{{ID: "cluster1", SyncStatus: "synced"}, {ID: "cluster2", SecretName: "istio-system/istio-remote-secret-cluster2", SyncStatus: "synced"}},
		Gateways: []model.IstiodGateway{{Network: "network1", Cluster: "cluster1", Addr: "192.168.60.113", Port: 15443}, {Network: "network2", Cluster: "cluster2", Addr: "192.168.60.9", Port: 15443}},
	}
}

func secretIn(s *model.Snapshot, id, in string) {
	for i := range s.Clusters {
		if s.Clusters[i].ID == id {
			s.Clusters[i].Source.In = in
		}
	}
}

func TestIstiodAgrees(t *testing.T) {
	s := seed()
	secretIn(s, "cluster2", "cluster1")
	if ps := IstiodDisagreements(s, labIstiodView()); len(ps) != 0 {
		t.Errorf("istiod and meshscope agree on the seed mesh, got %+v", ps)
	}
}

// TestIstiodStaleSynced: istiod keeps "synced" for a cluster whose API
// server is gone (istio/istio#33799); meshscope says so as an error.
func TestIstiodStaleSynced(t *testing.T) {
	s := seed()
	secretIn(s, "cluster2", "cluster1")
	s.Clusters[1].State, s.Clusters[1].Reason = model.StateError, "unreachable: connection refused"
	ps := IstiodDisagreements(s, labIstiodView())
	if !HasErrors(ps) || !hasProblem(ps, "istiod-disagrees", "33799") {
		t.Errorf("stale synced not reported: %+v", ps)
	}
}

func TestIstiodDifferentGatewaysAndClusters(t *testing.T) {
	s := seed()
	secretIn(s, "cluster2", "cluster1")
	v := labIstiodView()
	v.Gateways = v.Gateways[:1]                                                                                 // istiod lost network2's gateway
	v.Gateways = append(v.Gateways, model.IstiodGateway{Network: "network3", Addr: "203.0.113.7", Port: 15443}) // and knows a static one
	v.Clusters = append(v.Clusters[:1], model.IstiodCluster{ID: "cluster9", SecretName: "istio-system/x", SyncStatus: "timeout"})
	ps := IstiodDisagreements(s, v)
	for _, want := range []string{"does not know network2's gateway 192.168.60.9:15443", "uses network3's gateway 203.0.113.7:15443", "does not list cluster cluster2", "reads cluster cluster9"} {
		if !hasProblem(ps, "istiod-disagrees", want) {
			t.Errorf("missing %q in %+v", want, ps)
		}
	}
}

// TestIstiodRemoteGatewayPerControlPlane: an istio-remote Gateway's
// gateway is expected only from the istiod of its own cluster; another
// istiod not listing it agrees.
func TestIstiodRemoteGatewayPerControlPlane(t *testing.T) {
	s := seed()
	secretIn(s, "cluster2", "cluster1")
	s.Gateways = append(s.Gateways, model.Gateway{Network: "network3", Cluster: "cluster2", Address: "203.0.113.8", Port: 15008, HBONEPort: 15008,
		From: model.GatewayFromGatewayAPI, Gateway: "istio-system/remote", ConfigClusterOnly: true})
	if ps := IstiodDisagreements(s, labIstiodView()); len(ps) != 0 {
		t.Errorf("cluster1's istiod does not read cluster2's istio-remote Gateway, got %+v", ps)
	}
	s.Gateways[len(s.Gateways)-1].Cluster = "cluster1"
	if ps := IstiodDisagreements(s, labIstiodView()); !hasProblem(ps, "istiod-disagrees", "from Gateway API Gateway istio-system/remote in cluster1") {
		t.Errorf("cluster1's istiod should know its own istio-remote Gateway: %+v", ps)
	}
}
