package collector

import (
	"github.com/meshscope/meshscope/model"

	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// goTypeWords are what a decoding error says when it speaks of Go instead
// of the user's document.
var goTypeWords = []string{"Go struct field", "Go value", "collector.", "map[string]", "[]"}

func checkClearError(t *testing.T, err error) {
	t.Helper()
	msg := err.Error()
	if strings.TrimSpace(msg) == "" {
		t.Fatal("empty error")
	}
	for _, w := range goTypeWords {
		if strings.Contains(msg, w) {
			t.Fatalf("error speaks Go (%q): %s", w, msg)
		}
	}
}

// FuzzMeshNetworks: any meshNetworks text parses or gives a clear error
// (about the document, not Go types), never a panic; what parses has its
// snake_case spellings folded into the lowerCamel fields, survives a round
// trip through JSON unchanged, and can be indexed and asked for networks.
func FuzzMeshNetworks(f *testing.F) {
	for _, s := range []string{
		meshNetworksYAML,
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
			checkClearError(t, err)
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
		ix := newMeshNetworkIndex(mn, "k")
		for _, ip := range []string{"10.44.0.13", "10.144.0.15", "fd00::1", "not-an-ip", ""} {
			for _, c := range []string{"cluster1", "cluster2", ""} {
				ix.networkFor(c, ip)
			}
		}
	})
}

// FuzzMeshConfig: any mesh config text parses onto istiod's defaults or
// gives a clear error, never a panic; on error the result is istiod's
// defaults, untouched (bad input loses nothing it had); what parses keeps
// the defaults istiod guarantees (root namespace, exportTo, discovery
// address, service scopes) and can be asked the cluster-local rule.
func FuzzMeshConfig(f *testing.F) {
	for _, s := range []string{
		"",
		"root_namespace: istio-config\ndefaultServiceExportTo: [\".\"]\nservice_settings:\n- settings: {cluster_local: true}\n  hosts: [\"*.local-only.svc.cluster.local\"]\n",
		"serviceScopeConfigs:\n- servicesSelector: {matchLabels: {istio.io/global: \"true\"}}\n  scope: GLOBAL\n- servicesSelector: {matchExpressions: [{key: a, operator: In, values: [b]}]}\n",
		"defaultConfig:\n  discoveryAddress: istiod-1-24.istio-system.svc:15012\n  proxyMetadata: {ISTIO_META_DNS_CAPTURE: \"true\"}\n",
		"serviceSettings:\n- settings: {clusterLocal: false}\n  hosts: [\"*.kube-system.svc.cluster.local\", \"*\"]\n",
		"trustDomain: example.org\nmeshId: mesh1\nenableAutoMtls: false\ndefaultServiceExportTo: null\n",
		"serviceSettings: {not: a list}",
		"a: [1, 2",
		"defaultConfig: [x]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		mc, err := model.ParseMeshConfig(text)
		if err != nil {
			checkClearError(t, err)
			if !strings.HasPrefix(err.Error(), "mesh config: ") {
				t.Fatalf("error does not say it is about the mesh config: %v", err)
			}
			if !reflect.DeepEqual(mc, model.DefaultMeshConfig()) {
				t.Fatalf("on error the result is not istiod's defaults: %+v", mc)
			}
			return
		}
		if mc.RootNamespace == "" || mc.DefaultConfig.DiscoveryAddress == "" ||
			len(mc.DefaultServiceExportTo) == 0 || len(mc.DefaultDestinationRuleExportTo) == 0 || len(mc.DefaultVirtualServiceExportTo) == 0 {
			t.Fatalf("a default istiod guarantees is gone: %+v", mc)
		}
		for _, s := range mc.ServiceScopeConfigs {
			if s.Scope == "" {
				t.Fatalf("service scope without a scope: %+v", s)
			}
			model.Selects(s.ServicesSelector, map[string]string{"istio.io/global": "true"})
			model.Selects(s.NamespaceSelector, map[string]string{"kubernetes.io/metadata.name": "sample"})
		}
		for _, h := range []string{"kube-dns.kube-system.svc.cluster.local", "helloworld.sample.svc.cluster.local", "", "*"} {
			mc.ClusterLocal(h, "")
			mc.ClusterLocal(h, "example.org")
		}
	})
}
