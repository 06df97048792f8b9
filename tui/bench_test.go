package tui

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time the process has used (all threads, the garbage
// collector's included): on a machine shared with other builds, wall time
// per op mostly measures the wait for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// 10,000 services with 10 endpoints each: 100,000 endpoints.
func benchModel(b *testing.B) *Model {
	b.Helper()
	snap := bigSnapshot(10000, 10)
	m := newTestModel(b, "default", 200, 60, snap, testFeed(snap))
	if got := len(m.ix.services); got != 10000 || m.ix.endpoints != 100000 {
		b.Fatalf("%d services, %d endpoints", got, m.ix.endpoints)
	}
	return m
}

func benchView(b *testing.B, m *Model) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = m.View()
	}
	b.StopTimer()
	if per := b.Elapsed() / time.Duration(b.N); per > 10*time.Millisecond {
		b.Errorf("View() takes %s, target < 10ms", per)
	}
}

func BenchmarkViewServices(b *testing.B) {
	m := benchModel(b)
	m.push(viewServices)
	for i := 0; i < 5000; i++ {
		press(m, "j")
	}
	benchView(b, m)
}

func BenchmarkViewServicesFiltered(b *testing.B) {
	m := benchModel(b)
	m.push(viewServices)
	press(m, "/")
	typeText(m, "svc9")
	press(m, "enter")
	benchView(b, m)
}

func BenchmarkViewClusters(b *testing.B) {
	benchView(b, benchModel(b))
}

func BenchmarkViewService(b *testing.B) {
	m := benchModel(b)
	m.openService("service-05000.ns000.svc.cluster.local")
	benchView(b, m)
}

// A fuzzy keystroke over 10,000 hostnames: the query grows one character
// at a time (each narrowing the previous matches), then is erased.
func BenchmarkFuzzyKeystroke(b *testing.B) {
	m := benchModel(b)
	m.push(viewServices)
	press(m, "/")
	query := "service-0123"
	b.ReportAllocs()
	b.ResetTimer()
	keys := 0
	for i := 0; i < b.N; i++ {
		for _, r := range query {
			m.Update(keyMsg(string(r)))
			keys++
		}
		b.StopTimer()
		m.Update(keyMsg("esc"))
		press(m, "/")
		b.StartTimer()
	}
	b.StopTimer()
	per := b.Elapsed() / time.Duration(keys)
	b.ReportMetric(float64(per.Microseconds()), "µs/keystroke")
	if per > 10*time.Millisecond {
		b.Errorf("a keystroke takes %s, target < 10ms", per)
	}
}

// The first keystroke searches every hostname (nothing to narrow from).
func BenchmarkFuzzyFirstKeystroke(b *testing.B) {
	m := benchModel(b)
	m.push(viewServices)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.services.setFilter(m.vc(), "")
		m.services.setFilter(m.vc(), "e")
	}
}

// buildIndex runs off the update loop; this is how stale a new snapshot
// can be before it shows: 10,000 services × 10 endpoints, and at the lab's
// scale (make bench-lab: 2,000 services, 30,000 endpoints). cpu-ns/op is
// the CPU time per index, garbage collection included.
func BenchmarkBuildIndex(b *testing.B) { benchBuildIndex(b, 10000, 10) }

func BenchmarkBuildIndexLab(b *testing.B) { benchBuildIndex(b, 2000, 15) }

func benchBuildIndex(b *testing.B, services, eps int) {
	snap := bigSnapshot(services, eps)
	feed := testFeed(snap)
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		buildIndex(snap, feed, nil)
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkStartupFirstFrame: from nothing to the first frame, before any
// snapshot arrived (clusters still syncing) — what a user waits for after
// typing meshscope. Target: under 200 ms (docs/benchmarks.md).
func BenchmarkStartupFirstFrame(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		m, err := New(newFakeFeed(), Options{Theme: "default"})
		if err != nil {
			b.Fatal(err)
		}
		_ = m.Init()
		if v := m.View(); v.Content == "" {
			b.Fatal("empty first frame")
		}
	}
}
