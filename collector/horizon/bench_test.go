package horizon

import (
	"fmt"
	"testing"

	"github.com/meshscope/meshscope/collector"
)

// bigMesh is 3 clusters (cluster1 on network1, cluster2 and cluster3 on
// network2) × 2,000 services × 5 endpoints per cluster: 30,000 endpoints.
func bigMesh() *collector.Snapshot {
	snap := &collector.Snapshot{Gateways: []collector.Gateway{
		gw("network1", "cluster1", "192.168.60.113", 15443),
		gw("network2", "cluster2", "192.168.60.9", 15443),
		gw("network2", "cluster3", "192.168.60.30", 15443),
	}}
	nets := map[string]string{"cluster1": "network1", "cluster2": "network2", "cluster3": "network2"}
	for s := 0; s < 2000; s++ {
		host := fmt.Sprintf("svc-%04d.ns-%d.svc.cluster.local", s, s%20)
		svc := &collector.Service{Hostname: host, Ports: []collector.ServicePort{{Name: "http", Port: 8080}}, Clusters: map[string]*collector.ServiceInCluster{}}
		for ci, c := range []string{"cluster1", "cluster2", "cluster3"} {
			sic := &collector.ServiceInCluster{Cluster: c, Ports: svc.Ports}
			for e := 0; e < 5; e++ {
				sic.Endpoints = append(sic.Endpoints, collector.Endpoint{
					Cluster: c, Network: nets[c], Address: fmt.Sprintf("10.%d.%d.%d", 40+ci, s/250, (s%250)+e),
					Ports: []collector.EndpointPort{{Name: "http", Port: 8080}}, TLSMode: "istio", Ready: true,
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
func withZones(snap *collector.Snapshot) *collector.Snapshot {
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
// every service's endpoints in 3 zones (issue 11). Target: under 100 ms.
func BenchmarkPredictWholeMeshLocalities(b *testing.B) {
	benchWholeMesh(b, withZones(bigMesh()))
}

// BenchmarkPredictWholeMesh predicts every service from every viewpoint
// (one per network plus "none"): the work behind a full explain/doctor pass.
// Target (issue #5): under 100 ms per pass.
func BenchmarkPredictWholeMesh(b *testing.B) { benchWholeMesh(b, bigMesh()) }

func benchWholeMesh(b *testing.B, snap *collector.Snapshot) {
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
