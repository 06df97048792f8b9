package explain

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
)

// withEastWestGateways gives bigMultiPrimary's gateways what their second
// hop needs: each is a gateway Service's (istio-eastwestgateway in
// istio-system of its cluster) with one ready router pod injected with its
// network, cluster and network view, and both primaries hold istio's
// cross-network-gateway.
func withEastWestGateways(snap *model.Snapshot) *model.Snapshot {
	labels := func(n string) map[string]string {
		return map[string]string{"istio": "eastwestgateway", "app": "istio-eastwestgateway", model.LabelNetwork: n}
	}
	gwSvc := &model.Service{Hostname: model.Hostname("istio-eastwestgateway", "istio-system"), Namespace: "istio-system", Name: "istio-eastwestgateway",
		Ports: []model.ServicePort{{Name: "tls", Port: 15443, TargetPort: "15443"}}, Clusters: map[string]*model.ServiceInCluster{}}
	for i := range snap.Gateways {
		g := &snap.Gateways[i]
		g.From, g.Service = model.GatewayFromService, "istio-system/istio-eastwestgateway"
		ip, pod := fmt.Sprintf("10.%d.255.2", 40+i), "istio-eastwestgateway-"+g.Cluster
		gwSvc.Clusters[g.Cluster] = &model.ServiceInCluster{Cluster: g.Cluster, Type: "LoadBalancer", Ports: gwSvc.Ports,
			Labels: map[string]string{model.LabelNetwork: g.Network}, Selector: map[string]string{"istio": "eastwestgateway"},
			Endpoints: []model.Endpoint{{Cluster: g.Cluster, Network: g.Network, Address: ip, Pod: pod, Labels: labels(g.Network), Ready: true, Serving: true,
				Ports: []model.EndpointPort{{Name: "tls", Port: 15443}}}}}
		snap.Proxies = append(snap.Proxies, model.ProxyPod{Cluster: g.Cluster, Namespace: "istio-system", Name: pod, IP: ip, Kind: model.ProxyGateway, Network: g.Network, Ready: true,
			Injected: &model.InjectedIdentity{Kind: model.ProxyGateway, Network: g.Network, ClusterID: g.Cluster, NetworkView: g.Network}})
	}
	snap.Services = append(snap.Services, gwSvc)
	sort.Slice(snap.Services, func(i, j int) bool { return snap.Services[i].Hostname < snap.Services[j].Hostname })
	for _, cc := range []string{"cluster1", "cluster2"} {
		snap.IstioGateways = append(snap.IstioGateways, model.IstioGateway{Cluster: cc, Namespace: "istio-system", Name: "cross-network-gateway",
			Selector: map[string]string{"istio": "eastwestgateway"},
			Servers:  []model.GatewayServer{{Port: 15443, PortName: "tls", Protocol: "TLS", Hosts: []string{"*.local"}, TLS: true, TLSMode: model.TLSAutoPassthrough}}})
	}
	return snap
}

// wholeMeshPrediction is one whole-mesh prediction: every service port
// from every default viewpoint of every control plane.
func wholeMeshPrediction(snap *model.Snapshot) int {
	n := 0
	for _, cp := range snap.ControlPlanes() {
		view := snap.ForControlPlane(cp)
		ix := horizon.NewIndex(view)
		for _, vp := range horizon.Viewpoints(view) {
			vp.ConfigCluster = cp
			for _, svc := range view.Services {
				for _, p := range svc.Ports {
					n += len(horizon.PredictWith(view, ix, svc.Hostname, p.Port, vp).Endpoints)
				}
			}
		}
	}
	return n
}

// BenchmarkSecondHop is doctor's second-hop check over the bench mesh (2,000
// services, 30,000 endpoints, 3 clusters, 3 gateways): every path a sidecar
// of another network takes into each network, followed into its gateway —
// each gateway pod's listeners, SNI chains and SNI-DNAT clusters predicted,
// every service's SNI-DNAT EDS — reported with its ratio to one whole-mesh
// prediction measured in the same run. Target: under 200 ms.
func BenchmarkSecondHop(b *testing.B) {
	snap := withEastWestGateways(bigMultiPrimary())
	if ps := secondHopProblems(snap, &Inputs{Planes: plane.NewSet(snap, nil)}); len(ps) != 0 {
		b.Fatalf("healthy mesh: %d problems, first %+v", len(ps), ps[0])
	}
	// The baseline, measured here: the median of 5 whole-mesh predictions.
	var base []time.Duration
	for range 5 {
		start := time.Now()
		wholeMeshPrediction(snap)
		base = append(base, time.Since(start))
	}
	sort.Slice(base, func(i, j int) bool { return base[i] < base[j] })
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// A doctor run's plane views are built once per run, as here.
		secondHopProblems(snap, &Inputs{Planes: plane.NewSet(snap, nil)})
	}
	b.StopTimer()
	per := time.Duration(b.Elapsed().Nanoseconds() / int64(b.N))
	b.ReportMetric(float64(per.Milliseconds()), "ms/second-hop")
	b.ReportMetric(float64(base[2].Milliseconds()), "ms/whole-mesh-prediction")
	b.ReportMetric(float64(per)/float64(base[2]), "x-whole-mesh-prediction")
}
