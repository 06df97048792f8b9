package collector

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/meshscope/meshscope/collector/build"
	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

func (r *Registry) versionNow() uint64 {
	r.buildMu.Lock()
	defer r.buildMu.Unlock()
	return r.version
}

// A burst of changes is coalesced into few snapshots; a lone change after a
// quiet period is published without waiting for the interval. The bound is
// the interval itself (3 s): a publisher that waited for it cannot meet it,
// and a loaded machine does not miss it by chance (an earlier version
// asked for 400 ms against a 1 s interval and failed under load).
func TestPublishCoalescing(t *testing.T) {
	w := newFakeWorld(t)
	c1 := fake.NewClientset(meshtest.LabCluster("network1", "192.168.60.113", "hw1", "10.44.0.13")...)
	opts := fastOptions(w, Source{Name: "cluster1", Server: "https://c1", Client: c1})
	opts.PublishInterval = 3 * time.Second
	opts.HealthInterval = time.Hour // no probe-driven publishes in this test
	r := startRegistry(t, opts)
	settled(context.Background(), t, r)
	time.Sleep(opts.PublishInterval + 100*time.Millisecond) // quiet

	// Idle: one change shows up well before the interval.
	ctx := context.Background()
	start := time.Now()
	if _, err := c1.CoreV1().Services("sample").Create(ctx, meshtest.Service("sample", "lone", 80), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, r, 10*time.Second, "lone service", func(s *model.Snapshot) bool { return s.Service("lone.sample.svc.cluster.local") != nil })
	if d := time.Since(start); d >= opts.PublishInterval {
		t.Fatalf("idle change took %s (interval %s): publishing is not immediate when idle", d, opts.PublishInterval)
	}

	// Burst: 100 services in a row.
	v0 := r.versionNow()
	for i := 0; i < 100; i++ {
		if _, err := c1.CoreV1().Services("sample").Create(ctx, meshtest.Service("sample", fmt.Sprintf("burst-%d", i), 80), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	s := waitFor(t, r, 20*time.Second, "all burst services", func(s *model.Snapshot) bool { return s.Service("burst-99.sample.svc.cluster.local") != nil })
	if n := len(s.Services); n != 103 {
		t.Fatalf("services = %d", n)
	}
	if published := r.versionNow() - v0; published > 5 {
		t.Fatalf("a burst of 100 changes gave %d snapshots", published)
	}
	// Snapshots already handed out never change.
	old := s
	if _, err := c1.CoreV1().Services("sample").Create(ctx, meshtest.Service("sample", "later", 80), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, r, 20*time.Second, "later", func(s *model.Snapshot) bool { return s.Service("later.sample.svc.cluster.local") != nil })
	if old.Service("later.sample.svc.cluster.local") != nil || len(old.Services) != 103 {
		t.Fatal("an old snapshot changed")
	}
	if r.Snapshot().Version <= old.Version {
		t.Fatal("version did not grow")
	}
}

// A change in one cluster rebuilds only that cluster's share.
func TestOnlyChangedClusterIsRebuilt(t *testing.T) {
	w := newFakeWorld(t)
	c1 := fake.NewClientset(meshtest.LabCluster("network1", "192.168.60.113", "hw1", "10.44.0.13")...)
	c2 := fake.NewClientset(meshtest.LabCluster("network2", "192.168.60.9", "hw2", "10.144.0.15")...)
	opts := fastOptions(w, Source{Name: "cluster1", Server: "https://c1", Client: c1}, Source{Name: "cluster2", Server: "https://c2", Client: c2})
	opts.HealthInterval = time.Hour
	r := startRegistry(t, opts)
	settled(context.Background(), t, r)
	time.Sleep(100 * time.Millisecond)
	parts := func() (*build.Part, *build.Part) {
		r.buildMu.Lock()
		defer r.buildMu.Unlock()
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.entries[0].w.part.Load(), r.entries[1].w.part.Load()
	}
	p1, p2 := parts()
	if _, err := c2.CoreV1().Services("sample").Create(context.Background(), meshtest.Service("sample", "new", 80), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, r, 2*time.Second, "new service", func(s *model.Snapshot) bool { return s.Service("new.sample.svc.cluster.local") != nil })
	q1, q2 := parts()
	if q1 != p1 {
		t.Fatal("cluster1 was rebuilt for a change in cluster2")
	}
	if q2 == p2 {
		t.Fatal("cluster2 was not rebuilt")
	}
}
