package build

import (
	"encoding/json"
	"testing"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

// FuzzMeshNetworks: any meshNetworks text parses or gives a clear error
// (about the document, not Go types), never a panic; what parses has its
// snake_case spellings folded into the lowerCamel fields, survives a round
// trip through JSON unchanged, and can be indexed and asked for networks.
func FuzzMeshNetworks(f *testing.F) {
	for _, s := range []string{
		meshtest.MeshNetworksYAML,
		"networks: {}",
		"networks:\n  network1:\n    endpoints: [{fromRegistry: cluster1}]\n    gateways: [{registry_service_name: istio-eastwestgateway.istio-system.svc.cluster.local, port: 15443}]\n",
		`{"networks":{"n":{"endpoints":[{"from_cidr":"10.0.0.0/8"},{"fromCidr":"fd00::/8"}],"gateways":[{"address":"1.2.3.4","port":15443,"locality":"r/z"}]}}}`,
		"networks: [oops",
		"networks: {n1: {gateways: [{port: -1}]}}",
		"- x",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		mn, err := model.ParseMeshNetworks(data)
		if err != nil {
			meshtest.CheckClearError(t, err)
			return
		}
		for name, n := range mn.Networks {
			for _, e := range n.Endpoints {
				if e.FromRegSnake != "" || e.FromCIDRSnak != "" {
					t.Fatalf("network %q: snake_case endpoint fields left: %+v", name, e)
				}
			}
			for _, g := range n.Gateways {
				if g.RegistrySnake != "" {
					t.Fatalf("network %q: snake_case gateway field left: %+v", name, g)
				}
			}
		}
		b, err := json.Marshal(mn)
		if err != nil {
			t.Fatal(err)
		}
		again, err := model.ParseMeshNetworks(string(b))
		if err != nil {
			t.Fatalf("meshNetworks does not read back its own JSON %s: %v", b, err)
		}
		if b2, _ := json.Marshal(again); string(b2) != string(b) {
			t.Fatalf("round trip changed meshNetworks:\n%s\n%s", b, b2)
		}
		ix := NewNetworkIndex(mn, "k")
		for _, ip := range []string{"10.44.0.13", "10.144.0.15", "fd00::1", "not-an-ip", ""} {
			for _, c := range []string{"cluster1", "cluster2", ""} {
				ix.networkFor(c, ip)
			}
		}
	})
}
