package live

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/meshscope/meshscope/analysis/ambient"
	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/fleet"
	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/istiod"
	"github.com/meshscope/meshscope/xdsclient"
)

// Feed follows the mesh for a live reader (the terminal UI): the
// collector's snapshots, and one impersonated sidecar per network — per
// network and control plane when several are given — started as networks
// appear, each following CDS and every EDS; and when the mesh uses ambient
// mode, one impersonated ztunnel per control plane, subscribed to the
// workload API (WDS: one view per istiod, whatever the ztunnel's
// network), with the same retry and stale handling. The clients hold the latest
// resources; the feed only hands out references. Its methods are cheap,
// never block and are safe for concurrent use; they are what tui.Feed,
// tui.ConfigFeed, tui.IstiodFeed, tui.AmbientFeed, tui.FleetFeed and
// tui.GatewayFeed ask for.
//
// A stream that cannot start (no control plane yet, a failed
// port-forward) is shown as such (xdsclient.StateNoStream) and tried again
// after the session's retry delay, also when the mesh is idle and
// publishes no snapshot. Streams to one control plane share one gRPC
// connection.
type Feed struct {
	s      *Session
	mode   xdsclient.Mode
	snaps  chan *model.Snapshot
	events chan xdsclient.Event
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	order   []xdsclient.Viewpoint
	clients map[string]*xdsclient.Client
	cps     map[string]string // viewpoint -> control plane
	// ztunnels are the impersonated ztunnels (WDS), by control plane, in
	// ztOrder; their failures are in failed under the identity's name.
	ztunnels map[string]*xdsclient.WDSClient
	ztOrder  []string
	// failed says, per viewpoint without a stream, why and when its start
	// last failed.
	failed map[string]streamFailure
	// stops ends one stream, by key (a sidecar stream is stopped when its
	// network's default viewpoint changes, see ensureStreams).
	stops  map[string]context.CancelFunc
	conns  map[string]*grpc.ClientConn // by control plane address
	istiod []istiod.View               // the last views read
	// syncz are the last reads of every istiod's /debug/syncz (the
	// fleet view builds on them off the UI's update loop).
	syncz     []fleet.Read
	synczSnap *model.Snapshot // the snapshot when syncz was read
	// shared holds the decoded EDS the streams share: a resource pushed
	// identically to several viewpoints (the same network on two control
	// planes) is decoded and kept once.
	shared *xdsclient.Shared
	// gateways are the gateway streams started (feed_gateway.go), by name,
	// in order; gatewayPods the pod each impersonates.
	gateways    []string
	gatewayPods map[string]explain.SentGateway
}

// streamFailure is why a viewpoint's stream failed to start, and when.
type streamFailure struct {
	why string
	at  time.Time
}

// eventBuffer bounds the events a reader has not taken yet; more are
// dropped (the Feed contract allows it) rather than hold up a client's ACK.
const eventBuffer = 4096

// Feed starts following the mesh with streams of the given ADS variant,
// until ctx ends or Close.
func (s *Session) Feed(ctx context.Context, mode xdsclient.Mode) *Feed {
	f := newFeed(ctx, s, mode)
	updates, unsubscribe := s.reg.Subscribe()
	f.start(updates, unsubscribe)
	return f
}

func newFeed(ctx context.Context, s *Session, mode xdsclient.Mode) *Feed {
	ctx, cancel := context.WithCancel(ctx)
	return &Feed{s: s, mode: mode, ctx: ctx, cancel: cancel,
		snaps: make(chan *model.Snapshot, 1), events: make(chan xdsclient.Event, eventBuffer),
		clients: map[string]*xdsclient.Client{}, cps: map[string]string{}, failed: map[string]streamFailure{}, stops: map[string]context.CancelFunc{}, conns: map[string]*grpc.ClientConn{},
		ztunnels: map[string]*xdsclient.WDSClient{}, shared: xdsclient.NewShared(), gatewayPods: map[string]explain.SentGateway{}}
}

// start follows updates (and polls istiod) until the feed is closed.
func (f *Feed) start(updates <-chan *model.Snapshot, unsubscribe func()) {
	if f.s.readsIstiodView() {
		f.wg.Add(1)
		go func() { defer f.wg.Done(); f.pollIstiod(f.ctx) }()
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer unsubscribe()
		f.follow(f.ctx, updates)
	}()
}

