package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/meshscope/meshscope/session/live"
)

// dumpDir is where a UI session that is slow to get ready dumps its
// goroutines.
func (b *bench) dumpDir() string {
	if b.f.dumpDir != "" {
		return b.f.dumpDir
	}
	return b.dumps
}

// uiRun is one start of the UI in -ui-runs.
type uiRun struct {
	times      uiTimes
	viewpoints []string
	err        error
}

// uiRepeat starts the terminal UI, headless, runs times in a row on the
// filled mesh (no churn, no other phase): each time until ready (or
// -ready-timeout), then closes it and waits until the istiods count no
// client. It prints each run, then min/median/max of the times to clusters
// synced, to every viewpoint's full EDS and to every verdict, and fails
// when a run did not get ready (issue 26: the UI phase once never did).
func (b *bench) uiRepeat(ctx context.Context, runs int) error {
	var cps, debug []live.Target
	for _, is := range b.l.Istiods() {
		cps = append(cps, live.Target{Cluster: is.Cluster, Address: is.XDSAddress()})
		debug = append(debug, live.Target{Cluster: is.Cluster, Address: strings.TrimPrefix(is.HTTPURL(), "http://")})
	}
	wantVPs := 2 * len(cps)
	var done []uiRun
	for i := range runs {
		if err := b.waitNoClients(ctx); err != nil {
			return err
		}
		settle(time.Second)
		u, err := startUI(ctx, b.l.Kubeconfig, cps, debug, len(b.plan.Clusters), b.plan.TotalEndpoints())
		if err != nil {
			return err
		}
		t, err := u.waitReady(ctx, wantVPs, b.f.readyTimeout, b.dumpDir())
		var vps []string
		for _, vp := range u.feed.Viewpoints() {
			vps = append(vps, vp.String())
		}
		u.close()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r := uiRun{times: t, viewpoints: vps, err: err}
		done = append(done, r)
		if err != nil {
			say("UI run %d of %d: NOT READY: %v", i+1, runs, err)
			continue
		}
		say("UI run %d of %d: synced %s, full EDS %s, every verdict (%d services) %s; viewpoints %s",
			i+1, runs, t.synced.Round(time.Millisecond), t.fullEDS.Round(time.Millisecond), t.services, t.verdicts.Round(time.Millisecond), strings.Join(vps, " "))
	}
	failed := printUIRuns(done)
	if failed > 0 {
		return fmt.Errorf("%d of %d UI runs did not get ready", failed, len(done))
	}
	return nil
}

// printUIRuns prints min/median/max of the ready runs' times and returns
// how many runs failed.
func printUIRuns(runs []uiRun) (failed int) {
	var synced, eds, verdicts []time.Duration
	for _, r := range runs {
		if r.err != nil {
			failed++
			continue
		}
		synced = append(synced, r.times.synced)
		eds = append(eds, r.times.fullEDS)
		verdicts = append(verdicts, r.times.verdicts)
	}
	fmt.Fprintf(os.Stdout, "\nterminal UI, headless, started %d times: %d ready, %d not\n", len(runs), len(runs)-failed, failed)
	row := func(what string, ds []time.Duration) {
		if len(ds) == 0 {
			return
		}
		slices.Sort(ds)
		r := func(d time.Duration) string { return d.Round(10 * time.Millisecond).String() }
		fmt.Fprintf(os.Stdout, "  %-34s min %8s  median %8s  max %8s\n", what, r(ds[0]), r(ds[len(ds)/2]), r(ds[len(ds)-1]))
	}
	row("clusters synced", synced)
	row("every viewpoint's first full EDS", eds)
	row("every verdict known", verdicts)
	return failed
}
