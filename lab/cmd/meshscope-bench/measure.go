package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/lab/scale"
	"github.com/meshscope/meshscope/model"
)

// The collector's targets at lab scale.
const (
	targetRatio = 1.5  // meshscope synced within 1.5× the plain LIST time
	targetHeap  = 1024 // bytes of heap per endpoint
)

type baselineResult struct {
	Wall           time.Duration `json:"-"`
	WallMS         float64       `json:"wallMs"`
	Services       int           `json:"services"`
	EndpointSlices int           `json:"endpointSlices"`
	Pods           int           `json:"pods"`
	Endpoints      int           `json:"endpoints"`
	// HeapPerEndpoint is the heap the decoded LIST results hold, per
	// endpoint (for scale: what a cache without transforms would keep).
	HeapPerEndpoint float64 `json:"heapBytesPerEndpoint"`
}

type collectorResult struct {
	Wall   time.Duration `json:"-"`
	WallMS float64       `json:"wallMs"`
	// SettledMS is when WaitSettled returned; WallMS is when the snapshot
	// also held every endpoint (the same, unless a publish lagged).
	SettledMS float64 `json:"settledMs"`
	// SyncedMS is each cluster's SyncedAt, from NewRegistry.
	SyncedMS       map[string]float64 `json:"clusterSyncedMs"`
	Clusters       int                `json:"clusters"`
	Services       int                `json:"services"`
	Endpoints      int                `json:"endpoints"`
	BenchEndpoints int                `json:"benchEndpoints"`
	// LocatedEndpoints are the bench endpoints with a locality (from
	// their node): all of them when the bench has nodes.
	LocatedEndpoints int     `json:"locatedEndpoints"`
	HeapBytes        int64   `json:"heapBytes"`
	HeapPerEndpoint  float64 `json:"heapBytesPerEndpoint"`
}

type runResult struct {
	Run int `json:"run"`
	// Baseline is the plain LIST in JSON (the baseline);
	// BaselineProtobuf the same in protobuf, which client-go 1.36's typed
	// clients (and so the collector's informers) use by default.
	Baseline         baselineResult  `json:"baseline"`
	BaselineProtobuf baselineResult  `json:"baselineProtobuf"`
	Meshscope        collectorResult `json:"meshscope"`
	Ratio            float64         `json:"ratio"`
	RatioProtobuf    float64         `json:"ratioProtobuf"`
}

type result struct {
	Clusters              int         `json:"clusters"`
	Services              int         `json:"services"`
	Endpoints             int         `json:"endpoints"`
	NodesPerCluster       int         `json:"nodesPerCluster"`
	FixtureEndpoints      int         `json:"fixtureEndpoints"`
	Writers               int         `json:"writers"`
	FillSeconds           float64     `json:"fillSeconds"`
	Runs                  []runResult `json:"runs"`
	MedianBaselineMS      float64     `json:"medianBaselineMs"`
	MedianBaselinePBMS    float64     `json:"medianBaselineProtobufMs"`
	MedianMeshscopeMS     float64     `json:"medianMeshscopeMs"`
	MedianRatio           float64     `json:"medianRatio"`
	MedianRatioProtobuf   float64     `json:"medianRatioProtobuf"`
	MedianHeapPerEndpoint float64     `json:"medianHeapBytesPerEndpoint"`
	TargetRatio           float64     `json:"targetRatio"`
	TargetHeapPerEndpoint float64     `json:"targetHeapBytesPerEndpoint"`
	RatioMet              bool        `json:"ratioMet"`
	HeapMet               bool        `json:"heapMet"`
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }

func toMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// settle lets the API servers finish what the previous step left (watch
// teardown, GC) and collects this process's garbage, so runs start alike.
func settle() {
	runtime.GC()
	time.Sleep(2 * time.Second)
}

func heapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// baseline times a plain LIST of Services, EndpointSlices and Pods of
// every cluster, all clusters (and the three kinds) in parallel, with fresh
// clients (as the collector builds its own), in JSON or in protobuf.
func baseline(ctx context.Context, l *lab.Lab, protobuf bool) (baselineResult, error) {
	clusters := l.Clusters()
	type got struct {
		svcs   *corev1.ServiceList
		slices *discoveryv1.EndpointSliceList
		pods   *corev1.PodList
		err    error
	}
	out := make([]got, len(clusters))
	before := heapAlloc()
	t0 := time.Now()
	var wg sync.WaitGroup
	for i, c := range clusters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rc := c.RESTConfig()
			rc.Timeout = 2 * time.Minute
			if !protobuf {
				// client-go 1.36's typed clients ask for protobuf unless
				// told otherwise; the baseline is JSON.
				rc.ContentType, rc.AcceptContentTypes = "application/json", "application/json"
			}
			cs, err := kubernetes.NewForConfig(rc)
			if err != nil {
				out[i].err = err
				return
			}
			out[i].svcs, out[i].slices, out[i].pods, out[i].err = scale.ListAll(ctx, cs)
		}()
	}
	wg.Wait()
	wall := time.Since(t0)
	var r baselineResult
	for i, g := range out {
		if g.err != nil {
			return r, fmt.Errorf("%s: %w", clusters[i].Name, g.err)
		}
		r.Services += len(g.svcs.Items)
		r.EndpointSlices += len(g.slices.Items)
		r.Pods += len(g.pods.Items)
		for _, s := range g.slices.Items {
			r.Endpoints += len(s.Endpoints)
		}
	}
	after := heapAlloc()
	runtime.KeepAlive(out)
	r.Wall, r.WallMS = wall, toMS(wall)
	r.HeapPerEndpoint = float64(int64(after)-int64(before)) / float64(r.Endpoints)
	return r, nil
}