// follow starts the streams each new snapshot calls for and hands the
// snapshot on, latest wins.
func (f *Feed) follow(ctx context.Context, updates <-chan *model.Snapshot) {
	var last *model.Snapshot
	retry := time.NewTicker(f.s.retry)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-retry.C:
			// An idle mesh publishes no snapshot: retry failed streams
			// on a timer too.
			if last != nil {
				f.ensureStreams(last)
			}
		case s := <-updates:
			f.ensureStreams(s)
			last = s
			// Latest wins: replace a snapshot the reader has not taken.
			select {
			case <-f.snaps:
			default:
			}
			f.snaps <- s
		}
	}
}

// ensureStreams starts a sidecar stream for every network's default
// viewpoint that has none yet — with several control planes, one per
// control plane, so that what two istiods send the same proxy can be
// compared — and stops the stream of a viewpoint that is no longer its
// network's default.
//
// A network's default viewpoint is a sidecar in its first cluster (by ID),
// and while clusters sync that can change: a snapshot taken while
// cluster3's caches were filled but cluster2's not yet has network2 in
// cluster3 only, the next one in cluster2 and cluster3. Without the stop,
// the feed kept the first stream beside the new one (issue 26: six streams
// instead of four, one network fetched twice from each istiod, and a
// reader waiting for "every default viewpoint" never done).
//
// To spare istiod the full push of a stream that is about to be replaced,
// a network's streams wait while a cluster that sorts before its first
// one is still connecting or syncing with its network unknown: it may be
// the network's default-to-be.
func (f *Feed) ensureStreams(s *model.Snapshot) {
	want := map[string]bool{}
	nets := map[string]bool{}
	for _, base := range horizon.SidecarViewpoints(s, "") {
		if mayComeFirst(s, base.Cluster) {
			continue // the network's streams, if any, stay until it is decided
		}
		nets[base.Network] = true
		vps := []xdsclient.Viewpoint{base}
		if cps := f.s.controlPlanes; len(cps) > 1 {
			vps = vps[:0]
			for _, t := range cps {
				vp := base
				vp.ControlPlane = t.Cluster
				vps = append(vps, vp)
			}
		} else if f.s.forwardsToIstiod() {
			// The other revisions of the istiod port-forwarded to
			// (cluster1@canary), each through its own pod.
			for _, cp := range s.RevisionControlPlanes(firstContextCluster(s)) {
				vp := base
				vp.ControlPlane = cp
				vps = append(vps, vp)
			}
		}
		for _, vp := range vps {
			want[vp.String()] = true
			f.ensureStream(vp)
		}
	}
	// A network that left the snapshot keeps its stream (a cluster that
	// is away for a while); one whose default moved to another cluster
	// does not.
	f.mu.Lock()
	var gone []xdsclient.Viewpoint
	for _, vp := range f.order {
		if nets[vp.Network] && !want[vp.String()] {
			gone = append(gone, vp)
		}
	}
	f.mu.Unlock()
	for _, vp := range gone {
		f.stopStream(vp)
	}
	if ambient.InUse(s) {
		for _, cp := range ambient.Ztunnels(s, f.s.ControlPlaneIDs(s)) {
			f.ensureZtunnel(cp)
		}
	}
}

func (f *Feed) ensureStream(vp xdsclient.Viewpoint) {
	key := vp.String()
	f.launch(key, vp, func() bool {
		_, have := f.clients[key]
		return have
	}, func() { f.order = append(f.order, vp) }, func(t Target, conn *grpc.ClientConn) (func(context.Context) error, error) {
		c, err := xdsclient.New(xdsclient.Options{Viewpoint: vp, ControlPlane: t.Cluster, Conn: conn, Mode: f.mode,
			Transport: xdsclient.TransportConfig{Address: t.Address}, OnEvent: f.onEvent, Shared: f.shared})
		if err != nil {
			return nil, err
		}
		f.mu.Lock()
		f.clients[key], f.cps[key] = c, t.Cluster
		f.mu.Unlock()
		return c.Run, nil
	})
}

