package live

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshscope/meshscope/demo"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/istiod"
	"github.com/meshscope/meshscope/xdsclient"
)

const helloEDS = "outbound|5000||helloworld.sample.svc.cluster.local"

// openDemo opens a session on the demo mesh (no churn) and waits until it
// settles.
func openDemo(t *testing.T, ctx context.Context, o Options) (*Session, *model.Snapshot) {
	t.Helper()
	d, err := demo.Start(ctx, demo.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	o.InProcess = d
	s, err := Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	snap, err := s.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s, snap
}

// waitFor polls cond every 20 ms until it holds or ctx ends.
func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// withEDS counts the viewpoints whose stream holds helloworld's EDS.
func withEDS(f *Feed) int {
	n := 0
	for _, vp := range f.Viewpoints() {
		if la, _, ok := f.Actual(vp.String(), helloEDS); ok && len(la.Endpoints) > 0 {
			n++
		}
	}
	return n
}

// TestFeedTwoControlPlanes: with two control planes (here both served by
// the demo's control plane under two names), the feed runs one stream per
// network viewpoint per control plane, each named VIEWPOINT@CP, each with
// its own EDS, on one shared connection per address.
func TestFeedTwoControlPlanes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	s, _ := openDemo(t, ctx, Options{})
	addr := s.ControlPlanes()[0].Address
	s.controlPlanes = []Target{{Cluster: "cluster1", Address: addr}, {Cluster: "cluster2", Address: addr}}
	f := s.Feed(ctx, xdsclient.ModeDelta)
	defer f.Close()
	waitFor(t, ctx, "4 streams with helloworld's EDS", func() bool { return withEDS(f) == 4 })
	var names []string
	for _, vp := range f.Viewpoints() {
		names = append(names, vp.String())
	}
	sort.Strings(names)
	want := "cluster1/network1@cluster1,cluster1/network1@cluster2,cluster2/network2@cluster1,cluster2/network2@cluster2"
	if strings.Join(names, ",") != want {
		t.Fatalf("viewpoints %v, want %s", names, want)
	}
	for _, st := range f.Status() {
		if wantCP := st.Viewpoint[strings.LastIndex(st.Viewpoint, "@")+1:]; st.ControlPlane != wantCP {
			t.Errorf("%s streams from %q", st.Viewpoint, st.ControlPlane)
		}
	}
	f.mu.Lock()
	conns := len(f.conns)
	f.mu.Unlock()
	if conns != 1 {
		t.Errorf("%d connections for one address, want 1 shared", conns)
	}
	if pc, ok := f.Config("cluster1/network1@cluster1"); !ok || len(pc.Clusters) == 0 {
		t.Errorf("no CDS for cluster1/network1@cluster1: %v", ok)
	}
}

