package model_test

import (
	"slices"
	"testing"
	"time"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

// multiPrimary is the lab in multi-primary (two primaries, each reading
// the other through a remote secret, both read as contexts), each with a
// DestinationRule of its own.
func multiPrimary() *model.Snapshot {
	s := meshtest.LabMultiPrimary(time.Now())
	s.DestinationRules = []model.DestinationRule{{Cluster: "cluster1", Namespace: "sample", Name: "a", Host: "helloworld"}, {Cluster: "cluster2", Namespace: "sample", Name: "b", Host: "helloworld"}}
	return s
}

func TestClustersReadByAndRestrict(t *testing.T) {
	s := multiPrimary()
	if got := s.ControlPlanes(); !slices.Equal(got, []string{"cluster1", "cluster2"}) {
		t.Errorf("control planes %v", got)
	}
	for _, cp := range []string{"cluster1", "cluster2"} {
		ids, known := s.ClustersReadBy(cp)
		if !known || len(ids) != 2 {
			t.Errorf("%s reads %v (known %v), want both clusters", cp, ids, known)
		}
		v := s.ForControlPlane(cp)
		if len(v.DestinationRules) != 1 || v.DestinationRules[0].Cluster != cp || len(v.MeshConfigs) != 1 {
			t.Errorf("%s's view keeps Istio config %+v / %+v, want only its own", cp, v.DestinationRules, v.MeshConfigs)
		}
	}
	// cluster2's remote secret for cluster1 is deleted.
	s.Clusters[0].Sources = s.Clusters[0].Sources[:1]
	ids, known := s.ClustersReadBy("cluster2")
	if !known || !slices.Equal(ids, []string{"cluster2"}) {
		t.Fatalf("cluster2 reads %v (known %v), want only itself", ids, known)
	}
	s.Settings = s.ResolveSettings([]model.IstiodEnv{{Key: model.SettingAmbient, Value: "true"}, {Cluster: "cluster2", Key: model.SettingAmbientMultiNetwork, Value: "true"}})
	v := s.ForControlPlane("cluster2")
	if !v.SettingsFor("cluster2").AmbientMultiNetwork() || len(v.Settings) != 1 {
		t.Errorf("cluster2's view lost its istiod's stated settings: %+v", v.Settings)
	}
	if len(v.Clusters) != 1 || v.Clusters[0].ID != "cluster2" {
		t.Errorf("clusters %+v", v.Clusters)
	}
	hello := v.Service("helloworld.sample.svc.cluster.local")
	if hello == nil || len(hello.Clusters) != 1 || hello.Clusters["cluster2"] == nil {
		t.Errorf("helloworld in cluster2's view: %+v", hello)
	}
	if len(v.Gateways) != 1 || v.Gateways[0].Network != "network2" || len(v.Networks) != 1 || v.Networks[0].Name != "network2" {
		t.Errorf("gateways %+v networks %+v", v.Gateways, v.Networks)
	}
	if len(s.Service("helloworld.sample.svc.cluster.local").Clusters) != 2 || len(s.Clusters) != 2 {
		t.Error("Restrict changed the snapshot it cut")
	}
	// Unknown sets (secrets not read): the whole snapshot.
	s.Clusters[1].SecretsRead = false
	if s.ForControlPlane("cluster2") != s || s.ForControlPlane("nope") != s {
		t.Error("an unknown set must give the snapshot itself")
	}
}

func TestControlPlanesFromIstiodPods(t *testing.T) {
	s := &model.Snapshot{Clusters: []model.Cluster{
		{ID: "c1", State: model.StateSynced, Source: model.SourceRef{Kind: model.SourceContext, Name: "c1"}},
		{ID: "c2", State: model.StateSynced, Source: model.SourceRef{Kind: model.SourceSecret, Name: "istio-system/s", In: "c1", Key: "c2"}, Istiods: []model.IstiodPod{{Name: "istiod-x"}}},
		{ID: "c3", State: model.StateSynced, Source: model.SourceRef{Kind: model.SourceSecret, Name: "istio-system/s3", In: "c1", Key: "c3"}},
	}}
	if got := s.ControlPlanes(); !slices.Equal(got, []string{"c1", "c2"}) {
		t.Errorf("control planes %v, want c1 (holds secrets) and c2 (runs istiod)", got)
	}
	s.Clusters[1].Istiods = nil
	s.Clusters[1].Source.In, s.Clusters[2].Source.In = "", ""
	if got := s.ControlPlanes(); !slices.Equal(got, []string{"c1"}) {
		t.Errorf("control planes %v, want the first context", got)
	}
}
