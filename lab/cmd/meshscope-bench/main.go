// Command meshscope-bench measures the collector against the real lab at
// scale: three clusters (cluster1 on network1, cluster2 and
// cluster3 on network2) holding 2,000 Services and 30,000 ready endpoints
// in total. In the same run it times a plain client-go LIST of the same
// objects, in JSON (the baseline) and in protobuf (what client-go
// 1.36 and so the collector's informers use by default), so the figures
// share one machine and one load. Targets: synced within 1.5× the JSON
// LIST, under 1 KiB of heap per endpoint. Figures: docs/benchmarks.md.
//
//	go run ./lab/cmd/meshscope-bench [-runs 3] [-json] [-cpuprofile FILE] [-memprofile FILE]
//
// It starts its own lab in .lab/bench on ports shifted by +200 from the
// default lab (etcd 2579, apiservers 6643-6645, no istiod; -port-offset or
// $MESHSCOPE_BENCH_PORT_OFFSET move it), so it never clashes with `make
// lab` (+0) or `make e2e` (+100), and stops it by PID when it ends, fails
// or is interrupted. The fill is package lab/scale's, shared with
// meshscope-bench-e2e.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/lab/scale"
)

// cmd is the command's shared benchmark plumbing: make lab uses ports +0,
// make e2e +100, this benchmark +200 (or $MESHSCOPE_BENCH_PORT_OFFSET, or
// -port-offset), meshscope-bench-e2e +300.
var cmd = &scale.Command{Name: "meshscope-bench", DefaultOffset: 200}

func say(format string, args ...any) { cmd.Logf(format, args...) }

type flags struct {
	runs        int
	services    int
	endpoints   int
	namespaces  int
	nodes       int
	writers     int
	cpuProfile  string
	memProfile  string
	syncTimeout time.Duration
}

func main() {
	var f flags
	flag.IntVar(&f.runs, "runs", 3, "measured runs (each: baseline LIST, then meshscope); the median is reported")
	flag.IntVar(&f.services, "services", 2000, "Services in total, spread over the three clusters")
	flag.IntVar(&f.endpoints, "endpoints", 30000, "ready endpoints (Pods) in total, spread over the Services")
	flag.IntVar(&f.namespaces, "namespaces", 10, "namespaces per cluster holding the Services")
	flag.IntVar(&f.nodes, "nodes", 100, "Nodes per cluster, over 3 zones, holding the Pods (0: Pods on no node, so no localities)")
	flag.IntVar(&f.writers, "writers", 32, "parallel client-go writers filling the clusters")
	flag.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the last meshscope run (NewRegistry to settled) to this file")
	flag.StringVar(&f.memProfile, "memprofile", "", "write a heap profile taken at the end of the last meshscope run to this file")
	flag.DurationVar(&f.syncTimeout, "sync-timeout", 5*time.Minute, "give up on a meshscope run after this long")
	cmd.AddFlags()
	cmd.Main(func() error {
		if f.runs < 1 || f.services < 3 || f.endpoints < f.services || f.namespaces < 1 || f.writers < 1 || f.nodes < 0 {
			return errors.New("need -runs ≥ 1, -services ≥ 3, -endpoints ≥ -services, -namespaces ≥ 1, -writers ≥ 1, -nodes ≥ 0")
		}
		if f.memProfile != "" {
			// The default rate (one sample per 512 KiB) leaves the
			// per-endpoint structures ±50 %; 4 KiB costs a little speed.
			runtime.MemProfileRate = 4096
		}
		return nil
	}, func(ctx context.Context) error { return run(ctx, f) })
}

func run(ctx context.Context, f flags) error {
	root, err := lab.FindRoot()
	if err != nil {
		return err
	}
	cfg := benchConfig(root, cmd.PortOffset)
	say("starting the lab in %s (3 clusters, no istiod; ports +%d)", cfg.Dir, cmd.PortOffset)
	return cmd.WithLab(ctx, cfg, func(l *lab.Lab) error { return measure(ctx, l, cfg, f) })
}

func measure(ctx context.Context, l *lab.Lab, cfg lab.Config, f flags) (err error) {
	plan := scale.NewPlan(l, f.services, f.endpoints, f.namespaces)
	plan.Nodes = f.nodes
	if err := plan.Fill(ctx, f.writers, say); err != nil {
		return fmt.Errorf("filling the clusters: %w", err)
	}

	res := result{
		Clusters: len(cfg.Clusters), Services: f.services, Endpoints: f.endpoints, NodesPerCluster: f.nodes,
		FixtureEndpoints: plan.FixtureEndpoints, Writers: f.writers, FillSeconds: plan.FillTime.Seconds(),
		TargetRatio: targetRatio, TargetHeapPerEndpoint: targetHeap,
	}
	var prof *os.File
	if f.cpuProfile != "" {
		if prof, err = os.Create(f.cpuProfile); err != nil {
			return err
		}
		defer prof.Close()
	}
	for i := 1; i <= f.runs; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		var bases [2]baselineResult
		for k, pb := range []bool{false, true} {
			settle()
			base, err := baseline(ctx, l, pb)
			if err != nil {
				return fmt.Errorf("run %d: baseline: %w", i, err)
			}
			if base.Services != plan.TotalServices() || base.Endpoints != plan.TotalEndpoints() || base.Pods != plan.TotalPods() {
				return fmt.Errorf("run %d: baseline listed %d services, %d endpoints and %d pods, want %d, %d and %d",
					i, base.Services, base.Endpoints, base.Pods, plan.TotalServices(), plan.TotalEndpoints(), plan.TotalPods())
			}
			bases[k] = base
		}
		base := bases[0]
		settle()
		last := i == f.runs
		mr, err := measureCollector(ctx, l, plan, f, prof, last)
		if err != nil {
			return fmt.Errorf("run %d: meshscope: %w", i, err)
		}
		r := runResult{Run: i, Baseline: base, BaselineProtobuf: bases[1], Meshscope: mr}
		r.Ratio = float64(mr.Wall) / float64(base.Wall)
		r.RatioProtobuf = float64(mr.Wall) / float64(bases[1].Wall)
		res.Runs = append(res.Runs, r)
		say("run %d: LIST json %s, protobuf %s; meshscope %s (×%.2f json, ×%.2f protobuf), heap %.0f B/endpoint",
			i, ms(base.Wall), ms(bases[1].Wall), ms(mr.Wall), r.Ratio, r.RatioProtobuf, mr.HeapPerEndpoint)
	}
	res.summarize()
	printTable(os.Stdout, &res)
	return cmd.PrintJSON(&res)
}

// benchConfig is the benchmarks' three-cluster lab in .lab/bench, without
// istiod (the collector reads the API servers only): cluster1 holds the
// remote secrets of cluster2 and cluster3.
func benchConfig(root string, offset int) lab.Config {
	cfg := scale.LabConfig(root, "bench", offset)
	cfg.Istiods = nil
	cfg.MultiPrimary = false
	return cfg
}
