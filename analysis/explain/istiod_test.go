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

// TestIstiodDisagreements: istiod's own view against meshscope's, on the
// lab seed whose cluster2 istiod cluster1 reads through a remote secret.
func TestIstiodDisagreements(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*model.Snapshot)
		view func(*model.IstiodView)
		// want are in problems istiod-disagrees; nil: none at all.
		want   []string
		errors bool
	}{
		{name: "istiod agrees on the seed mesh"},
		// istiod keeps "synced" for a cluster whose API server is gone
		// (istio/istio#33799); meshscope says so as an error.
		{name: "stale synced", errors: true, want: []string{"33799"},
			edit: func(s *model.Snapshot) {
				s.Clusters[1].State, s.Clusters[1].Reason = model.StateError, "unreachable: connection refused"
			}},
		{name: "other gateways and clusters",
			view: func(v *model.IstiodView) {
				v.Gateways = v.Gateways[:1]                                                                                 // istiod lost network2's gateway
				v.Gateways = append(v.Gateways, model.IstiodGateway{Network: "network3", Addr: "203.0.113.7", Port: 15443}) // and knows a static one
				v.Clusters = append(v.Clusters[:1], model.IstiodCluster{ID: "cluster9", SecretName: "istio-system/x", SyncStatus: "timeout"})
			},
			want: []string{"does not know network2's gateway 192.168.60.9:15443", "uses network3's gateway 203.0.113.7:15443", "does not list cluster cluster2", "reads cluster cluster9"}},
		// An istio-remote Gateway's gateway is expected only from the
		// istiod of its own cluster; another istiod not listing it agrees.
		{name: "another cluster's istio-remote Gateway", edit: func(s *model.Snapshot) { remoteGateway(s, "cluster2") }},
		{name: "its own istio-remote Gateway", edit: func(s *model.Snapshot) { remoteGateway(s, "cluster1") },
			want: []string{"from Gateway API Gateway istio-system/remote in cluster1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := seed()
			secretIn(s, "cluster2", "cluster1")
			if c.edit != nil {
				c.edit(s)
			}
			v := labIstiodView()
			if c.view != nil {
				c.view(&v)
			}
			ps := IstiodDisagreements(s, v)
			if c.want == nil && len(ps) != 0 {
				t.Fatalf("want no disagreement, got %+v", ps)
			}
			for _, w := range c.want {
				if !hasProblem(ps, string(model.ProblemIstiodDisagrees), w) {
					t.Errorf("missing %q in %+v", w, ps)
				}
			}
			if c.errors && !HasErrors(ps) {
				t.Errorf("not an error: %+v", ps)
			}
		})
	}
}

// remoteGateway adds an istio-remote Gateway API gateway of network3 in cluster.
func remoteGateway(s *model.Snapshot, cluster string) {
	s.Gateways = append(s.Gateways, model.Gateway{Network: "network3", Cluster: cluster, Address: "203.0.113.8", Port: 15008, HBONEPort: 15008,
		From: model.GatewayFromGatewayAPI, Gateway: "istio-system/remote", ConfigClusterOnly: true})
}
