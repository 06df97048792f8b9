package model

import (
	"slices"
	"testing"
)

// multiPrimary is a snapshot of two primaries, each reading the other
// through a remote secret (both read as contexts, as with two --context).
func multiPrimary() *Snapshot {
	ep := func(c, n, ip string) Endpoint { return Endpoint{Cluster: c, Network: n, Address: ip, Ready: true} }
	return &Snapshot{
		Clusters: []Cluster{
			{ID: "cluster1", Network: "network1", State: StateSynced, SecretsRead: true, Source: SourceRef{Kind: SourceContext, Name: "cluster1"},
				Sources: []SourceRef{{Kind: SourceContext, Name: "cluster1"}, {Kind: SourceSecret, Name: "istio-system/istio-remote-secret-cluster1", In: "cluster2", Key: "cluster1"}}},
			{ID: "cluster2", Network: "network2", State: StateSynced, SecretsRead: true, Source: SourceRef{Kind: SourceContext, Name: "cluster2"},
				Sources: []SourceRef{{Kind: SourceContext, Name: "cluster2"}, {Kind: SourceSecret, Name: "istio-system/istio-remote-secret-cluster2", In: "cluster1", Key: "cluster2"}}},
		},
		Networks: []Network{{Name: "network1", Clusters: []string{"cluster1"}, Gateways: 1}, {Name: "network2", Clusters: []string{"cluster2"}, Gateways: 1}},
		Gateways: []Gateway{{Network: "network1", Cluster: "cluster1", Address: "192.168.60.113", Port: 15443}, {Network: "network2", Cluster: "cluster2", Address: "192.168.60.9", Port: 15443}},
		Services: []*Service{{Hostname: "helloworld.sample.svc.cluster.local", Namespace: "sample", Name: "helloworld", Ports: []ServicePort{{Name: "http", Port: 5000}},
			Clusters: map[string]*ServiceInCluster{
				"cluster1": {Cluster: "cluster1", Ports: []ServicePort{{Name: "http", Port: 5000}}, Endpoints: []Endpoint{ep("cluster1", "network1", "10.44.0.13")}},
				"cluster2": {Cluster: "cluster2", Ports: []ServicePort{{Name: "http", Port: 5000}}, Endpoints: []Endpoint{ep("cluster2", "network2", "10.144.0.15")}},
			}}},
		DestinationRules: []DestinationRule{{Cluster: "cluster1", Namespace: "sample", Name: "a", Host: "helloworld"}, {Cluster: "cluster2", Namespace: "sample", Name: "b", Host: "helloworld"}},
		MeshConfigs:      []MeshConfig{{Cluster: "cluster1", Source: "default"}, {Cluster: "cluster2", Source: "default"}},
	}
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
	v := s.ForControlPlane("cluster2")
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
	s := &Snapshot{Clusters: []Cluster{
		{ID: "c1", State: StateSynced, Source: SourceRef{Kind: SourceContext, Name: "c1"}},
		{ID: "c2", State: StateSynced, Source: SourceRef{Kind: SourceSecret, Name: "istio-system/s", In: "c1", Key: "c2"}, Istiods: []IstiodPod{{Name: "istiod-x"}}},
		{ID: "c3", State: StateSynced, Source: SourceRef{Kind: SourceSecret, Name: "istio-system/s3", In: "c1", Key: "c3"}},
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
