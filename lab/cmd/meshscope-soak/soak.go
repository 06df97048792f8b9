package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/demo"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/live"
	"github.com/meshscope/meshscope/xdsclient"
)

// config is one soak run.
type config struct {
	mesh         string // meshDemo or meshLab
	duration     time.Duration
	every        time.Duration // sampling interval
	step         time.Duration // the scripted user's pace
	demoInterval time.Duration
	kubeconfig   string
	context      string
	xdsAddress   string
	labChurn     time.Duration
	samplesFile  string
	// heapProfile, when set, is the prefix of two heap profiles: at half
	// the run and at its end (go tool pprof -base HALF END: what grew).
	heapProfile string
	rule        rule
	verbose     bool
}

const (
	meshDemo = "demo"
	meshLab  = "lab"
)

// The UI's size: a common terminal, and now and then the smallest one the
// UI refuses to draw in (it shows "terminal too small") and back.
const (
	uiWidth, uiHeight       = 120, 40
	smallWidth, smallHeight = 60, 15
)

// soak runs one mesh under the UI for cfg.duration, sampling, and reports
// to out. It returns false when something grows without bound, the UI
// stopped answering, or something stayed open after close.
func soak(ctx context.Context, cfg config, out io.Writer) (bool, error) {
	say := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	goroutinesBefore := runtime.NumGoroutine()
	start := time.Now()

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var lo live.Options
	if cfg.mesh == meshLab {
		lo = live.Options{Collector: collector.Options{Kubeconfig: cfg.kubeconfig, Contexts: []string{cfg.context}}}
		if cfg.xdsAddress != "" {
			lo.ControlPlanes = []live.Target{{Address: cfg.xdsAddress}}
		}
	} else {
		d, err := demo.Start(runCtx, demo.Options{Seed: 1, Churn: true, Interval: cfg.demoInterval, Logger: slog.Default()})
		if err != nil {
			return false, fmt.Errorf("demo: %w", err)
		}
		lo.InProcess = d
	}
	s, err := live.Open(runCtx, lo)
	if err != nil {
		return false, err
	}
	var churn *labChurn
	churnDone := make(chan struct{})
	if cfg.mesh == meshLab && cfg.labChurn > 0 {
		churn, err = newLabChurn(runCtx, cfg.kubeconfig, 1)
		if err != nil {
			s.Close()
			return false, fmt.Errorf("lab churn: %w", err)
		}
		go func() {
			defer close(churnDone)
			churn.run(runCtx, cfg.labChurn, func(f string, a ...any) { say(f, a...) })
		}()
	} else {
		close(churnDone)
	}
	feed := s.Feed(runCtx, xdsclient.ModeDelta)
	ui, err := startUI(runCtx, feed, uiWidth, uiHeight)
	if err != nil {
		feed.Close()
		s.Close()
		return false, err
	}
	// teardown closes everything in order, once: at the end, or on an
	// early return.
	var uiErr error
	teardown := sync.OnceFunc(func() {
		uiErr = ui.stop()
		feed.Close()
		cancel()
		<-churnDone
		if churn != nil {
			if err := churn.cleanup(context.WithoutCancel(ctx)); err != nil {
				say("lab churn cleanup: %v", err)
			}
		}
		s.Close()
	})
	defer teardown()
	say("soaking the %s mesh for %s under the terminal UI (%d×%d, a scripted user every %s), sampling every %s",
		cfg.mesh, cfg.duration, uiWidth, uiHeight, cfg.step, cfg.every)

	samples, deaf, err := sampleUnder(ctx, cfg, s, ui, start, say)
	if err != nil {
		return false, err
	}
	writeHeapProfile(say, cfg.heapProfile, "end")
	screen := ui.screen()
	teardown()
	if uiErr != nil && ctx.Err() == nil {
		say("the UI program returned: %v", uiErr)
	}

	ok := report(out, cfg, samples, deaf)
	if lines := strings.Split(strings.TrimRight(screen, "\n"), "\n"); len(lines) > 0 {
		say("last status bar: %s", strings.TrimSpace(ansi.Strip(lines[len(lines)-1])))
	}
	if !closedClean(say, goroutinesBefore) {
		ok = false
	}
	return ok, nil
}

// sampleUnder drives the scripted user and samples the process until the
// soak's time is up: the samples (also written to cfg.samplesFile) and how
// many were taken while the UI had not answered probes for seconds.
func sampleUnder(ctx context.Context, cfg config, s *live.Session, ui *headless, start time.Time, say func(string, ...any)) ([]sample, int, error) {
	var err error
	var samples []sample
	var csv *os.File
	if cfg.samplesFile != "" {
		if csv, err = os.Create(cfg.samplesFile); err != nil {
			return nil, 0, err
		}
		defer csv.Close()
		fmt.Fprintln(csv, csvHeader)
	}
	deaf := 0 // samples taken while the UI had not answered probes for seconds
	sampleT, stepT, probeT := time.NewTicker(cfg.every), time.NewTicker(cfg.step), time.NewTicker(time.Second)
	defer sampleT.Stop()
	defer stepT.Stop()
	defer probeT.Stop()
	end := time.After(cfg.duration)
	half := time.After(cfg.duration / 2)
	lastReport := time.Duration(0)
	steps := 0
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-end:
			break loop
		case err := <-ui.done:
			return nil, 0, fmt.Errorf("the UI ended by itself after %s: %v", time.Since(start).Round(time.Second), err)
		case <-half:
			writeHeapProfile(say, cfg.heapProfile, "half")
		case <-probeT.C:
			ui.probe()
		case <-stepT.C:
			what := ui.step(steps)
			steps++
			if cfg.verbose {
				say("step %q: %s", what, firstLine(ui.screen()))
			}
		case <-sampleT.C:
			sm := take(start, sizeOf(s.Registry().Snapshot()), ui.stats())
			if sm.ui.pending >= stalled {
				deaf++
			}
			samples = append(samples, sm)
			if csv != nil {
				fmt.Fprintln(csv, sm.csv())
			}
			if sm.at-lastReport >= time.Minute || len(samples) == 1 {
				lastReport = sm.at
				say("%6s  heap %5.1f MiB  goroutines %4d  xds streams %d  grpc conns %d  fds %3d  mesh %d services / %d endpoints  ui %d msgs, probe ≤ %s",
					sm.at.Round(time.Second), float64(sm.heap)/(1<<20), sm.goroutines, sm.open.Streams, sm.open.Connections, sm.fds,
					sm.services, sm.endpoints, sm.ui.messages, sm.ui.probeMax.Round(time.Millisecond))
			}
		}
	}
	return samples, deaf, nil
}

