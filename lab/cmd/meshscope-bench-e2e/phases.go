package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/lab/scale"
	"github.com/meshscope/meshscope/session/live"
	"github.com/meshscope/meshscope/xdsclient"
)

// bench holds the run's lab and what the phases measured so far.
type bench struct {
	f          flags
	l          *lab.Lab
	plan       *scale.Plan
	bin        string
	res        *result
	cpuProfile *os.File
	churner    *scale.Churner
	// dumps is the default folder for goroutine dumps (-dump-dir).
	dumps string

	// idleCPU is the istiods' CPU rate with no client (cores).
	idleCPU float64
}

// The viewpoints the UI streams (one sidecar per network), and the
// control plane of each cluster.
var (
	vpNet1 = xdsclient.Viewpoint{Cluster: "cluster1", Network: "network1", NodeType: xdsclient.Sidecar}
	vpNet2 = xdsclient.Viewpoint{Cluster: "cluster2", Network: "network2", NodeType: xdsclient.Sidecar}
)

func (b *bench) istiod(cluster string) *lab.Istiod {
	for _, is := range b.l.Istiods() {
		if is.Cluster == cluster {
			return is
		}
	}
	return nil
}

// settle lets istiod and the API servers finish what the previous step
// started (pushes, watch teardown) and collects this process's garbage.
func settle(d time.Duration) {
	runtime.GC()
	time.Sleep(d)
}

