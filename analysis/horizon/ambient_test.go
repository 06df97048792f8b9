package horizon

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshscope/meshscope/model"
)

// ambientSeed is the seed mesh run in ambient multi-network mode: both
// clusters primary and read by each other, namespace sample in ambient
// mode, and the ambient profile's scope (istio.io/global=true is global).
// global labels helloworld global in the given clusters.
func ambientSeed(global ...string) *model.Snapshot {
	return ambientSeedWith(map[string]string{model.SettingAmbient: "true", model.SettingAmbientMultiNetwork: "true"}, global...)
}

// ambientSeedWith is ambientSeed with each istiod pod's settings env.
func ambientSeedWith(env map[string]string, global ...string) *model.Snapshot {
	s := mesh(seedGateways, seedEndpoints)
	globalSel := &metav1.LabelSelector{MatchLabels: map[string]string{"istio.io/global": "true"}}
	for _, id := range []string{"cluster1", "cluster2"} {
		other := "cluster2"
		if id == "cluster2" {
			other = "cluster1"
		}
		s.Clusters = append(s.Clusters, model.Cluster{ID: id, Sources: []model.SourceRef{{Kind: model.SourceSecret, In: other}},
			Istiods: []model.IstiodPod{{Name: "istiod-" + id, Ready: true, Env: env}}})
		s.MeshConfigs = append(s.MeshConfigs, model.MeshConfig{Cluster: id,
			ServiceScopeConfigs: []model.ServiceScopeConfig{{ServicesSelector: globalSel, Scope: "GLOBAL"}}})
		a := model.AmbientCluster{Cluster: id,
			Namespaces:    map[string]map[string]string{"sample": {model.LabelDataplaneMode: "ambient"}},
			ServiceLabels: map[string]map[string]string{hello: {}}}
		if slices.Contains(global, id) {
			a.ServiceLabels[hello] = map[string]string{"istio.io/global": "true"}
		}
		s.Ambient = append(s.Ambient, a)
	}
	return s
}

// TestPredictAmbientScope: in ambient multi-network mode istiod's sidecar
// EDS of a service that is not global (as its own cluster's Service says)
// keeps the proxy's own cluster only (filterIstioEndpoint); a global one
// goes through split horizon as ever; without ambient nothing changes.
func TestPredictAmbientScope(t *testing.T) {
	from2 := Proxy{Cluster: "cluster2", Network: "network2", ConfigCluster: "cluster2"}
	for _, tc := range []struct {
		name string
		snap *model.Snapshot
		want []string
	}{
		{"not ambient", mesh(seedGateways, seedEndpoints),
			[]string{"10.144.0.15:5000 local w=1 HEALTHY", "192.168.60.113:15443 gateway w=1 UNKNOWN"}},
		{"ambient, not global", ambientSeed(),
			[]string{"10.144.0.15:5000 local w=1 HEALTHY", "drop 10.44.0.13 not-global"}},
		{"ambient, global in the proxy's cluster", ambientSeed("cluster2"),
			[]string{"10.144.0.15:5000 local w=1 HEALTHY", "192.168.60.113:15443 gateway w=1 UNKNOWN"}},
		{"ambient, global only in the other cluster", ambientSeed("cluster1"),
			[]string{"10.144.0.15:5000 local w=1 HEALTHY", "drop 10.44.0.13 not-global"}},
		// An istiod without ambient multi-network mode (its default) sends
		// sidecars the classic split horizon, however the mesh's namespaces
		// are labelled (issue 23: 2 of 12 views matched before).
		{"ambient namespace, istiod without multi-network", ambientSeedWith(map[string]string{model.SettingAmbient: "true"}),
			[]string{"10.144.0.15:5000 local w=1 HEALTHY", "192.168.60.113:15443 gateway w=1 UNKNOWN"}},
		{"ambient namespace, istiod without ambient", ambientSeedWith(map[string]string{model.SettingAmbientMultiNetwork: "true"}),
			[]string{"10.144.0.15:5000 local w=1 HEALTHY", "192.168.60.113:15443 gateway w=1 UNKNOWN"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := render(Predict(tc.snap, hello, 5000, from2)); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestGatewayAPIGatewaysInIndex: a Gateway API gateway on the address of
// a gateway Service is another gateway for istiod (its service account
// differs), and an istio-remote one counts only for its config cluster's
// istiod.
func TestGatewayAPIGatewaysInIndex(t *testing.T) {
	fromGW := model.Gateway{Network: "network1", Cluster: "cluster1", Address: "192.168.60.113", Port: 15443,
		From: model.GatewayFromGatewayAPI, Gateway: "istio-system/ew", ServiceAccount: "istio-system/ew"}
	remote := model.Gateway{Network: "network1", Cluster: "cluster2", Address: "192.168.70.1", Port: 15443,
		From: model.GatewayFromGatewayAPI, Gateway: "istio-system/r", ServiceAccount: "istio-system/r-istio-remote", ConfigClusterOnly: true}
	s := mesh(append(slices.Clone(seedGateways), fromGW, remote), seedEndpoints)
	ix := NewIndex(s)
	// The istiod of cluster1 does not read cluster2's istio-remote Gateway:
	// two gateways into network1 (Service and Gateway on one address).
	p := PredictWith(s, ix, hello, 5000, Proxy{Cluster: "cluster2", Network: "network2", ConfigCluster: "cluster1"})
	if want := []string{"10.144.0.15:5000 local w=2 HEALTHY", "192.168.60.113:15443 gateway w=1 UNKNOWN", "192.168.60.113:15443 gateway w=1 UNKNOWN"}; !slices.Equal(render(p), want) {
		t.Errorf("config cluster1: got %q, want %q", render(p), want)
	}
	// cluster2's istiod does: three gateways into network1, two in
	// cluster1 (the endpoint's cluster: those are used) and one in
	// cluster2; the scale factor is LCM(3, 2, 1) = 6.
	p = PredictWith(s, ix, hello, 5000, Proxy{Cluster: "cluster2", Network: "network2", ConfigCluster: "cluster2"})
	if want := []string{"10.144.0.15:5000 local w=6 HEALTHY", "192.168.60.113:15443 gateway w=3 UNKNOWN", "192.168.60.113:15443 gateway w=3 UNKNOWN"}; p.ScaleFactor != 6 || !slices.Equal(render(p), want) {
		t.Errorf("config cluster2: scale %d, endpoints %q", p.ScaleFactor, render(p))
	}
}
