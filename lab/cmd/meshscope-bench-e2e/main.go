// Command meshscope-bench-e2e measures the whole product against a real
// istiod serving a big mesh: the three-cluster lab filled with
// 2,000 Services and 30,000 ready endpoints (package lab/scale), with two
// istiods (multi-primary: cluster1 and cluster2 primaries, cluster3 a
// remote of both), then, in one run:
//
//   - a plain wildcard client (CDS, then EDS for every cluster) and a
//     sidecar-shaped one (LDS and RDS too): one full fetch, its time and
//     bytes — the baselines;
//   - `meshscope explain SERVICE` and `meshscope watch --service`: wall
//     time and xDS bytes received (through counting proxies), next to the
//     subscription explain used before (CDS + EDS by name);
//   - istiod idle, then pods churned at a steady rate with no client;
//   - the terminal UI, headless (the live session and feed the TUI runs
//     on, and the real tui.Model): time to clusters synced, to every
//     viewpoint's first full EDS, to every service's verdict known; heap
//     per endpoint with 2 network viewpoints × 2 control planes; istiod's
//     CPU and heap at connect; under churn, push-to-screen delay (from the
//     response's arrival in xdsclient to the model update that applied it)
//     and istiod's CPU per push;
//   - the same number of sidecar-shaped streams, -sidecar-runs times (at
//     least 3, around the UI): istiod's CPU and heap at connect and per
//     push under the same churn, the baseline and its spread.
//
// Every figure is printed with its target and PASS or MISS; ratios are
// against baselines measured in the same run, and istiod's cost of the UI
// passes when it is at most the sidecar runs' mean plus their spread
// (max − min). Figures: docs/benchmarks.md.
//
//	go run ./lab/cmd/meshscope-bench-e2e [-services 2000 -endpoints 30000] [-churn 30s -churn-rate 10] [-sidecar-runs 3] [-json]
//
// With -ui-runs N it runs only the terminal UI's start, N times in a row
// on the filled mesh, and prints min/median/max of its times to ready
// (issue 26); a UI not ready says every 15 s what it lacks, and dumps its
// goroutines (-dump-dir) past a minute.
//
// It starts its own lab in .lab/bench-e2e on ports shifted by +300 (or
// -port-offset, $MESHSCOPE_BENCH_PORT_OFFSET), apart from `make lab` (+0),
// `make e2e` (+100) and `make bench-lab` (+200), and stops it by PID when it
// ends, fails or is interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/lab/scale"
)

// cmd is the command's shared benchmark plumbing (ports +300 by default).
var cmd = &scale.Command{Name: "meshscope-bench-e2e", DefaultOffset: 300}

func say(format string, args ...any) { cmd.Logf(format, args...) }

type flags struct {
	services, endpoints, namespaces, writers int
	churn                                    time.Duration
	churnRate                                float64
	idle                                     time.Duration
	memProfile, cpuProfile, istiodProfiles   string
	readyTimeout                             time.Duration
	// uiRuns > 0 runs only the UI phase, that many times in a row, and
	// reports the times to ready over the runs (issue 26).
	uiRuns  int
	dumpDir string
	// sidecarRuns is how many sidecar-shaped phases make the baseline
	// istiod's cost is judged against (issue 21).
	sidecarRuns int
}

func main() {
	var f flags
	flag.IntVar(&f.services, "services", 2000, "Services in total, spread over the three clusters")
	flag.IntVar(&f.endpoints, "endpoints", 30000, "ready endpoints (Pods) in total, spread over the Services")
	flag.IntVar(&f.namespaces, "namespaces", 10, "namespaces per cluster holding the Services")
	flag.IntVar(&f.writers, "writers", 32, "parallel client-go writers filling the clusters")
	flag.DurationVar(&f.churn, "churn", 30*time.Second, "how long each churn phase lasts")
	flag.Float64Var(&f.churnRate, "churn-rate", 10, "pods added or removed per second during churn, over all clusters")
	flag.DurationVar(&f.idle, "idle", 10*time.Second, "how long istiod's idle cost is sampled")
	flag.DurationVar(&f.readyTimeout, "ready-timeout", 10*time.Minute, "give up on the UI session (or a baseline client) after this long")
	flag.StringVar(&f.memProfile, "memprofile", "", "write a heap profile of this process with the UI session ready (4 streams) to this file")
	flag.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of this process during the UI session's start and churn to this file")
	flag.StringVar(&f.istiodProfiles, "istiod-profiles", "", "save istiod's CPU profiles of each churn phase and its heap profiles at connect in this folder")
	flag.IntVar(&f.sidecarRuns, "sidecar-runs", minSidecarRuns, "sidecar-shaped phases (≥ 3) whose mean and spread istiod's cost of the UI is judged against; each adds about a minute")
	flag.IntVar(&f.uiRuns, "ui-runs", 0, "run only the terminal UI's start, this many times in a row (no churn, no other phase), and report min/median/max of its times to ready")
	flag.StringVar(&f.dumpDir, "dump-dir", "", "where a UI session not ready after a minute dumps its goroutines (default: .lab/bench-e2e-dumps)")
	cmd.AddFlags()
	cmd.Main(func() error {
		if f.sidecarRuns < minSidecarRuns {
			return fmt.Errorf("need -sidecar-runs ≥ %d: a baseline's spread needs at least three runs", minSidecarRuns)
		}
		if f.services < 3 || f.endpoints < f.services || f.namespaces < 1 || f.writers < 1 || f.churnRate <= 0 || f.churn <= 0 {
			return errors.New("need -services ≥ 3, -endpoints ≥ -services, -namespaces ≥ 1, -writers ≥ 1, -churn and -churn-rate > 0")
		}
		return nil
	}, func(ctx context.Context) error { return run(ctx, f) })
}

