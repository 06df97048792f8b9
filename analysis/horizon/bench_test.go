package horizon

import (
	"fmt"
	"testing"

	"github.com/meshscope/meshscope/model"
)

// bigMesh is 3 clusters (cluster1 on network1, cluster2 and cluster3 on
// network2) × 2,000 services × 5 endpoints per cluster: 30,000 endpoints.
func bigMesh() *model.Snapshot {
	snap := &model.Snapshot{Gateways: []model.Gateway{
		gw("network1", "cluster1", "192.168.60.113", 15443),
		gw("network2", "cluster2", "192.168.60.9", 15443),
		gw("network2", "cluster3", "192.168.60.30", 15443),
	}}
	nets := map[string]string{"cluster1": "network1", "cluster2": "network2", "cluster3": "network2"}
	for s := 0; s < 2000; s++ {
		host := fmt.Sprintf("svc-%04d.ns-%d.svc.cluster.local", s, s%20)
		svc := &model.Service{Hostname: host, Ports: []model.ServicePort{{Name: "http", Port: 8080}}, Clusters: map[string]*model.ServiceInCluster{}}
		for ci, c := range []string{"cluster1", "cluster2", "cluster3"} {
			sic := &model.ServiceInCluster{Cluster: c, Ports: svc.Ports}
			for e := 0; e < 5; e++ {
				sic.Endpoints = append(sic.Endpoints, model.Endpoint{
					Cluster: c, Network: nets[c], Address: fmt.Sprintf("10.%d.%d.%d", 40+ci, s/250, (s%250)+e),
					Ports: []model.EndpointPort{{Name: "http", Port: 8080}}, TLSMode: "istio", Ready: true,
				})
			}
			svc.Clusters[c] = sic
		}
		snap.Services = append(snap.Services, svc)
	}
	return snap
}

// withZones spreads every endpoint of the mesh over 3 zones of its
// cluster's region, as node labels give them ("region/zone/"): every
// service's remote gateway is then sent once per zone, and Envoy's shares
// take the slow path (duplicate addresses).
func withZones(snap *model.Snapshot) *model.Snapshot {
	// One string per node's locality, shared by its pods, as the
	// collector's Node cache gives them.
	locs := map[string]string{}
	for _, svc := range snap.Services {
		for _, sic := range svc.Clusters {
			for i := range sic.Endpoints {
				l := fmt.Sprintf("region-%s/zone-%c/", sic.Cluster, 'a'+i%3)
				if s, ok := locs[l]; ok {
					l = s
				}
				locs[l] = l
				sic.Endpoints[i].Locality = l
			}
		}
	}
	return snap
}

// BenchmarkPredictWholeMeshLocalities is BenchmarkPredictWholeMesh with
// every service's endpoints in 3 zones. Target: under 100 ms.
func BenchmarkPredictWholeMeshLocalities(b *testing.B) {
	predictWholeMesh(b, withZones(bigMesh()))
}

// BenchmarkPredictWholeMesh predicts every service from every viewpoint
// (one per network plus "none"): the work behind a full explain/doctor pass.
// Target: under 100 ms per pass.
func BenchmarkPredictWholeMesh(b *testing.B) { predictWholeMesh(b, bigMesh()) }

// predictWholeMesh predicts every service of snap from a network1 and a
// network2 sidecar and a proxy without NETWORK, once per iteration.
func predictWholeMesh(b *testing.B, snap *model.Snapshot) {
	views := []Proxy{{Cluster: "cluster1", Network: "network1"}, {Cluster: "cluster2", Network: "network2"}, {Cluster: "cluster1"}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ix := NewIndex(snap)
		n := 0
		for _, svc := range snap.Services {
			for _, v := range views {
				n += len(PredictWith(snap, ix, svc.Hostname, 8080, v).Endpoints)
			}
		}
		if n == 0 {
			b.Fatal("no endpoints predicted")
		}
	}
	b.ReportMetric(30000, "endpoints")
}

// bigMeshWithIstioConfig is bigMesh where one service in five is a
// ServiceEntry (its 15 endpoints WorkloadEntries on both networks) and one
// in five a Kubernetes Service plus a ServiceEntry of the same host, with
// DestinationRules (subsets, exportTo) for one service in ten,
// PeerAuthentications with selectors and a mesh config with serviceSettings:
// still 2,000 services and 30,000 endpoints.
func bigMeshWithIstioConfig() *model.Snapshot {
	snap := bigMesh()
	mc, err := model.ParseMeshConfig(`serviceSettings: [{settings: {clusterLocal: true}, hosts: ["*.ns-3.svc.cluster.local"]}]
defaultServiceExportTo: ["*"]`)
	if err != nil {
		panic(err)
	}
	mc.Cluster = "cluster1"
	snap.MeshConfigs = []model.MeshConfig{mc}
	nets := []string{"network1", "network2", "network2"}
	for s, svc := range snap.Services {
		svc.Namespace = fmt.Sprintf("ns-%d", s%20)
		we := func(i int) model.Endpoint {
			return model.Endpoint{Cluster: "cluster1", Network: nets[i%3], Address: fmt.Sprintf("10.%d.%d.%d", 50+i%3, s/250, (s%250)+i/3),
				Workload: fmt.Sprintf("WorkloadEntry/vm-%d", i), Labels: map[string]string{"app": "vm", "version": "v1"}, TLSMode: "istio", Ready: true,
				Ports: []model.EndpointPort{{Name: "http", Port: 8080}}}
		}
		entry := &model.ServiceEntryHost{Cluster: "cluster1", Namespace: svc.Namespace, Name: fmt.Sprintf("se-%d", s), Resolution: "STATIC",
			Ports: svc.Ports, WorkloadSelector: map[string]string{"app": "vm"}}
		switch s % 5 {
		case 0: // ServiceEntry only: its 15 endpoints are WorkloadEntries
			for i := 0; i < 15; i++ {
				entry.Endpoints = append(entry.Endpoints, we(i))
			}
			svc.Clusters = map[string]*model.ServiceInCluster{}
			svc.Source = model.SourceServiceEntry
		case 1: // both: 4 pods per cluster and 3 WorkloadEntries
			for _, sic := range svc.Clusters {
				sic.Endpoints = sic.Endpoints[:4]
			}
			for i := 0; i < 3; i++ {
				entry.Endpoints = append(entry.Endpoints, we(i))
			}
			svc.Source = model.SourceBoth
		default:
			continue
		}
		svc.ServiceEntries = []*model.ServiceEntryHost{entry}
		if s%10 == 0 {
			snap.DestinationRules = append(snap.DestinationRules, model.DestinationRule{Cluster: "cluster1", Namespace: svc.Namespace,
				Name: fmt.Sprintf("dr-%d", s), Host: svc.Hostname, ExportTo: []string{"*"},
				Subsets: []model.Subset{{Name: "v1", Labels: map[string]string{"version": "v1"}}}})
		}
	}
	for n := 0; n < 20; n++ {
		snap.PeerAuthentications = append(snap.PeerAuthentications, model.PeerAuthentication{Cluster: "cluster1", Namespace: fmt.Sprintf("ns-%d", n),
			Name: "team", Selector: map[string]string{"team": "x"}, Mode: "DISABLE"})
	}
	return snap
}

// BenchmarkPredictWholeMeshIstioConfig is BenchmarkPredictWholeMesh on
// bigMeshWithIstioConfig. Target: under 100 ms per pass.
func BenchmarkPredictWholeMeshIstioConfig(b *testing.B) {
	predictWholeMesh(b, bigMeshWithIstioConfig())
}
