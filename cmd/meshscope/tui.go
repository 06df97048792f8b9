package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"

	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/collector/explain"
	"github.com/meshscope/meshscope/tui"
	"github.com/meshscope/meshscope/xdsclient"
)

// runTUI opens the terminal UI on the mesh (the demo mesh with --demo). The
// UI draws at once; clusters and streams fill in as they sync.
func runTUI(cmd *cobra.Command, g *globalOptions, o *meshOptions) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m, err := openMesh(ctx, g, o, true)
	if err != nil {
		return err
	}
	defer m.Close()
	feed := startFeed(ctx, m, xdsclient.ModeDelta)
	defer feed.close()
	return tui.Run(ctx, feed, tui.Options{Theme: g.Theme, Contexts: g.Contexts})
}

// liveFeed is tui.Feed over the collector and one impersonated sidecar per
// network (started as networks appear), each following CDS and every EDS.
// The clients hold the latest EDS; the feed only hands out references.
type liveFeed struct {
	m      *mesh
	mode   xdsclient.Mode
	snaps  chan *collector.Snapshot
	events chan xdsclient.Event
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	order   []xdsclient.Viewpoint
	clients map[string]*xdsclient.Client
	cps     map[string]string // viewpoint -> control plane
	// failed says, per viewpoint without a stream, why and when its
	// start last failed; it is tried again after streamRetry (istiod or
	// its port-forward may come).
	failed map[string]streamFailure
	conns  map[string]*grpc.ClientConn
	istiod []xdsclient.IstiodView
}

func startFeed(ctx context.Context, m *mesh, mode xdsclient.Mode) *liveFeed {
	ctx, cancel := context.WithCancel(ctx)
	f := &liveFeed{m: m, mode: mode, ctx: ctx, cancel: cancel,
		snaps: make(chan *collector.Snapshot, 1), events: make(chan xdsclient.Event, 4096),
		clients: map[string]*xdsclient.Client{}, cps: map[string]string{}, failed: map[string]streamFailure{}, conns: map[string]*grpc.ClientConn{}}
	if m.readsIstiodView() {
		f.wg.Add(1)
		go func() { defer f.wg.Done(); f.pollIstiod(ctx) }()
	}
	updates, unsubscribe := m.Registry.Subscribe()
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer unsubscribe()
		var prev *collector.Snapshot
		retry := time.NewTicker(streamRetry)
		defer retry.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-retry.C:
				// An idle mesh publishes no snapshot: retry failed
				// streams on a timer too.
				if prev != nil {
					f.ensureStreams(prev)
				}
			case s := <-updates:
				f.ensureStreams(s)
				prev = s
				// Latest wins: replace a snapshot the UI has not read yet.
				select {
				case <-f.snaps:
				default:
				}
				f.snaps <- s
			}
		}
	}()
	return f
}

// ensureStreams starts a sidecar stream for every network's default
// viewpoint that has none yet — with several control planes
// (--xds-address CLUSTER=ADDR,...), one per control plane, so that what two
// istiods send the same proxy can be compared.
func (f *liveFeed) ensureStreams(s *collector.Snapshot) {
	for _, p := range explain.Viewpoints(s) {
		base := xdsclient.Viewpoint{Cluster: p.Cluster, Network: p.Network, NodeType: xdsclient.Sidecar}
		vps := []xdsclient.Viewpoint{base}
		if len(f.m.ControlPlanes) > 1 {
			vps = vps[:0]
			for _, t := range f.m.ControlPlanes {
				vp := base
				vp.ControlPlane = t.Cluster
				vps = append(vps, vp)
			}
		}
		for _, vp := range vps {
			f.ensureStream(vp)
		}
	}
}

// streamFailure is why a viewpoint's stream failed to start, and when.
type streamFailure struct {
	why string
	at  time.Time
}

// streamRetry is how long a stream that failed to start waits before it
// is tried again.
const streamRetry = 15 * time.Second

func (f *liveFeed) ensureStream(vp xdsclient.Viewpoint) {
	key := vp.String()
	f.mu.Lock()
	_, have := f.clients[key]
	failure, failed := f.failed[key]
	if !have && !failed {
		f.order = append(f.order, vp)
	}
	wait := failed && time.Since(failure.at) < streamRetry
	f.mu.Unlock()
	if have || wait {
		return
	}
	t, err := f.m.controlPlaneFor(f.ctx, vp)
	if err != nil {
		f.fail(key, err.Error())
		return
	}
	conn, err := f.conn(t.Address)
	if err != nil {
		f.fail(key, err.Error())
		return
	}
	c, err := xdsclient.New(xdsclient.Options{Viewpoint: vp, ControlPlane: t.Cluster, Conn: conn, Mode: f.mode,
		Transport: xdsclient.TransportConfig{Address: t.Address}, OnEvent: f.onEvent})
	if err != nil {
		f.fail(key, err.Error())
		return
	}
	f.mu.Lock()
	f.clients[key], f.cps[key] = c, t.Cluster
	delete(f.failed, key)
	f.mu.Unlock()
	f.wg.Add(1)
	go func() { defer f.wg.Done(); _ = c.Run(f.ctx) }()
}

