package model_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

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
			meshtest.CheckClearError(t, err)
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
			mc.ClusterLocal(h)
		}
	})
}
