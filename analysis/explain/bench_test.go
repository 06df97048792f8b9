package explain

import (
	"fmt"
	"testing"
	"time"

	"github.com/meshscope/meshscope/model"
)

// bigMultiPrimary is 3 clusters (cluster1 on network1, cluster2 and cluster3
// on network2) × 2,000 services × 5 endpoints per cluster (30,000
// endpoints), cluster1 and cluster2 primaries that each read every cluster,
// one shared root.
func bigMultiPrimary() *model.Snapshot {
	root := []model.RootCert{{Fingerprint: "ab", Subject: "CN=root", NotAfter: time.Now().AddDate(10, 0, 0)}}
	snap := &model.Snapshot{
		Gateways: []model.Gateway{
			{Network: "network1", Cluster: "cluster1", Address: "192.168.60.113", Port: 15443},
			{Network: "network2", Cluster: "cluster2", Address: "192.168.60.9", Port: 15443},
			{Network: "network2", Cluster: "cluster3", Address: "192.168.60.30", Port: 15443},
		},
		Networks: []model.Network{{Name: "network1", Clusters: []string{"cluster1"}, Gateways: 1}, {Name: "network2", Clusters: []string{"cluster2", "cluster3"}, Gateways: 2}},
	}
	nets := map[string]string{"cluster1": "network1", "cluster2": "network2", "cluster3": "network2"}
	for _, c := range []string{"cluster1", "cluster2", "cluster3"} {
		cl := model.Cluster{ID: c, Network: nets[c], State: model.StateSynced, RootCerts: root, Server: "https://" + c + ":6443"}
		if c == "cluster3" {
			cl.Source = model.SourceRef{Kind: model.SourceSecret, Name: "istio-system/s3", In: "cluster1", Key: c}
			cl.Sources = []model.SourceRef{cl.Source, {Kind: model.SourceSecret, Name: "istio-system/s3", In: "cluster2", Key: c}}
		} else {
			other := map[string]string{"cluster1": "cluster2", "cluster2": "cluster1"}[c]
			cl.Source = model.SourceRef{Kind: model.SourceContext, Name: c}
			cl.Sources = []model.SourceRef{cl.Source, {Kind: model.SourceSecret, Name: "istio-system/s-" + c, In: other, Key: c}}
			cl.SecretsRead = true
			cl.Istiods = []model.IstiodPod{{Name: "istiod", ClusterID: c, Ready: true}}
			snap.MeshConfigs = append(snap.MeshConfigs, model.MeshConfig{Cluster: c, Source: "default"})
		}
		snap.Clusters = append(snap.Clusters, cl)
	}
	for s := 0; s < 2000; s++ {
		host := fmt.Sprintf("svc-%04d.ns-%d.svc.cluster.local", s, s%20)
		ports := []model.ServicePort{{Name: "http", Port: 8080}}
		svc := &model.Service{Hostname: host, Namespace: fmt.Sprintf("ns-%d", s%20), Name: fmt.Sprintf("svc-%04d", s), Ports: ports, Clusters: map[string]*model.ServiceInCluster{}}
		for ci, c := range []string{"cluster1", "cluster2", "cluster3"} {
			sic := &model.ServiceInCluster{Cluster: c, Ports: ports, Type: "ClusterIP"}
			for e := 0; e < 5; e++ {
				sic.Endpoints = append(sic.Endpoints, model.Endpoint{
					Cluster: c, Network: nets[c], Address: fmt.Sprintf("10.%d.%d.%d", 40+ci, s/250, (s%250)+e), Pod: fmt.Sprintf("p-%d-%d", s, e),
					Ports: []model.EndpointPort{{Name: "http", Port: 8080}}, TLSMode: "istio", Ready: true,
				})
			}
			svc.Clusters[c] = sic
		}
		snap.Services = append(snap.Services, svc)
	}
	return snap
}

// BenchmarkDiagnose is doctor's prediction-only pass (--offline) over the
// whole mesh, with two primaries.
func BenchmarkDiagnose(b *testing.B) {
	snap := bigMultiPrimary()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if ps := Diagnose(snap, Inputs{}); len(ps) != 0 {
			b.Fatalf("healthy mesh: %+v", ps[0])
		}
	}
}
