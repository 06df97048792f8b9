package watch

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/meshscope/meshscope/collector/build"
	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

// largeView is one cluster with nSvc services of nEp endpoints each.
func largeView(nSvc, nEp int) build.Caches {
	v := build.Caches{}
	pods := map[string]*build.Pod{}
	in := newInterner()
	for i := 0; i < nSvc; i++ {
		ns := fmt.Sprintf("ns%d", i%50)
		name := fmt.Sprintf("svc%d", i)
		v.Services = append(v.Services, meshtest.Service(ns, name, 8080))
		m := map[string]string{}
		for j := 0; j < nEp; j++ {
			pod := fmt.Sprintf("%s-%d", name, j)
			ip := fmt.Sprintf("10.%d.%d.%d", i/250, i%250, j)
			m[pod] = ip
			cp, _ := in.transformPod(meshtest.Pod(ns, pod, ip, "network1", true))
			pods[ns+"/"+pod] = cp.(*build.Pod)
		}
		cs, _ := in.transformEndpointSlice(meshtest.EndpointSlice(ns, name, name+"-x", 8080, m))
		v.Slices = append(v.Slices, cs.(*build.Slice))
	}
	v.Pod = func(k string) *build.Pod { return pods[k] }
	v.PodCount = len(pods)
	v.SystemNamespace = meshtest.Namespace("istio-system", "network1")
	n, _ := transformNode(meshtest.Node("node1", "r", "z"))
	v.Node = func(string) *build.Node { return n.(*build.Node) }
	return v
}

// BenchmarkBuildPart: one cluster of 2,000 services × 15 endpoints
// (30,000 endpoints) turned into its snapshot share.
func BenchmarkBuildPart(b *testing.B) {
	v := largeView(2000, 15)
	mn, _ := model.ParseMeshNetworks(meshtest.MeshNetworksYAML)
	ix := build.NewNetworkIndex(mn, "k")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := build.BuildPart(v, "cluster1", ix)
		if p.Counts.Endpoints != 30000 {
			b.Fatalf("endpoints = %d", p.Counts.Endpoints)
		}
	}
	b.ReportMetric(30000, "endpoints/op")
	b.StopTimer()
	// Heap kept by one built part (what every snapshot holds per cluster).
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	keep := build.BuildPart(v, "cluster1", ix)
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/30000, "retainedB/endpoint")
	runtime.KeepAlive(keep)
	runtime.KeepAlive(v) // the caches are not part of the measure
}