// TestFeedFollowsNetworkDefault: while clusters sync, a network's first
// cluster can change — a snapshot taken when cluster3's caches were filled
// but cluster2's not yet puts network2 in cluster3 only — and the feed
// then moves the network's streams to the new default viewpoint instead of
// keeping the first ones beside them (issue 26: six streams, not four, and
// a reader waiting for every default viewpoint's EDS waited for ever). The
// old streams end.
func TestFeedFollowsNetworkDefault(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	s, settled := openDemo(t, ctx, Options{})
	addr := s.ControlPlanes()[0].Address
	s.controlPlanes = []Target{{Cluster: "cluster1", Address: addr}, {Cluster: "cluster2", Address: addr}}

	// The same mesh as seen before cluster2's caches were filled: network2
	// is only in cluster3.
	early := *settled
	early.Networks = slices.Clone(settled.Networks)
	for i, n := range early.Networks {
		if n.Name == "network2" {
			early.Networks[i].Clusters = []string{"cluster3"}
		}
	}
	f := newFeed(ctx, s, xdsclient.ModeDelta)
	defer f.Close()
	updates := make(chan *model.Snapshot)
	f.start(updates, func() {})
	names := func() string {
		var out []string
		for _, vp := range f.Viewpoints() {
			out = append(out, vp.String())
		}
		sort.Strings(out)
		return strings.Join(out, ",")
	}

	updates <- &early
	waitFor(t, ctx, "4 streams with helloworld's EDS", func() bool { return withEDS(f) == 4 })
	if got, want := names(), "cluster1/network1@cluster1,cluster1/network1@cluster2,cluster3/network2@cluster1,cluster3/network2@cluster2"; got != want {
		t.Fatalf("early viewpoints %s, want %s", got, want)
	}
	old, _ := f.client("cluster3/network2@cluster1")

	updates <- settled
	want := "cluster1/network1@cluster1,cluster1/network1@cluster2,cluster2/network2@cluster1,cluster2/network2@cluster2"
	waitFor(t, ctx, "the cluster2 streams", func() bool {
		_, _, ok := f.Actual("cluster2/network2@cluster1", helloEDS)
		_, _, ok2 := f.Actual("cluster2/network2@cluster2", helloEDS)
		return ok && ok2
	})
	if got := names(); got != want {
		t.Fatalf("viewpoints once synced %s, want %s", got, want)
	}
	for _, st := range f.Status() {
		if strings.HasPrefix(st.Viewpoint, "cluster3/") {
			t.Errorf("status still lists %s", st.Viewpoint)
		}
	}
	waitFor(t, ctx, "the cluster3 stream stopped", func() bool { return old.Status().State == xdsclient.StateStopped })
	// Another snapshot changes nothing.
	updates <- settled
	if got := names(); got != want {
		t.Fatalf("viewpoints after another snapshot %s, want %s", got, want)
	}
}

// TestFeedWaitsForNetworkDefault: while a cluster that sorts before a
// network's first cluster is still syncing with its network unknown, the
// network gets no stream yet (it may be the network's default-to-be: a
// stream now would cost istiod a full push for nothing); the other
// networks' streams start at once, and the waiting network's once the
// cluster's network is known.
func TestFeedWaitsForNetworkDefault(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	s, settled := openDemo(t, ctx, Options{})
	addr := s.ControlPlanes()[0].Address

	early := *settled
	early.Networks = slices.Clone(settled.Networks)
	for i, n := range early.Networks {
		if n.Name == "network2" {
			early.Networks[i].Clusters = []string{"cluster3"}
		}
	}
	early.Clusters = slices.Clone(settled.Clusters)
	for i, c := range early.Clusters {
		if c.ID == "cluster2" {
			early.Clusters[i].State, early.Clusters[i].Network = model.StateSyncing, ""
		}
	}
	s.controlPlanes = []Target{{Cluster: "cluster1", Address: addr}}
	f := newFeed(ctx, s, xdsclient.ModeDelta)
	defer f.Close()
	updates := make(chan *model.Snapshot)
	f.start(updates, func() {})
	updates <- &early
	waitFor(t, ctx, "network1's stream", func() bool {
		_, _, ok := f.Actual("cluster1/network1", helloEDS)
		return ok
	})
	if vps := f.Viewpoints(); len(vps) != 1 || vps[0].Network != "network1" {
		t.Fatalf("viewpoints while cluster2 syncs: %v, want network1's only", vps)
	}
	updates <- settled
	waitFor(t, ctx, "network2's stream in cluster2", func() bool {
		_, _, ok := f.Actual("cluster2/network2", helloEDS)
		return ok
	})
	if vps := f.Viewpoints(); len(vps) != 2 {
		t.Fatalf("viewpoints once synced: %v", vps)
	}
}

// fakeForwards stands in for port-forwards to istiod: the xDS port fails
// until allowed, then forwards to addr; the debug port always fails.
type fakeForwards struct {
	mu       sync.Mutex
	addr     string
	allowed  bool
	attempts []time.Time // of the xDS port
}

func (f *fakeForwards) start(_ context.Context, _, _ string, port int) (*istiod.PortForward, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if port != istiodXDSPort {
		return nil, "", errors.New("no debug port here")
	}
	f.attempts = append(f.attempts, time.Now())
	if !f.allowed {
		return nil, "", errors.New("istiod not ready")
	}
	return &istiod.PortForward{Address: f.addr, Pod: "istio-system/istiod-1"}, "cluster1", nil
}

