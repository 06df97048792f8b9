package build

import (
	"testing"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

func TestResolveNetworkOrder(t *testing.T) {
	mn, _ := model.ParseMeshNetworks(meshtest.MeshNetworksYAML)
	ix := NewNetworkIndex(mn, "k")
	cases := []struct {
		name                 string
		pod, ns, cluster, ip string
		want                 string
		from                 model.NetworkFrom
	}{
		{"pod label wins over all", "netA", "netB", "cluster1", "10.144.0.1", "netA", model.NetworkFromPodLabel},
		{"system namespace label next", "", "netB", "cluster1", "10.144.0.1", "netB", model.NetworkFromNamespaceLabel},
		{"fromRegistry before fromCidr", "", "", "cluster1", "10.144.0.1", "network1", model.NetworkFromRegistry},
		{"fromCidr", "", "", "cluster2", "10.144.3.4", "network2", model.NetworkFromCIDR},
		{"nothing matches", "", "", "cluster2", "10.1.1.1", "", model.NetworkFromNone},
		{"bad ip", "", "", "cluster2", "not-an-ip", "", model.NetworkFromNone},
	}
	for _, tc := range cases {
		got, from := resolveNetwork(tc.pod, tc.ns, ix, tc.cluster, tc.ip)
		if got != tc.want || from != tc.from {
			t.Errorf("%s: got %q (%s), want %q (%s)", tc.name, got, from, tc.want, tc.from)
		}
	}
	if got, _ := resolveNetwork("", "", nil, "c", "10.0.0.1"); got != "" {
		t.Errorf("no meshNetworks: got %q", got)
	}
}