// writeHeapProfile writes PREFIX-WHEN.pprof (nothing without a prefix).
func writeHeapProfile(say func(string, ...any), prefix, when string) {
	if prefix == "" {
		return
	}
	path := prefix + "-" + when + ".pprof"
	f, err := os.Create(path)
	if err == nil {
		runtime.GC()
		err = pprof.WriteHeapProfile(f)
		f.Close()
	}
	if err != nil {
		say("heap profile %s: %v", path, err)
		return
	}
	say("heap profile: %s", path)
}

// firstLine is a frame's first line (its header), plain.
func firstLine(screen string) string {
	l, _, _ := strings.Cut(screen, "\n")
	return strings.TrimSpace(ansi.Strip(l))
}

// sizeOf counts the mesh a snapshot holds.
func sizeOf(snap *model.Snapshot) meshSize {
	if snap == nil {
		return meshSize{}
	}
	m := meshSize{services: len(snap.Services)}
	for _, svc := range snap.Services {
		for _, in := range svc.Clusters {
			if in != nil {
				m.endpoints += len(in.Endpoints)
			}
		}
	}
	return m
}

// report judges every metric, prints the table and the rule, and says
// whether the run passed.
func report(out io.Writer, cfg config, samples []sample, deaf int) bool {
	fmt.Fprintf(out, "\n%d samples over %s. Rule: %s.\n\n", len(samples), cfg.duration, cfg.rule)
	xs := make([]float64, len(samples))
	for i, s := range samples {
		xs[i] = s.at.Seconds()
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "metric\tfirst\tlast\tmin\tmax\twindow mean\tslope /h\t% of level /h\tt\tfit rise\tverdict\t")
	ok := true
	for _, m := range metrics {
		ys := make([]float64, len(samples))
		for i, s := range samples {
			ys[i] = m.value(s)
		}
		t := cfg.rule.judge(trend{name: m.name, unit: m.unit, floor: m.floor, info: m.info, lows: m.lows}, xs, ys)
		verdict := "bounded"
		switch {
		case t.insufficient:
			verdict = "too few samples"
			ok = false
		case t.info:
			verdict = "(context)"
		case t.growing:
			verdict = "GROWS WITHOUT BOUND"
			ok = false
		}
		name := m.name
		if m.unit != "" {
			name += " (" + m.unit + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, num(t.first), num(t.last), num(t.min), num(t.max), num(t.level),
			signed(t.perHour), signed(t.relPerHour*100)+"%", tnum(t.tval()), signed(t.rise), verdict)
	}
	tw.Flush()
	var probeMax time.Duration
	msgs := 0
	for _, s := range samples {
		probeMax = max(probeMax, s.ui.probeMax)
		msgs += s.ui.messages
	}
	fmt.Fprintf(out, "\nUI: %d messages handled, slowest probe through the program's queue %s", msgs, probeMax.Round(time.Millisecond))
	if deaf > 0 {
		fmt.Fprintf(out, "; in %d sample(s) %d or more probes (one a second) waited for an answer: FAIL", deaf, stalled)
		ok = false
	}
	fmt.Fprintln(out)
	return ok
}

// closedClean waits for what the run opened to close: every xDS stream
// and connection, and the goroutines back near where they were.
func closedClean(say func(string, ...any), goroutinesBefore int) bool {
	deadline := time.Now().Add(15 * time.Second)
	for {
		o := xdsclient.OpenNow()
		g := runtime.NumGoroutine()
		clean := o.Streams == 0 && o.Connections == 0 && g <= goroutinesBefore+goroutineSlack
		if clean || time.Now().After(deadline) {
			verdict := "clean"
			if !clean {
				verdict = "LEFT OPEN: FAIL"
			}
			say("after close: xds streams %d, grpc conns %d, goroutines %d (before open: %d): %s", o.Streams, o.Connections, g, goroutinesBefore, verdict)
			return clean
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// goroutineSlack allows for the runtime's and libraries' own goroutines
// that start once and stay (client-go's, gRPC's).
const goroutineSlack = 10

func num(v float64) string {
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%.1f", v)
}

func signed(v float64) string { return fmt.Sprintf("%+.1f", v) }

func tnum(v float64) string {
	if v > 999 || v < -999 {
		return fmt.Sprintf("%+.0e", v)
	}
	return fmt.Sprintf("%+.1f", v)
}