// mayComeFirst says whether a cluster that sorts before cluster is still
// connecting or syncing without a known network (its system namespace not
// read yet), so that it may yet be the first cluster of cluster's network.
func mayComeFirst(s *model.Snapshot, cluster string) bool {
	for _, c := range s.Clusters {
		if c.ID < cluster && c.Network == "" && (c.State == model.StateConnecting || c.State == model.StateSyncing) {
			return true
		}
	}
	return false
}

// stopStream ends the stream of a viewpoint and forgets it: it is no
// longer in Viewpoints or Status, and a reader asking for its EDS gets
// none.
func (f *Feed) stopStream(vp xdsclient.Viewpoint) {
	key := vp.String()
	f.mu.Lock()
	defer f.mu.Unlock()
	if stop := f.stops[key]; stop != nil {
		stop()
	}
	delete(f.stops, key)
	delete(f.clients, key)
	delete(f.cps, key)
	delete(f.failed, key)
	f.order = slices.DeleteFunc(f.order, func(v xdsclient.Viewpoint) bool { return v.String() == key })
}

// launch starts the stream named key on the control plane serving vp,
// unless it runs (have, called under f.mu) or failed to start within the
// retry delay. fresh records a key seen for the first time (under f.mu);
// start builds the client on the control plane's shared connection,
// stores it, and returns its Run, which runs until the feed closes.
func (f *Feed) launch(key string, vp xdsclient.Viewpoint, have func() bool, fresh func(),
	start func(Target, *grpc.ClientConn) (func(context.Context) error, error)) {
	f.mu.Lock()
	running := have()
	failure, failed := f.failed[key]
	if !running && !failed {
		fresh()
	}
	wait := failed && time.Since(failure.at) < f.s.retry
	f.mu.Unlock()
	if running || wait {
		return
	}
	t, err := f.s.controlPlaneFor(f.ctx, vp)
	if err != nil {
		f.fail(key, err.Error())
		return
	}
	conn, err := f.conn(t.Address)
	if err != nil {
		f.fail(key, err.Error())
		return
	}
	run, err := start(t, conn)
	if err != nil {
		f.fail(key, err.Error())
		return
	}
	ctx, stop := context.WithCancel(f.ctx)
	f.mu.Lock()
	delete(f.failed, key)
	f.stops[key] = stop
	f.mu.Unlock()
	f.wg.Add(1)
	go func() { defer f.wg.Done(); defer stop(); _ = run(ctx) }()
}

// conn is the shared connection to a control plane's address.
func (f *Feed) conn(addr string) (*grpc.ClientConn, error) {
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

func (f *Feed) fail(key, why string) {
	f.mu.Lock()
	f.failed[key] = streamFailure{why: why, at: time.Now()}
	f.mu.Unlock()
}

// onEvent must not block the client (it holds up the ACK): drop when full.
func (f *Feed) onEvent(e xdsclient.Event) {
	select {
	case f.events <- e:
	default:
	}
}

// Close stops every stream and the istiod poller, and closes the
// connections. The channels stay open (a reader may still be selecting).
func (f *Feed) Close() {
	f.cancel()
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		c.Close()
	}
}

// pollIstiod reads istiod's own view and its connected proxies, from every
// primary's istiod, every IstiodPoll. A primary whose port-forward failed
// is a read with its error; the forwarder tries it again after the retry
// delay.
func (f *Feed) pollIstiod(ctx context.Context) {
	t := time.NewTicker(f.s.istiodPoll)
	defer t.Stop()
	for {
		// The snapshot before the reads: it names the control planes to
		// read, and the fleet joins the syncz with it (Syncz says why before).
		snap := f.s.reg.Snapshot()
		reads := f.s.IstiodViews(ctx, snap)
		var views []istiod.View
		for _, r := range reads {
			if r.Err != nil {
				slog.Debug("no istiod debug view", "controlPlane", r.ControlPlane, "address", r.Address, "err", r.Err)
				continue
			}
			views = append(views, r.View)
		}
		// The connected proxies, from the same debug endpoints: a failed
		// read stays in the list with its error (the fleet says which
		// control plane it could not read).
		sz := f.s.IstiodSyncz(ctx, snap)
		f.mu.Lock()
		f.istiod = views
		f.syncz, f.synczSnap = sz, snap
		f.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