// fetch runs one baseline client for vp against addr until it holds every
// resource it follows, and returns how long that took.
func (b *bench) fetch(ctx context.Context, addr string, vp xdsclient.Viewpoint, listeners bool) (time.Duration, int, error) {
	conn, err := xdsclient.Dial(xdsclient.TransportConfig{Address: addr})
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	cctx, cancel := context.WithTimeout(ctx, b.f.readyTimeout)
	defer cancel()
	sc := newSidecar(vp, listeners)
	start := time.Now()
	go func() { _ = sc.run(cctx, conn) }()
	defer func() { cancel(); <-sc.done }()
	for {
		full, n, err := sc.fullAt()
		if err != nil {
			return 0, 0, fmt.Errorf("%s on %s: %w", vp, addr, err)
		}
		if !full.IsZero() {
			return full.Sub(start), n, nil
		}
		select {
		case <-cctx.Done():
			return 0, 0, fmt.Errorf("%s on %s: not every resource within %s", vp, addr, b.f.readyTimeout)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// baselines warms istiod's caches with a sidecar-shaped client at every
// (viewpoint, control plane) the later phases use, then times one full
// fetch of the wildcard client (CDS + every EDS) and of the sidecar-shaped
// one (with LDS + RDS), through counting proxies.
func (b *bench) baselines(ctx context.Context) error {
	for _, is := range b.l.Istiods() {
		for _, vp := range []xdsclient.Viewpoint{vpNet1, vpNet2} {
			d, n, err := b.fetch(ctx, is.XDSAddress(), vp, true)
			if err != nil {
				return fmt.Errorf("warm-up: %w", err)
			}
			say("warm-up: %s on istiod %s: %d EDS clusters, everything in %s", vp, is.Cluster, n, d.Round(time.Millisecond))
		}
	}
	is1 := b.istiod("cluster1")
	for _, listeners := range []bool{false, true} {
		p, err := newCountingProxy(is1.XDSAddress())
		if err != nil {
			return err
		}
		settle(time.Second)
		d, n, err := b.fetch(ctx, p.addr(), vpNet1, listeners)
		bytes := p.received()
		p.close()
		if err != nil {
			return err
		}
		f := fullFetch{Wall: d, WallMS: toMS(d), Bytes: bytes, EDSClusters: n}
		if listeners {
			b.res.Sidecar = f
		} else {
			b.res.Wildcard = f
		}
		say("%s: full fetch (listeners %v) in %s, %d bytes, %d EDS clusters", vpNet1, listeners, d.Round(time.Millisecond), bytes, n)
	}
	return nil
}

// oneService runs explain and watch --service for one benchmark service
// of cluster1, and the subscription explain used before, through proxies.
func (b *bench) oneService(ctx context.Context) error {
	svc := b.plan.Services[0] // in cluster1: watch reads its ports there
	host := svc.Hostname()
	b.res.OneServiceHost = host
	proxies := func() ([]*countingProxy, func(), error) {
		var ps []*countingProxy
		for _, c := range []string{"cluster1", "cluster2"} {
			p, err := newCountingProxy(b.istiod(c).XDSAddress())
			if err != nil {
				return nil, nil, err
			}
			ps = append(ps, p)
		}
		return ps, func() {
			for _, p := range ps {
				p.close()
			}
		}, nil
	}
	ps, done, err := proxies()
	if err != nil {
		return err
	}
	settle(time.Second)
	r, err := runExplain(ctx, b.bin, b.l.Kubeconfig, host, ps)
	done()
	if err != nil {
		return err
	}
	b.res.Explain = r
	say("explain %s: %s, %d bytes over %d views", host, r.Wall.Round(time.Millisecond), r.Bytes, r.Streams)

	p, err := newCountingProxy(b.istiod("cluster1").XDSAddress())
	if err != nil {
		return err
	}
	settle(time.Second)
	short := svc.Name + "." + svc.Namespace
	r, err = runWatchService(ctx, b.bin, b.l.Kubeconfig, "cluster1/network1", short, p)
	p.close()
	if err != nil {
		return err
	}
	b.res.Watch = r
	say("watch --from cluster1/network1 --service %s: first EDS after %s, %d bytes", short, r.Wall.Round(time.Millisecond), r.Bytes)

	ps, done, err = proxies()
	if err != nil {
		return err
	}
	settle(time.Second)
	vp2 := vpNet2
	vp2.ControlPlane = "cluster2"
	r, err = fetchLikeBefore(ctx, []xdsclient.Viewpoint{vpNet1, vp2}, ps, []string{edsName(host)})
	done()
	if err != nil {
		return err
	}
	b.res.ExplainBefore = r
	say("explain's former subscription (CDS + EDS by name): %s, %d bytes", r.Wall.Round(time.Millisecond), r.Bytes)
	return nil
}

func edsName(host string) string { return fmt.Sprintf("outbound|%d||%s", scale.Port, host) }

// churn runs one churn phase and puts the mesh back to its size.
func (b *bench) churn(ctx context.Context) (scale.ChurnResult, error) {
	if b.churner == nil {
		ch, err := b.plan.NewChurner(1)
		if err != nil {
			return scale.ChurnResult{}, err
		}
		b.churner = ch
	}
	r := b.churner.Run(ctx, b.f.churnRate, b.f.churn)
	// istiod debounces (100 ms at least): let the last pushes out.
	time.Sleep(3 * time.Second)
	return r, ctx.Err()
}

// restore takes the pods churn added out again (between phases, so the
// next one sees the mesh of the plan).
func (b *bench) restore(ctx context.Context) error {
	if b.churner == nil {
		return nil
	}
	return b.churner.Restore(ctx)
}

// idleAndChurn samples istiod with no client: idle, then under churn.
func (b *bench) idleAndChurn(ctx context.Context) error {
	settle(3 * time.Second)
	s0, err := scrapeWithHeap(ctx, b.l, opening)
	if err != nil {
		return err
	}
	time.Sleep(b.f.idle)
	s1, err := scrapeWithHeap(ctx, b.l, closing)
	if err != nil {
		return err
	}
	c := costBetween(s0, s1)
	b.idleCPU = c.cpu / c.seconds
	b.res.IstiodIdle = istiodIdle{CPUCores: b.idleCPU, HeapMiB: s1.heap() / (1 << 20), Clients: s1.clients()}
	say("istiods idle: %.3f cores, heap %.0f MiB, %v xDS clients", b.idleCPU, s1.heap()/(1<<20), s1.clients())
	f, err := b.churnCost(ctx, "none")
	if err != nil {
		return err
	}
	b.res.ChurnNoClients = f
	say("churn without clients: %d changes (%.1f/s, %d errors), istiods %.3f cores", f.Changes, f.Rate, f.Errors, f.CPUCores)
	return b.restore(ctx)
}

// churnAgain churns once more with no client, after the phases with
// clients: the no-client cost the others are measured against is the mean
// of this run and the first, so a drift of the machine's load over the
// run does not land on one side.
func (b *bench) churnAgain(ctx context.Context) error {
	settle(3 * time.Second)
	f, err := b.churnCost(ctx, "none-again")
	if err != nil {
		return err
	}
	b.res.ChurnNoClientsAfter = f
	say("churn without clients, again: %d changes (%.1f/s, %d errors), istiods %.3f cores", f.Changes, f.Rate, f.Errors, f.CPUCores)
	return b.restore(ctx)
}

// connectCost is what the istiods spent from before to after a set of
// clients connected, beyond their idle rate: CPU seconds and heap.
func (b *bench) connectCost(before, after meshSample) istiodCost {
	c := costBetween(before, after)
	return istiodCost{CPUSeconds: c.cpu - b.idleCPU*c.seconds, HeapMiB: (after.heap() - before.heap()) / (1 << 20),
		Seconds: c.seconds, Clients: after.clients() - before.clients()}
}

// churnCost measures one churn phase: the istiods' CPU and pushes (what
// is beyond the no-client churn is worked out at the end, judge).
func (b *bench) churnCost(ctx context.Context, name string) (churnFigures, error) {
	s0, err := scrapeAll(ctx, b.l, false)
	if err != nil {
		return churnFigures{}, err
	}
	profiled := func() error { return nil }
	if b.f.istiodProfiles != "" {
		profiled = profileIstiods(ctx, b.l, b.f.istiodProfiles, "churn-"+name, b.f.churn)
	}
	r, err := b.churn(ctx)
	if err != nil {
		return churnFigures{}, err
	}
	if err := profiled(); err != nil {
		return churnFigures{}, err
	}
	s1, err := scrapeAll(ctx, b.l, false)
	if err != nil {
		return churnFigures{}, err
	}
	c := costBetween(s0, s1)
	f := churnFigures{Changes: len(r.Changes), Errors: r.Errors, Rate: r.Rate, CPUSeconds: c.cpu, Seconds: c.seconds,
		CPUCores: c.cpu / c.seconds, Pushes: c.pushes, PushTimeMS: c.pushTime * 1000}
	if n := c.pushes["eds"]; n > 0 {
		f.EDSBytesPerPush = c.edsBytes / n
	}
	return f, nil
}

// heapProfiles saves the istiods' heap profiles with a phase's clients
// connected, when asked to.
func (b *bench) heapProfiles(ctx context.Context, name string) error {
	if b.f.istiodProfiles == "" {
		return nil
	}
	return heapProfileIstiods(ctx, b.l, b.f.istiodProfiles, name)
}

// waitNoClients waits until the istiods count no xDS stream (the previous
// phase's are gone), so the next phase starts from idle.
func (b *bench) waitNoClients(ctx context.Context) error {
	deadline := time.Now().Add(time.Minute)
	for {
		s, err := scrapeAll(ctx, b.l, false)
		if err != nil {
			return err
		}
		if s.clients() == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("istiods still count %v xDS clients a minute after the phase", s.clients())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// ui runs the terminal UI headless against both control planes: time to
// ready, heap, istiod's cost at connect, then churn.
func (b *bench) ui(ctx context.Context) error {
	settle(3 * time.Second)
	heapBefore := heapAlloc()
	goBefore := runtime.NumGoroutine()
	before, err := scrapeWithHeap(ctx, b.l, opening)
	if err != nil {
		return err
	}
	if b.cpuProfile != nil {
		if err := pprof.StartCPUProfile(b.cpuProfile); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var cps, debug []live.Target
	for _, is := range b.l.Istiods() {
		cps = append(cps, live.Target{Cluster: is.Cluster, Address: is.XDSAddress()})
		debug = append(debug, live.Target{Cluster: is.Cluster, Address: strings.TrimPrefix(is.HTTPURL(), "http://")})
	}
	u, err := startUI(ctx, b.l.Kubeconfig, cps, debug, len(b.plan.Clusters), b.plan.TotalEndpoints())
	if err != nil {
		return err
	}
	defer u.close()
	wantVPs := 2 * len(cps) // one per network (2) and control plane
	t, err := u.waitReady(ctx, wantVPs, b.f.readyTimeout, b.dumpDir())
	if err != nil {
		return err
	}
	say("UI: clusters synced after %s, every viewpoint's full EDS after %s, every verdict (%d services) after %s",
		t.synced.Round(time.Millisecond), t.fullEDS.Round(time.Millisecond), t.services, t.verdicts.Round(time.Millisecond))
	// Let the first pushes' trailing derivations pass, then count what
	// the UI derives while the mesh is quiet (should be nothing).
	settle(3 * time.Second)
	n0, t0q := u.indexCount(), time.Now()
	after, err := scrapeWithHeap(ctx, b.l, closing)
	if err != nil {
		return err
	}
	heapAfter := heapAlloc()
	quiet := time.Since(t0q)
	idleIndexes := u.indexCount() - n0
	eps := u.endpoints()
	ui := uiFigures{
		SyncedMS: toMS(t.synced), FullEDSMS: toMS(t.fullEDS), VerdictsMS: toMS(t.verdicts),
		Viewpoints: t.viewpoints, Services: t.services, Endpoints: eps,
		HeapBytes:            int64(heapAfter) - int64(heapBefore),
		Goroutines:           runtime.NumGoroutine() - goBefore,
		IdleIndexesPerMinute: float64(idleIndexes) / quiet.Minutes(),
	}
	ui.HeapPerEndpoint = float64(ui.HeapBytes) / float64(eps)
	ui.Shared = u.feed.SharedEDS()
	b.res.UI = ui
	b.res.IstiodUIConnect = b.connectCost(before, after)
	say("UI: heap %.0f B per endpoint (%d endpoints), %d goroutines, %d indexes derived in %s of quiet; istiods at connect: %.2f CPU s, %+.1f MiB",
		ui.HeapPerEndpoint, eps, ui.Goroutines, idleIndexes, quiet.Round(time.Millisecond), b.res.IstiodUIConnect.CPUSeconds, b.res.IstiodUIConnect.HeapMiB)
	if b.f.memProfile != "" {
		if err := scale.WriteHeapProfile(b.f.memProfile); err != nil {
			return err
		}
	}

	if err := b.heapProfiles(ctx, "ui"); err != nil {
		return err
	}
	u.record(true)
	cf, err := b.churnCost(ctx, "ui")
	if err != nil {
		return err
	}
	u.record(false)
	delays, dropped := u.pushes()
	b.res.ChurnUI = cf
	b.res.PushToScreen = pushFigures(delays, dropped)
	say("UI under churn: %d changes (%.1f/s), %v pushes, istiods %.3f cores; push-to-screen p50 %.1f ms, p99 %.1f ms over %d pushes, %d events dropped",
		cf.Changes, cf.Rate, cf.Pushes["eds"], cf.CPUCores, b.res.PushToScreen.P50MS, b.res.PushToScreen.P99MS, b.res.PushToScreen.Pushes, dropped)
	u.close()
	if err := b.restore(ctx); err != nil {
		return err
	}
	return b.waitNoClients(ctx)
}

// sidecars connects as many sidecar-shaped streams as the UI has (each
// network's sidecar on each control plane, a connection each, as real
// sidecars), then churns. It runs -sidecar-runs times (at least 3), before
// the UI and after it (i counts them): the UI is judged against their mean
// and spread, so a drift of the machine's load over the run does not land
// on one side, and noise is measured, not guessed.
func (b *bench) sidecars(ctx context.Context, i int) error {
	settle(3 * time.Second)
	before, err := scrapeWithHeap(ctx, b.l, opening)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithCancel(ctx)
	var (
		scs   []*sidecar
		conns []io.Closer
	)
	stop := func() {
		cancel()
		for _, sc := range scs {
			<-sc.done
		}
		for _, c := range conns {
			c.Close()
		}
		scs, conns = nil, nil
	}
	defer stop()
	for _, is := range b.l.Istiods() {
		for _, vp := range []xdsclient.Viewpoint{vpNet1, vpNet2} {
			conn, err := xdsclient.Dial(xdsclient.TransportConfig{Address: is.XDSAddress()})
			if err != nil {
				return err
			}
			conns = append(conns, conn)
			vp.ControlPlane = is.Cluster
			sc := newSidecar(vp, true)
			scs = append(scs, sc)
			go func() { _ = sc.run(cctx, conn) }()
		}
	}
	deadline := time.Now().Add(b.f.readyTimeout)
	for {
		all := true
		for _, sc := range scs {
			full, _, err := sc.fullAt()
			if err != nil {
				return err
			}
			all = all && !full.IsZero()
		}
		if all {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the sidecar-shaped streams did not get everything within %s", b.f.readyTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	settle(3 * time.Second)
	after, err := scrapeWithHeap(ctx, b.l, closing)
	if err != nil {
		return err
	}
	b.res.Sidecars = append(b.res.Sidecars, sidecarPhase{})
	ph := &b.res.Sidecars[len(b.res.Sidecars)-1]
	ph.Connect = b.connectCost(before, after)
	say("%d sidecar-shaped streams: istiods at connect %.2f CPU s, %+.1f MiB", len(scs), ph.Connect.CPUSeconds, ph.Connect.HeapMiB)
	name := fmt.Sprintf("sidecars-%d", i+1)
	if err := b.heapProfiles(ctx, name); err != nil {
		return err
	}
	cf, err := b.churnCost(ctx, name)
	if err != nil {
		return err
	}
	ph.Churn = cf
	say("sidecars under churn: %d changes (%.1f/s), %v pushes, istiods %.3f cores", cf.Changes, cf.Rate, cf.Pushes["eds"], cf.CPUCores)
	stop()
	if err := b.restore(ctx); err != nil {
		return err
	}
	return b.waitNoClients(ctx)
}
