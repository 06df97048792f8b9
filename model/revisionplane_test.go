package model_test

import (
	"slices"
	"testing"

	"github.com/meshscope/meshscope/model"
)

// canaryMesh is the multi-primary lab with a canary istiod beside
// cluster1's default one: the canary reads its own DestinationRule, its
// own mesh config, and runs ambient multi-network.
func canaryMesh() *model.Snapshot {
	s := multiPrimary()
	c := &s.Clusters[0]
	c.Istiods = []model.IstiodPod{
		{Name: "istiod-1", ClusterID: "cluster1", Ready: true},
		{Name: "istiod-canary-1", ClusterID: "cluster1", Revision: "canary", Ready: true, Env: map[string]string{model.SettingAmbient: "true"}},
	}
	c.PredictedRevision = "default"
	mc := model.DefaultMeshConfig()
	mc.Source = "configmap istio-system/istio-canary"
	s.RevisionPlanes = []model.RevisionPlane{{Cluster: "cluster1", Revision: "canary", MeshConfig: mc,
		DestinationRules: []model.DestinationRule{{Cluster: "cluster1", Namespace: "sample", Name: "canary-only", Host: "sleep"}}}}
	s.MeshConfigs = []model.MeshConfig{{Cluster: "cluster1", Source: "configmap istio-system/istio"}, {Cluster: "cluster2", Source: "configmap istio-system/istio"}}
	s.Settings = s.ResolveSettings(nil)
	return s
}

func TestRevisionPlanes(t *testing.T) {
	s := canaryMesh()
	if got := s.AllControlPlanes(); !slices.Equal(got, []string{"cluster1", "cluster1@canary", "cluster2"}) {
		t.Errorf("all control planes %v", got)
	}
	if got := s.ControlPlanes(); !slices.Equal(got, []string{"cluster1", "cluster2"}) {
		t.Errorf("control planes %v (the primaries only)", got)
	}
	for in, want := range map[string]string{"cluster1@canary": "cluster1@canary", "cluster1@default": "cluster1", "cluster1": "cluster1"} {
		if got, ok := s.CanonicalControlPlane(in); !ok || got != want {
			t.Errorf("canonical %s = %s, %v; want %s", in, got, ok, want)
		}
	}
	if _, ok := s.CanonicalControlPlane("cluster1@1-27"); ok {
		t.Error("a revision that does not run is not a control plane")
	}
	// Each revision's settings come from its own pods.
	if !s.SettingsFor("cluster1@canary").Get(model.SettingAmbient).Value || s.SettingsFor("cluster1").Get(model.SettingAmbient).Value {
		t.Errorf("settings: canary %v, default %v", s.SettingsFor("cluster1@canary"), s.SettingsFor("cluster1"))
	}

	v := s.ForControlPlane("cluster1@canary")
	if v == s {
		t.Fatal("the canary's view is the snapshot itself")
	}
	if len(v.DestinationRules) != 1 || v.DestinationRules[0].Name != "canary-only" {
		t.Errorf("canary's Istio config %+v, want its own only", v.DestinationRules)
	}
	if mc := v.MeshConfigFor("cluster1"); mc.Source != "configmap istio-system/istio-canary" {
		t.Errorf("canary's mesh config from %s", mc.Source)
	}
	if !v.SettingsFor("cluster1").Get(model.SettingAmbient).Value || v.ClusterByID("cluster1").PredictedRevision != "canary" {
		t.Errorf("canary's view: settings %v, predicted revision %q", v.SettingsFor("cluster1"), v.ClusterByID("cluster1").PredictedRevision)
	}
	if len(v.Clusters) != 2 || v.Service("helloworld.sample.svc.cluster.local") == nil {
		t.Errorf("the canary reads what its primary reads: clusters %d", len(v.Clusters))
	}
	// The predicted revision's view and the snapshot are untouched.
	d := s.ForControlPlane("cluster1")
	if len(d.DestinationRules) != 1 || d.DestinationRules[0].Name != "a" || d.MeshConfigFor("cluster1").Source != "configmap istio-system/istio" {
		t.Errorf("cluster1's view: %+v %s", d.DestinationRules, d.MeshConfigFor("cluster1").Source)
	}
	if s.ClusterByID("cluster1").PredictedRevision != "default" || len(s.DestinationRules) != 2 {
		t.Error("the canary's view changed the snapshot")
	}
	// Without its remote secrets read, the canary still gets its config.
	s.Clusters[0].SecretsRead = false
	if w := s.ForControlPlane("cluster1@canary"); w == s || w.DestinationRules[0].Name != "canary-only" {
		t.Errorf("unknown set: %+v", w.DestinationRules)
	}
}

func TestIstiodEnvPerRevision(t *testing.T) {
	s := canaryMesh()
	env := []model.IstiodEnv{
		{Key: model.SettingResolveHostnameGateways, Value: "false"},
		{Cluster: "cluster1", Key: model.SettingAmbientMultiNetwork, Value: "true"},
		{Cluster: "cluster1@canary", Key: model.SettingAmbientMultiNetwork, Value: "false"},
	}
	got := map[string]model.IstiodSettings{}
	for _, st := range s.ResolveSettings(env) {
		got[st.ControlPlane] = st
	}
	if st := got["cluster1"]; !st.Get(model.SettingAmbientMultiNetwork).Value || st.Get(model.SettingResolveHostnameGateways).Value {
		t.Errorf("cluster1: %v", st)
	}
	if st := got["cluster1@canary"]; st.Get(model.SettingAmbientMultiNetwork).Value || st.Get(model.SettingResolveHostnameGateways).Value {
		t.Errorf("cluster1@canary: its own flag wins over its cluster's: %v", st)
	}
	if st := got["cluster2"]; st.Get(model.SettingAmbientMultiNetwork).Value {
		t.Errorf("cluster2 takes cluster1's flag: %v", st)
	}
}