func (f *liveFeed) conn(addr string) (*grpc.ClientConn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.conns[addr]; c != nil {
		return c, nil
	}
	c, err := xdsclient.Dial(xdsclient.TransportConfig{Address: addr})
	if err == nil {
		f.conns[addr] = c
	}
	return c, err
}

func (f *liveFeed) fail(key, why string) {
	f.mu.Lock()
	f.failed[key] = streamFailure{why: why, at: time.Now()}
	f.mu.Unlock()
}

// onEvent must not block the client (it holds up the ACK): drop when full.
func (f *liveFeed) onEvent(e xdsclient.Event) {
	select {
	case f.events <- e:
	default:
	}
}

func (f *liveFeed) close() {
	f.cancel()
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		c.Close()
	}
}

func (f *liveFeed) Snapshots() <-chan *collector.Snapshot { return f.snaps }
func (f *liveFeed) Events() <-chan xdsclient.Event        { return f.events }

// client is the stream of a viewpoint and its control plane (nil if none).
func (f *liveFeed) client(viewpoint string) (*xdsclient.Client, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.clients[viewpoint], f.cps[viewpoint]
}

func (f *liveFeed) Actual(viewpoint, edsCluster string) (*xdsclient.LoadAssignment, string, bool) {
	c, cp := f.client(viewpoint)
	if c == nil {
		return nil, "", false
	}
	la, ok := c.LoadAssignment(edsCluster)
	if !ok {
		return nil, cp, false
	}
	return &la, cp, true
}

func (f *liveFeed) Viewpoints() []xdsclient.Viewpoint {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]xdsclient.Viewpoint(nil), f.order...)
}

func (f *liveFeed) Status() []tui.StreamStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]tui.StreamStatus, 0, len(f.order))
	for _, vp := range f.order {
		k := vp.String()
		if c := f.clients[k]; c != nil {
			st := c.Status()
			out = append(out, tui.StreamStatus{Viewpoint: k, ControlPlane: f.cps[k], State: st.State, Stale: st.Stale, LastPush: st.LastResponse})
			continue
		}
		out = append(out, tui.StreamStatus{Viewpoint: k, State: xdsclient.StateIdle, Reason: f.failed[k].why, Stale: true})
	}
	return out
}

// Config is the CDS, LDS and RDS a viewpoint holds (tui.ConfigFeed).
func (f *liveFeed) Config(viewpoint string) (tui.ProxyConfig, bool) {
	c, _ := f.client(viewpoint)
	if c == nil {
		return tui.ProxyConfig{}, false
	}
	pc := tui.ProxyConfig{Clusters: c.Clusters(), Listeners: c.Listeners(), Routes: c.Routes()}
	return pc, len(pc.Clusters) > 0
}

// WatchListeners subscribes LDS and RDS for a viewpoint, on demand.
func (f *liveFeed) WatchListeners(viewpoint string) {
	c, _ := f.client(viewpoint)
	if c != nil {
		_ = c.WatchListeners()
	}
}

var _ tui.ConfigFeed = (*liveFeed)(nil)

// pollIstiod reads istiod's own view every 5 s (tui.IstiodFeed).
func (f *liveFeed) pollIstiod(ctx context.Context) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		var views []xdsclient.IstiodView
		// Without a port-forward the clusters view shows no istiod
		// opinion; portForwarded tries again after forwardRetry.
		targets, err := f.m.istiodDebugTargets(ctx)
		if err != nil {
			slog.Debug("no istiod debug view", "err", err)
		}
		for _, target := range targets {
			cp := target.Cluster
			if cp == "" {
				if s := f.m.Registry.Snapshot(); len(s.Clusters) > 0 {
					cp = s.Clusters[0].ID
				}
			}
			if v, err := xdsclient.FetchIstiodView(ctx, cp, target.Address); err == nil {
				views = append(views, v)
			}
		}
		f.mu.Lock()
		f.istiod = views
		f.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Istiod is istiod's last polled view of each control plane.
func (f *liveFeed) Istiod() []xdsclient.IstiodView {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.istiod
}

var _ tui.IstiodFeed = (*liveFeed)(nil)
