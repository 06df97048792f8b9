package collector

import (
	"github.com/meshscope/meshscope/collector/build"
	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"

	"fmt"
	"log/slog"
	"runtime"
	"testing"

	"k8s.io/client-go/kubernetes/fake"
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

// benchRegistry is a Registry of nClusters clusters whose informer stores
// hold nSvc services × nEp endpoints each (filled directly, no informers
// running): the real build path from caches to a Snapshot.
func benchRegistry(b *testing.B, nClusters, nSvc, nEp int) *Registry {
	var sources []Source
	for c := 0; c < nClusters; c++ {
		sources = append(sources, Source{Name: fmt.Sprintf("cluster%d", c+1), Server: fmt.Sprintf("https://c%d", c+1), Client: fake.NewClientset()})
	}
	r, err := NewRegistry(Options{Sources: sources, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	for ci, e := range r.entries {
		w := newWatcher(e.ctxSource.Client, &r.opts, r.log, nil, true, func() {}, func() {})
		v := largeView(nSvc, nEp)
		add := func(h *informerHealth, o any) {
			if err := h.inf.GetStore().Add(o); err != nil {
				b.Fatal(err)
			}
		}
		for _, s := range v.Services {
			add(w.services, s)
		}
		for _, s := range v.Slices {
			// Each cluster has its own pod IPs.
			for i := range s.Endpoints {
				s.Endpoints[i].Addresses = []string{fmt.Sprintf("%d.%s", ci+1, s.Endpoints[i].Addresses[0][3:])}
			}
			add(w.slices, s)
		}
		in := newInterner()
		for i := 0; i < nSvc; i++ {
			ns, name := fmt.Sprintf("ns%d", i%50), fmt.Sprintf("svc%d", i)
			for j := 0; j < nEp; j++ {
				p, _ := in.transformPod(meshtest.Pod(ns, fmt.Sprintf("%s-%d", name, j), "", "network1", true))
				add(w.pods, p)
			}
		}
		add(w.namespaces, meshtest.Namespace("istio-system", fmt.Sprintf("network%d", ci+1)))
		add(w.nodes, meshtest.Node("node1", "r", "z"))
		e.w = w
	}
	return r
}

// BenchmarkPublishAllDirty: 3 clusters × 2,000 services × 15 endpoints
// (90,000 endpoints), every cluster changed: the worst case of one publish.
func BenchmarkPublishAllDirty(b *testing.B) {
	r := benchRegistry(b, 3, 2000, 15)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, e := range r.entries {
			e.w.dirty.Store(true)
		}
		s := r.publish()
		if len(s.Services) != 2003 && len(s.Services) != 2000 {
			b.Fatalf("services = %d", len(s.Services))
		}
	}
}

// BenchmarkPublishOneDirty: the same mesh, one cluster changed (the usual
// case): the other clusters' shares are reused.
func BenchmarkPublishOneDirty(b *testing.B) {
	r := benchRegistry(b, 3, 2000, 15)
	r.publish()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.entries[0].w.dirty.Store(true)
		r.publish()
	}
}
