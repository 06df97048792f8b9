package model

import (
	"testing"
)

func TestParseMeshConfigDefaultsAndForms(t *testing.T) {
	mc, err := ParseMeshConfig("")
	if err != nil || mc.RootNamespace != "istio-system" || mc.DefaultServiceExportTo[0] != "*" || !mc.EnableAutoMTLS ||
		mc.DefaultConfig.DiscoveryAddress != "istiod.istio-system.svc:15012" || mc.LocalityLbSetting == nil || !*mc.LocalityLbSetting.Enabled {
		t.Fatalf("defaults: %+v, %v", mc, err)
	}
	// snake_case and lowerCamel are both field names for istiod.
	mc, err = ParseMeshConfig(`
root_namespace: istio-config
defaultServiceExportTo: ["."]
service_settings:
- settings: {cluster_local: true}
  hosts: ["*.local-only.svc.cluster.local"]
serviceScopeConfigs:
- servicesSelector: {matchLabels: {istio.io/global: "true"}}
  scope: GLOBAL
defaultConfig:
  proxyMetadata: {ISTIO_META_DNS_CAPTURE: "true"}
someFieldMeshscopeDoesNotKnow: 1
`)
	if err != nil {
		t.Fatal(err)
	}
	if mc.RootNamespace != "istio-config" || mc.DefaultServiceExportTo[0] != "." || len(mc.ServiceSettings) != 1 || !mc.ServiceSettings[0].Settings.ClusterLocal {
		t.Fatalf("parsed: %+v", mc)
	}
	if mc.DefaultConfig.ProxyMetadata["ISTIO_META_DNS_CAPTURE"] != "true" || mc.DefaultConfig.DiscoveryAddress == "" {
		t.Fatalf("defaultConfig is merged onto the default: %+v", mc.DefaultConfig)
	}
	if len(mc.ServiceScopeConfigs) != 1 || mc.ServiceScopeConfigs[0].Scope != "GLOBAL" ||
		!Selects(mc.ServiceScopeConfigs[0].ServicesSelector, map[string]string{"istio.io/global": "true"}) ||
		Selects(mc.ServiceScopeConfigs[0].ServicesSelector, map[string]string{"app": "x"}) {
		t.Fatalf("scope configs: %+v", mc.ServiceScopeConfigs)
	}
	if _, err := ParseMeshConfig("serviceSettings: {not: a list}"); err == nil {
		t.Fatal("a wrongly shaped field must be an error")
	}
	// found by FuzzMeshConfig: a list as a mapping key
	if _, err := ParseMeshConfig("a: {[]} "); err == nil || err.Error() != "mesh config: a mapping key is a list, a mapping or null: keys must be plain names" {
		t.Errorf("list as a key: %v", err)
	}
	if _, err := ParseMeshConfig("a: [1, 2"); err == nil {
		t.Fatal("garbage must be an error")
	}
}

func TestClusterLocalHosts(t *testing.T) {
	def := DefaultMeshConfig()
	for host, want := range map[string]bool{
		"kube-dns.kube-system.svc.cluster.local":       true,
		"kubernetes.default.svc.cluster.local":         true,
		"istiod.istio-system.svc.cluster.local":        true,
		"helloworld.sample.svc.cluster.local":          false,
		"istiod-canary.istio-system.svc.cluster.local": false,
	} {
		if got := def.ClusterLocal(host); got != want {
			t.Errorf("default: %s cluster-local = %v, want %v", host, got, want)
		}
	}
	mc, err := ParseMeshConfig(`
serviceSettings:
- settings: {clusterLocal: true}
  hosts: ["*.sample.svc.cluster.local"]
- settings: {clusterLocal: false}
  hosts: ["helloworld.sample.svc.cluster.local", "*.kube-system.svc.cluster.local"]
`)
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]bool{
		"sleep.sample.svc.cluster.local":         true,  // wildcard
		"helloworld.sample.svc.cluster.local":    false, // the specific host wins
		"kube-dns.kube-system.svc.cluster.local": false, // a default overridden
		"kubernetes.default.svc.cluster.local":   true,
	} {
		if got := mc.ClusterLocal(host); got != want {
			t.Errorf("%s cluster-local = %v, want %v", host, got, want)
		}
	}
}
