// Command meshscope-soak runs meshscope for a long while the way the
// terminal UI runs it — session/live's session and feed, tui.Model in a
// Bubble Tea program drawing every frame (into nothing), a scripted user
// moving through every view and resizing the terminal — and checks that
// nothing grows without bound. Every few seconds it samples the live heap
// (after a forced GC), goroutines, the xDS streams and gRPC connections
// open (as gRPC sees them) and the open file descriptors; at the end it
// fits a line to each over the second half of the run, prints the slopes
// per hour and the rule it judged them by, and exits 1 when one grows,
// when the UI stopped answering, or when something stayed open after
// close.
//
//	meshscope-soak [-duration 3m] [-sample 5s] [-warmup 1m] [-kubeconfig PATH]
//
// The demo mesh runs with its churn ten times faster than in `meshscope
// demo` (a change every 200 ms). When a lab is up — -kubeconfig, or a lab
// started by `make lab` in .lab/run — the real mesh is soaked too, in
// parallel, with a churning Service of its own in every cluster; each mesh
// runs in a process of its own (this command, re-run with -mesh), so their
// figures do not mix. Not part of the shipped binary.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/meshscope/meshscope/lab"
)

func main() {
	ok, err := run(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "meshscope-soak:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

func run(args []string) (bool, error) {
	fs := flag.NewFlagSet("meshscope-soak", flag.ContinueOnError)
	var cfg config
	def := 3 * time.Minute
	if v := os.Getenv("SOAKTIME"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return false, fmt.Errorf("SOAKTIME=%q: want a duration such as 3m or 30m", v)
		}
		def = d
	}
	fs.DurationVar(&cfg.duration, "duration", def, "how long each mesh is soaked (default $SOAKTIME, else 3m)")
	fs.DurationVar(&cfg.every, "sample", 5*time.Second, "sampling interval")
	fs.DurationVar(&cfg.step, "step", 3*time.Second, "the scripted user's pace: one step of its script (or a resize) this often")
	fs.DurationVar(&cfg.rule.block, "heap-block", 30*time.Second, "the heap is judged by its lowest sample in each stretch this long")
	fs.DurationVar(&cfg.rule.warmup, "warmup", time.Minute, "start-up left out of the judgement (the window starts at the later of this and half the run)")
	maxPerHour := fs.Float64("max-growth", 10, "largest growth per hour, in % of a metric's level, still called bounded")
	fs.Float64Var(&cfg.rule.minT, "min-t", 3, "how many standard errors a slope must be above zero to count")
	minRise := fs.Float64("min-rise", 5, "smallest fitted rise over the window, in % of the level, that counts")
	fs.DurationVar(&cfg.demoInterval, "demo-interval", 200*time.Millisecond, "the demo's churn interval (meshscope demo: 2s)")
	demo := fs.Bool("demo", true, "soak the demo mesh")
	fs.StringVar(&cfg.kubeconfig, "kubeconfig", "", "a running lab's kubeconfig: soak the real mesh too (default: the lab in -lab-dir, if one runs)")
	labDir := fs.String("lab-dir", "", "where `make lab` keeps a running lab's state (default <repo>/.lab/run)")
	fs.StringVar(&cfg.context, "context", "cluster1", "the lab's context meshscope starts from (the others through remote secrets)")
	fs.StringVar(&cfg.xdsAddress, "xds-address", "", "istiod's xDS address (default: port-forward to the istiod pod, as the UI does)")
	fs.DurationVar(&cfg.labChurn, "lab-churn", 200*time.Millisecond, "a change to the lab's soak Service this often, the demo's pace (0: none)")
	samples := fs.String("samples", "", "write each mesh's samples as CSV to this file prefix (PREFIX-demo.csv, PREFIX-lab.csv)")
	heapProfile := fs.String("heap-profile", "", "write heap profiles at half the run and at its end to PREFIX-MESH-half.pprof and PREFIX-MESH-end.pprof (go tool pprof -base HALF END shows what grew)")
	fs.BoolVar(&cfg.verbose, "v", false, "print the UI's header after every step of the scripted user")
	fs.StringVar(&cfg.mesh, "mesh", "", "run one mesh in this process (demo or lab); set by the command itself")
	if err := fs.Parse(args); err != nil {
		return false, err
	}
	if cfg.duration <= 0 || cfg.every <= 0 || cfg.step <= 0 {
		return false, fmt.Errorf("-duration, -sample and -step must be positive")
	}
	cfg.rule.maxPerHour, cfg.rule.minRiseFrac = *maxPerHour/100, *minRise/100
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if cfg.mesh != "" {
		if cfg.mesh != meshDemo && cfg.mesh != meshLab {
			return false, fmt.Errorf("-mesh %q: want demo or lab", cfg.mesh)
		}
		// The session logs (port-forwards, demo churn) go to stderr,
		// warnings and worse only.
		slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
		if *heapProfile != "" {
			cfg.heapProfile = *heapProfile + "-" + cfg.mesh
		}
		if *samples != "" {
			cfg.samplesFile = *samples + "-" + cfg.mesh + ".csv"
		}
		return soak(ctx, cfg, os.Stdout)
	}

	var meshes []string
	if *demo {
		meshes = append(meshes, meshDemo)
	}
	if cfg.kubeconfig == "" {
		dir := *labDir
		if dir == "" {
			root, err := lab.FindRoot()
			if err != nil {
				return false, err
			}
			dir = filepath.Join(root, ".lab", "run")
		}
		if kc, up := lab.Running(dir); up {
			cfg.kubeconfig = kc
		} else {
			fmt.Printf("no lab runs in %s: soaking the demo mesh only (make lab, or -kubeconfig, to soak the real one too)\n", dir)
		}
	}
	if cfg.kubeconfig != "" {
		meshes = append(meshes, meshLab)
	}
	if len(meshes) == 0 {
		return false, fmt.Errorf("nothing to soak: -demo=false and no lab")
	}
	fmt.Printf("meshscope-soak: %s for %s each; load average %s\n", strings.Join(meshes, " and "), cfg.duration, loadAverage())
	return runChildren(ctx, meshes, args, cfg.kubeconfig)
}

// runChildren runs each mesh in a process of its own, in parallel, their
// output prefixed with the mesh's name.
func runChildren(ctx context.Context, meshes, args []string, kubeconfig string) (bool, error) {
	exe, err := os.Executable()
	if err != nil {
		return false, err
	}
	var mu sync.Mutex // one line at a time on stdout
	var wg sync.WaitGroup
	results := make([]error, len(meshes))
	for i, m := range meshes {
		cmd := exec.CommandContext(ctx, exe, append(append([]string(nil), args...), "-mesh", m, "-kubeconfig", kubeconfig)...)
		cmd.Stderr = os.Stderr
		// Interrupted, a child gets SIGINT and reports what it has.
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.WaitDelay = 30 * time.Second
		pipe, err := cmd.StdoutPipe()
		if err != nil {
			return false, err
		}
		if err := cmd.Start(); err != nil {
			return false, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			prefix(pipe, "["+m+"] ", &mu)
			results[i] = cmd.Wait()
		}()
	}
	wg.Wait()
	ok := true
	for i, err := range results {
		if err != nil {
			fmt.Printf("[%s] FAIL (%v)\n", meshes[i], err)
			ok = false
			continue
		}
		fmt.Printf("[%s] PASS\n", meshes[i])
	}
	fmt.Printf("load average at the end: %s\n", loadAverage())
	return ok, nil
}

func prefix(r io.Reader, p string, mu *sync.Mutex) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		mu.Lock()
		fmt.Println(p + sc.Text())
		mu.Unlock()
	}
}

// loadAverage is /proc/loadavg's first three fields ("?" elsewhere): the
// machine may be shared, and the figures depend on it.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