// TestFeedRetriesFailedStart: a stream whose start fails (here its
// port-forward) shows "no stream" with the reason, and is started by the
// retry timer once the forward works — with no new snapshot to trigger it.
func TestFeedRetriesFailedStart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	s, snap := openDemo(t, ctx, Options{})
	const retry = 100 * time.Millisecond
	fake := &fakeForwards{addr: s.ControlPlanes()[0].Address}
	s.controlPlanes, s.retry = nil, retry
	s.fwd = newForwarder(ctx, retry, fake.start)

	f := newFeed(ctx, s, xdsclient.ModeDelta)
	defer f.Close()
	updates := make(chan *model.Snapshot, 1)
	updates <- snap // one snapshot, never another
	f.start(updates, func() {})

	waitFor(t, ctx, "both viewpoints and the ztunnel without a stream", func() bool {
		sts := f.Status()
		for _, st := range sts {
			if st.State != xdsclient.StateNoStream || !st.Stale || !strings.Contains(st.Reason, "istiod not ready") || !strings.Contains(st.Reason, "15010") {
				return false
			}
		}
		return len(sts) == 3 && sts[2].Viewpoint == "ztunnel@cluster1"
	})
	if got := f.Status()[0].Text(); !strings.HasPrefix(got, "no stream: no --xds-address, and port-forwarding to istiod's port 15010 failed") {
		t.Errorf("status text %q", got)
	}
	fake.mu.Lock()
	fake.allowed = true
	fake.mu.Unlock()
	waitFor(t, ctx, "both streams up after the retry", func() bool { return withEDS(f) == 2 })
	waitFor(t, ctx, "the ztunnel up after the retry", func() bool { _, ok := f.WDS("cluster1", echoKey); return ok })
	for _, st := range f.Status() {
		if st.ControlPlane != "cluster1" || st.Reason != "" {
			t.Errorf("after the retry: %+v", st)
		}
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if n := len(fake.attempts); n < 2 {
		t.Fatalf("%d port-forward attempts", n)
	}
	// Two viewpoints failing at once share one attempt: no attempt follows
	// another sooner than the retry delay.
	for i := 1; i < len(fake.attempts); i++ {
		if d := fake.attempts[i].Sub(fake.attempts[i-1]); d < retry {
			t.Errorf("attempt %d came %s after the one before, want ≥ %s", i+1, d, retry)
		}
	}
}

// TestControlPlaneFor: a viewpoint goes to the control plane named by its
// ControlPlane, else by its Cluster, else to the first one (named by its
// address when it has no cluster); with none and no way to port-forward,
// the error says what to give.
func TestControlPlaneFor(t *testing.T) {
	ctx := context.Background()
	s := &Session{controlPlanes: []Target{{Cluster: "cluster1", Address: "a:1"}, {Cluster: "cluster2", Address: "b:2"}}}
	for _, c := range []struct {
		vp   xdsclient.Viewpoint
		want string
	}{
		{xdsclient.Viewpoint{Cluster: "cluster2"}, "b:2"},
		{xdsclient.Viewpoint{Cluster: "cluster2", ControlPlane: "cluster1"}, "a:1"},
		{xdsclient.Viewpoint{Cluster: "cluster9"}, "a:1"},
	} {
		if got, err := s.controlPlaneFor(ctx, c.vp); err != nil || got.Address != c.want {
			t.Errorf("%s: %+v %v, want %s", c.vp, got, err, c.want)
		}
	}
	s.controlPlanes = []Target{{Address: "a:1"}}
	if got, _ := s.controlPlaneFor(ctx, xdsclient.Viewpoint{Cluster: "cluster1"}); got.Cluster != "a:1" {
		t.Errorf("unnamed control plane: %+v", got)
	}
	s.controlPlanes = nil
	if _, err := s.controlPlaneFor(ctx, xdsclient.Viewpoint{}); err == nil || !strings.Contains(err.Error(), "--xds-address") {
		t.Errorf("none: %v", err)
	}
}