// measureCollector times collector.NewRegistry (lab kubeconfig, context
// cluster1, remote secrets on) to a settled snapshot with every cluster
// synced and every endpoint in it, and the heap the running registry
// holds, per endpoint.
func measureCollector(ctx context.Context, l *lab.Lab, p *scale.Plan, f flags, prof *os.File, last bool) (collectorResult, error) {
	var r collectorResult
	logger := slog.New(slog.DiscardHandler)
	if cmd.Verbose {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	wantClusters := len(p.Clusters)
	wantEndpoints := p.TotalEndpoints()

	before := heapAlloc()
	if prof != nil && last {
		if err := pprof.StartCPUProfile(prof); err != nil {
			return r, err
		}
	}
	t0 := time.Now()
	reg, err := collector.NewRegistry(collector.Options{
		Kubeconfig:  l.Kubeconfig,
		Contexts:    []string{"cluster1"},
		SyncTimeout: f.syncTimeout,
		Logger:      logger,
	})
	if err != nil {
		pprof.StopCPUProfile()
		return r, err
	}
	runCtx, stopRun := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- reg.Run(runCtx) }()
	defer func() {
		stopRun()
		<-done
	}()

	wctx, cancel := context.WithTimeout(ctx, f.syncTimeout)
	defer cancel()
	snap, err := reg.WaitSettled(wctx)
	settled := time.Since(t0)
	if err != nil {
		pprof.StopCPUProfile()
		return r, fmt.Errorf("not settled after %s: %s", f.syncTimeout, describe(snap))
	}
	// Settled means every cluster ended its initial sync one way or
	// another; the benchmark wants every cluster synced and every
	// endpoint in the snapshot.
	complete := func(s *model.Snapshot) bool {
		if len(s.Clusters) != wantClusters {
			return false
		}
		for _, c := range s.Clusters {
			if c.State != model.StateSynced {
				return false
			}
		}
		all, _ := countEndpoints(s)
		return all == wantEndpoints
	}
	if !complete(snap) {
		ch, unsub := reg.Subscribe()
		for !complete(snap) {
			select {
			case snap = <-ch:
			case <-wctx.Done():
				unsub()
				pprof.StopCPUProfile()
				return r, fmt.Errorf("settled but incomplete after %s: %s", f.syncTimeout, describe(snap))
			}
		}
		unsub()
	}
	wall := time.Since(t0)
	if prof != nil && last {
		pprof.StopCPUProfile()
	}
	after := heapAlloc()

	r.Wall, r.WallMS, r.SettledMS = wall, toMS(wall), toMS(settled)
	r.Clusters = len(snap.Clusters)
	r.Services = len(snap.Services)
	r.Endpoints, r.BenchEndpoints = countEndpoints(snap)
	if r.BenchEndpoints != p.Endpoints {
		return r, fmt.Errorf("snapshot holds %d benchmark endpoints, want %d", r.BenchEndpoints, p.Endpoints)
	}
	r.LocatedEndpoints = locatedEndpoints(snap)
	if p.Nodes > 0 && r.LocatedEndpoints != p.Endpoints {
		return r, fmt.Errorf("%d of %d benchmark endpoints have a locality from their node", r.LocatedEndpoints, p.Endpoints)
	}
	r.SyncedMS = map[string]float64{}
	for _, c := range snap.Clusters {
		r.SyncedMS[c.ID] = toMS(c.SyncedAt.Sub(t0))
	}
	r.HeapBytes = int64(after) - int64(before)
	r.HeapPerEndpoint = float64(r.HeapBytes) / float64(r.Endpoints)
	if last && f.memProfile != "" {
		if err := scale.WriteHeapProfile(f.memProfile); err != nil {
			return r, err
		}
	}
	runtime.KeepAlive(reg)
	runtime.KeepAlive(snap)
	return r, nil
}