func run(ctx context.Context, f flags) error {
	root, err := lab.FindRoot()
	if err != nil {
		return err
	}
	cfg := scale.LabConfig(root, "bench-e2e", cmd.PortOffset)
	cfg.MultiPrimary = true
	cfg.DeferIstiods = true
	cfg.IstiodTimeout = f.readyTimeout
	res := &result{Services: f.services, Endpoints: f.endpoints, Clusters: len(cfg.Clusters), ChurnRate: f.churnRate,
		ChurnSeconds: f.churn.Seconds(), LoadStart: loadAverage()}

	if f.istiodProfiles != "" {
		if err := os.MkdirAll(f.istiodProfiles, 0o755); err != nil {
			return err
		}
	}
	bin := filepath.Join(cfg.Dir+"-bin", "meshscope")
	say("building meshscope (%s)", bin)
	if err := buildMeshscope(root, bin); err != nil {
		return err
	}
	say("starting the lab in %s (3 clusters, istiods for cluster1 and cluster2; ports +%d)", cfg.Dir, cmd.PortOffset)
	return cmd.WithLab(ctx, cfg, func(l *lab.Lab) error {
		plan := scale.NewPlan(l, f.services, f.endpoints, f.namespaces)
		if err := plan.Fill(ctx, f.writers, say); err != nil {
			return fmt.Errorf("filling the clusters: %w", err)
		}
		res.FillSeconds = plan.FillTime.Seconds()
		say("starting the istiods on the filled mesh")
		t := time.Now()
		if err := l.StartIstiods(ctx); err != nil {
			return err
		}
		res.IstiodSyncSeconds = time.Since(t).Seconds()
		say("istiods report every cluster synced after %s", time.Since(t).Round(time.Millisecond))

		b := &bench{f: f, l: l, plan: plan, bin: bin, res: res, dumps: cfg.Dir + "-dumps"}
		if f.uiRuns > 0 {
			return b.uiRepeat(ctx, f.uiRuns)
		}
		if f.cpuProfile != "" {
			fh, err := os.Create(f.cpuProfile)
			if err != nil {
				return err
			}
			defer fh.Close()
			b.cpuProfile = fh
		}
		type step struct {
			name string
			run  func(context.Context) error
		}
		sidecars := func(i int) step {
			return step{fmt.Sprintf("sidecar-shaped streams (%d of %d), then churn", i+1, f.sidecarRuns), func(ctx context.Context) error { return b.sidecars(ctx, i) }}
		}
		steps := []step{
			{"baselines: one full fetch by a wildcard client and a sidecar-shaped one", b.baselines},
			{"one-service commands: explain, watch --service", b.oneService},
			{"istiod idle, and churn without clients", b.idleAndChurn},
		}
		// The sidecar runs surround the UI: half (rounded up) before it.
		res.SidecarsBeforeUI = (f.sidecarRuns + 1) / 2
		for i := range res.SidecarsBeforeUI {
			steps = append(steps, sidecars(i))
		}
		steps = append(steps, step{"the terminal UI, headless, then churn", b.ui})
		for i := res.SidecarsBeforeUI; i < f.sidecarRuns; i++ {
			steps = append(steps, sidecars(i))
		}
		steps = append(steps, step{"churn without clients, again", b.churnAgain})
		for _, step := range steps {
			say("== %s", step.name)
			if err := step.run(ctx); err != nil {
				return fmt.Errorf("%s: %w", step.name, err)
			}
		}
		res.LoadEnd = loadAverage()
		res.judge()
		printReport(os.Stdout, res)
		return cmd.PrintJSON(res)
	})
}

// loadAverage is the load average over 1, 5 and 15 minutes ("" where /proc
// has none).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

func toMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
