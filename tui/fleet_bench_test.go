package tui

import (
	"fmt"
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/fleet"
	"github.com/meshscope/meshscope/model"
)

// bigFleet is 1,000 proxies across two istiods (cluster1 and cluster2,
// both primaries, 500 each), every tenth STALE, and the 1,000 pods they
// run in (every 50th injected with no network: drift), plus 20 pods no
// istiod lists.
func bigFleet(n int) (*model.Snapshot, []fleet.Read) {
	s := testSnapshot()
	s.Clusters[1].Istiods = []model.IstiodPod{{Name: "istiod-2", ClusterID: "cluster2", Ready: true, Version: "1.29.1"}}
	s.Clusters[0].Istiods[0].Version = "1.29.1"
	at := testNow.Add(-time.Minute)
	reads := []fleet.Read{{ControlPlane: "cluster1", Address: "127.0.0.1:8080"}, {ControlPlane: "cluster2", Address: "127.0.0.1:8090"}}
	for i := 0; i < n+20; i++ {
		c := i % 2
		cluster, network := fmt.Sprintf("cluster%d", c+1), fmt.Sprintf("network%d", c+1)
		ns, name := fmt.Sprintf("ns%02d", i%40), fmt.Sprintf("app%04d-7c9d8b5f4-x2k4q", i)
		in := &model.InjectedIdentity{Kind: model.ProxySidecar, Network: network, ClusterID: cluster, Image: "proxyv2:1.29.1", Version: "1.29.1"}
		if i%50 == 0 {
			in.Network = ""
		}
		s.Proxies = append(s.Proxies, model.ProxyPod{Cluster: cluster, Namespace: ns, Name: name, Node: cluster + "-node", Kind: model.ProxySidecar, Network: network, Ready: true, Injected: in})
		if i >= n {
			continue // connected nowhere
		}
		res := map[string]model.ResourceStatus{}
		for _, t := range []string{model.TypeCDS, model.TypeLDS, model.TypeEDS, model.TypeRDS} {
			res[t] = model.ResourceStatus{Sent: "n1", Acked: "n1", SentTime: at}
		}
		if i%10 == 0 {
			res[model.TypeEDS] = model.ResourceStatus{Sent: "n2", Acked: "n1", SentTime: at}
		}
		reads[c].Statuses = append(reads[c].Statuses, model.SyncStatus{Proxy: name + "." + ns, ProxyType: "sidecar", ClusterID: cluster, IstioVersion: "1.29.1", Resources: res})
	}
	return s, reads
}

// BenchmarkFleetBuild: fleet.Build of 1,000 connected proxies from two
// istiods joined with 1,020 pods.
func BenchmarkFleetBuild(b *testing.B) {
	snap, reads := bigFleet(1000)
	b.ReportAllocs()
	for b.Loop() {
		f := fleet.Build(snap, reads, testNow)
		if len(f.Proxies) != 1020 {
			b.Fatalf("%d proxies", len(f.Proxies))
		}
	}
}

// BenchmarkProxiesDerive: what the UI does off the update loop for a new
// syncz poll — fleet.Build, the rows, the map (buildFleet).
func BenchmarkProxiesDerive(b *testing.B) {
	snap, reads := bigFleet(1000)
	ix := buildIndex(snap, nil, nil)
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		if fx := buildFleet(ix, reads, nil, true, testNow); len(fx.rows) != 1020 {
			b.Fatalf("%d rows", len(fx.rows))
		}
	}
	b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// fleetBenchModel is the UI at 200×60 on the proxies view with the fleet
// of bigFleet built.
func fleetBenchModel(b *testing.B) *Model {
	snap, reads := bigFleet(1000)
	feed := &fleetFeed{fakeFeed: testFeed(snap), reads: reads}
	m := newTestModel(b, "default", 200, 60, snap, feed)
	m.Update(m.requestFleet()())
	m.push(viewProxies)
	return m
}

// BenchmarkProxiesApply: taking a built fleet in Update (every view
// refreshed: the proxies view re-filters its 1,020 rows).
func BenchmarkProxiesApply(b *testing.B) {
	m := fleetBenchModel(b)
	fx := m.fleet.fx
	b.ReportAllocs()
	for b.Loop() {
		m.Update(fleetMsg{fx: fx})
	}
}

// BenchmarkViewProxies: View() of the proxies view, 1,020 rows, the cursor
// in the middle.
func BenchmarkViewProxies(b *testing.B) {
	m := fleetBenchModel(b)
	for i := 0; i < 500; i++ {
		press(m, "j")
	}
	benchView(b, m)
}

// BenchmarkViewProxiesFiltered: the same through /state=STALE.
func BenchmarkViewProxiesFiltered(b *testing.B) {
	m := fleetBenchModel(b)
	press(m, "/")
	typeText(m, "state=STALE")
	press(m, "enter")
	if n := len(m.proxies.list.rows); n != 100 {
		b.Fatalf("%d rows STALE, want 100", n)
	}
	benchView(b, m)
}

// BenchmarkViewMap: View() of the map of that mesh.
func BenchmarkViewMap(b *testing.B) {
	m := fleetBenchModel(b)
	m.push(viewMap)
	benchView(b, m)
}