// countEndpoints counts every endpoint of the snapshot, and those of the
// benchmark's namespaces.
func countEndpoints(s *model.Snapshot) (all, bench int) {
	for _, svc := range s.Services {
		for _, sc := range svc.Clusters {
			all += len(sc.Endpoints)
			if strings.HasPrefix(svc.Namespace, scale.NamespacePrefix) {
				bench += len(sc.Endpoints)
			}
		}
	}
	return all, bench
}

// locatedEndpoints counts the benchmark's endpoints with a locality.
func locatedEndpoints(s *model.Snapshot) int {
	n := 0
	for _, svc := range s.Services {
		if !strings.HasPrefix(svc.Namespace, "bench-") {
			continue
		}
		for _, sc := range svc.Clusters {
			for i := range sc.Endpoints {
				if sc.Endpoints[i].Locality != "" {
					n++
				}
			}
		}
	}
	return n
}

func describe(s *model.Snapshot) string {
	if s == nil {
		return "no snapshot"
	}
	var parts []string
	for _, c := range s.Clusters {
		d := fmt.Sprintf("%s %s", c.ID, c.State)
		if c.Reason != "" {
			d += " (" + c.Reason + ")"
		}
		d += fmt.Sprintf(" %d endpoints", c.Counts.Endpoints)
		parts = append(parts, d)
	}
	all, _ := countEndpoints(s)
	return fmt.Sprintf("%s; %d endpoints in all", strings.Join(parts, ", "), all)
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func (r *result) summarize() {
	var b, bp, m, ratio, ratioPB, heap []float64
	for _, x := range r.Runs {
		b = append(b, x.Baseline.WallMS)
		bp = append(bp, x.BaselineProtobuf.WallMS)
		ratioPB = append(ratioPB, x.RatioProtobuf)
		m = append(m, x.Meshscope.WallMS)
		ratio = append(ratio, x.Ratio)
		heap = append(heap, x.Meshscope.HeapPerEndpoint)
	}
	r.MedianBaselineMS, r.MedianMeshscopeMS = median(b), median(m)
	r.MedianBaselinePBMS, r.MedianRatioProtobuf = median(bp), median(ratioPB)
	r.MedianRatio, r.MedianHeapPerEndpoint = median(ratio), median(heap)
	r.RatioMet = r.MedianRatio <= r.TargetRatio
	r.HeapMet = r.MedianHeapPerEndpoint < r.TargetHeapPerEndpoint
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

func printTable(w io.Writer, r *result) {
	fmt.Fprintf(w, "\nmeshscope collector at lab scale: %d clusters, %d services, %d endpoints (+%d fixture) on %d nodes per cluster (3 zones, watched), filled in %.0f s by %d writers\n\n",
		r.Clusters, r.Services, r.Endpoints, r.FixtureEndpoints, r.NodesPerCluster, r.FillSeconds, r.Writers)
	fmt.Fprintf(w, "%-7s %10s %10s %10s %7s %9s %10s %10s  %s\n", "run", "LIST json", "LIST pb", "meshscope", "ratio", "ratio pb", "heap B/ep", "LIST B/ep", "clusters synced at (ms)")
	for _, x := range r.Runs {
		ids := make([]string, 0, len(x.Meshscope.SyncedMS))
		for id := range x.Meshscope.SyncedMS {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		var at []string
		for _, id := range ids {
			at = append(at, fmt.Sprintf("%s %.0f", id, x.Meshscope.SyncedMS[id]))
		}
		fmt.Fprintf(w, "%-7d %10.0f %10.0f %10.0f %6.2f× %8.2f× %10.0f %10.0f  %s\n", x.Run, x.Baseline.WallMS, x.BaselineProtobuf.WallMS,
			x.Meshscope.WallMS, x.Ratio, x.RatioProtobuf, x.Meshscope.HeapPerEndpoint, x.Baseline.HeapPerEndpoint, strings.Join(at, ", "))
	}
	fmt.Fprintf(w, "%-7s %10.0f %10.0f %10.0f %6.2f× %8.2f× %10.0f\n\n", "median", r.MedianBaselineMS, r.MedianBaselinePBMS,
		r.MedianMeshscopeMS, r.MedianRatio, r.MedianRatioProtobuf, r.MedianHeapPerEndpoint)
	fmt.Fprintf(w, "target: synced within %.1f× the plain LIST (JSON)   median %.2f×   %s   (vs protobuf LIST: %.2f×)\n",
		r.TargetRatio, r.MedianRatio, verdict(r.RatioMet), r.MedianRatioProtobuf)
	fmt.Fprintf(w, "target: heap < %.0f B per endpoint                  median %.0f B   %s\n\n", r.TargetHeapPerEndpoint, r.MedianHeapPerEndpoint, verdict(r.HeapMet))
}
