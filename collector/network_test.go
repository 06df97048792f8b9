package collector

import (
	"github.com/meshscope/meshscope/model"

	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

const meshNetworksYAML = `
networks:
  network1:
    endpoints:
    - fromRegistry: cluster1
    gateways:
    - registryServiceName: istio-ingressgateway.istio-system.svc.cluster.local
      port: 443
  network2:
    endpoints:
    - from_cidr: 10.144.0.0/16
    gateways:
    - address: 192.168.60.9
      port: 15443
  network3:
    endpoints:
    - fromCidr: 10.200.0.0/16
    gateways:
    - address: gw.example.com
      port: 15443
`

func TestParseMeshNetworks(t *testing.T) {
	mn, err := model.ParseMeshNetworks(meshNetworksYAML)
	if err != nil {
		t.Fatal(err)
	}
	if got := mn.Networks["network2"].Endpoints[0].FromCIDR; got != "10.144.0.0/16" {
		t.Fatalf("snake_case from_cidr not read: %q", got)
	}
	// found by FuzzMeshNetworks: keys that are not names made the YAML
	// converter print Go values
	for _, bad := range []string{"networks: {? [a]: b}", "&0000000:\n 00000000:\n    0000000000000000000000000: 0000000000\n 00000000000: [{00000000000000000000000000000000000000000000000000000000000000}] ", "networks: {null: {}}"} {
		if _, err := model.ParseMeshNetworks(bad); err == nil || strings.Contains(err.Error(), "interface") || strings.Contains(err.Error(), "%!") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := model.ParseMeshNetworks("networks: [oops"); err == nil {
		t.Fatal("garbage parsed")
	}
	if mn, err := model.ParseMeshNetworks("  "); err != nil || len(mn.Networks) != 0 {
		t.Fatal("empty meshNetworks should be empty")
	}
}

func TestResolveNetworkOrder(t *testing.T) {
	mn, _ := model.ParseMeshNetworks(meshNetworksYAML)
	ix := newMeshNetworkIndex(mn, "k")
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

// NetworkFrom is a number in memory and the rule's name in JSON and text,
// both ways; no rule is omitted.
func TestNetworkFromText(t *testing.T) {
	for f := model.NetworkFromNone; f <= model.NetworkFromWorkloadEntry; f++ {
		b, err := json.Marshal(model.Endpoint{NetworkFrom: f})
		if err != nil {
			t.Fatal(err)
		}
		var back model.Endpoint
		if err := json.Unmarshal(b, &back); err != nil || back.NetworkFrom != f {
			t.Fatalf("%v: %s → %v, %v", f, b, back.NetworkFrom, err)
		}
		if f != model.NetworkFromNone && !strings.Contains(string(b), `"networkFrom":"`+f.String()+`"`) {
			t.Fatalf("%v: %s", f, b)
		}
	}
	if model.NetworkFromCIDR.String() != "meshNetworksFromCidr" || fmt.Sprint(model.NetworkFromPodLabel) != "podLabel" {
		t.Fatal("names changed")
	}
	var f model.NetworkFrom
	if err := f.UnmarshalText([]byte("dns")); err == nil {
		t.Fatal("unknown name accepted")
	}
}
