package collector

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/meshscope/meshscope/collector/watch"
	"github.com/meshscope/meshscope/internal/meshtest"
)

// benchRegistry is a Registry of nClusters clusters whose caches hold
// nSvc services × nEp endpoints each (synced from fake clientsets; the
// Registry itself is not run): the real build path from caches to a
// Snapshot.
func benchRegistry(b *testing.B, nClusters, nSvc, nEp int) *Registry {
	var sources []Source
	objs := make([][]runtime.Object, nClusters)
	for c := 0; c < nClusters; c++ {
		for i := 0; i < nSvc; i++ {
			ns, name := fmt.Sprintf("ns%d", i%50), fmt.Sprintf("svc%d", i)
			m := map[string]string{}
			for j := 0; j < nEp; j++ {
				pod := fmt.Sprintf("%s-%d", name, j)
				// Each cluster has its own pod IPs.
				m[pod] = fmt.Sprintf("%d.%d.%d.%d", c+1, i/250, i%250, j)
				objs[c] = append(objs[c], meshtest.Pod(ns, pod, "", "network1", true))
			}
			objs[c] = append(objs[c], meshtest.Service(ns, name, 8080), meshtest.EndpointSlice(ns, name, name+"-x", 8080, m))
		}
		objs[c] = append(objs[c], meshtest.Namespace("istio-system", fmt.Sprintf("network%d", c+1)), meshtest.Node("node1", "r", "z"))
		sources = append(sources, Source{Name: fmt.Sprintf("cluster%d", c+1), Server: fmt.Sprintf("https://c%d", c+1), Client: fake.NewClientset(objs[c]...)})
	}
	r, err := NewRegistry(Options{Sources: sources, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var group sync.WaitGroup
	b.Cleanup(group.Wait)
	b.Cleanup(cancel)
	for _, e := range r.entries {
		w := watch.New(e.ctxSource.Client, r.watchConfig, r.log, nil, true, func() {}, func() {})
		w.Start(ctx, &group, nil)
		e.w = &watched{Watcher: w}
	}
	for _, e := range r.entries {
		for !e.w.Synced() {
			time.Sleep(10 * time.Millisecond)
		}
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
			e.w.MarkDirty()
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
		r.entries[0].w.MarkDirty()
		r.publish()
	}
}
