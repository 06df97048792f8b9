package demo

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

const hello = "outbound|5000||helloworld.sample.svc.cluster.local"

func start(t *testing.T, churn bool) *Demo {
	t.Helper()
	d, err := Start(context.Background(), Options{Seed: 1, Churn: churn, Interval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	return d
}

// startSettled starts a demo and waits until its collector settled; the
// context it returns ends after timeout (and with the test).
func startSettled(t *testing.T, churn bool, timeout time.Duration) (*Demo, context.Context) {
	t.Helper()
	d := start(t, churn)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	if _, err := d.Registry.WaitSettled(ctx); err != nil {
		t.Fatal(err)
	}
	return d, ctx
}

// TestDemoSettles: the demo mesh settles with its planted states. How fast
// is BenchmarkDemoSettle's (target < 1 s): a wall-clock bound here failed
// on a loaded machine (1.8–2 s at load 15), which proves nothing about the
// code. The deadline is only there so that a demo that never settles fails.
func TestDemoSettles(t *testing.T) {
	begin := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d := start(t, false)
	snap, err := d.Registry.WaitSettled(ctx)
	if err != nil {
		t.Fatalf("demo not settled: %v", err)
	}
	t.Logf("settled in %s", time.Since(begin))
	states := map[string]model.State{}
	for _, c := range snap.Clusters {
		states[c.ID] = c.State
	}
	for _, id := range []string{"cluster1", "cluster2", "cluster3"} {
		if states[id] != model.StateSynced {
			t.Errorf("%s is %s, want synced", id, states[id])
		}
	}
	if states["cluster4"] != model.StateError {
		t.Errorf("cluster4 (bad CA) is %s, want error", states["cluster4"])
	}
	if c := snap.ClusterByID("cluster4"); c == nil || !strings.Contains(strings.ToLower(c.Reason), "certificate") && !strings.Contains(c.Reason, "CA") {
		t.Errorf("cluster4 reason should name the CA problem: %+v", c)
	}
	if snap.Service("helloworld.sample.svc.cluster.local") == nil || len(snap.Services) < 38 {
		t.Errorf("demo has %d services, want about 40 with helloworld", len(snap.Services))
	}
	if len(snap.Gateways) != 2 {
		t.Errorf("gateways = %+v, want one per network", snap.Gateways)
	}
}

// TestDemoXDSServesTheRewrite: the real xdsclient, as a network1 sidecar,
// gets helloworld's own pod and network2's gateway — the lab's view.
func TestDemoXDSServesTheRewrite(t *testing.T) {
	d, ctx := startSettled(t, false, 5*time.Second)
	got := eds(t, ctx, d, xdsclient.Viewpoint{Cluster: "cluster1", Network: "network1"})
	want := []string{"10.44.0.13:5000 w=1", "192.168.60.9:15443 w=1"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("network1 EDS = %v, want %v", got, want)
	}
}

func eds(t *testing.T, ctx context.Context, d *Demo, vp xdsclient.Viewpoint) []string {
	t.Helper()
	c, err := xdsclient.New(xdsclient.Options{Viewpoint: vp, Transport: xdsclient.TransportConfig{Address: d.XDSAddress}, EDSNames: []string{hello}})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = c.Run(cctx) }()
	for ctx.Err() == nil {
		if la, ok := c.LoadAssignment(hello); ok && len(la.Endpoints) > 0 {
			var out []string
			for _, e := range la.Endpoints {
				out = append(out, e.Key()+" w="+strconv.FormatUint(uint64(e.Weight), 10))
			}
			sort.Strings(out)
			return out
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no EDS from the demo for %s", vp)
	return nil
}

// TestDemoPlantedProblems: doctor finds the planted drop, skew, failing
// remote secret, CA mismatch, missing service, duplicate gateway entries
// and broken second hop; with the gateway gone, the leak.
func TestDemoPlantedProblems(t *testing.T) {
	d := start(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	snap, err := d.Registry.WaitSettled(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ps := explain.Diagnose(snap, explain.Inputs{})
	for _, want := range [][2]string{
		{"drop", "legacy-billing"},
		{"skew", "search.shop"},
		{"remote-secret", "cluster4"},
		{"root-ca-mismatch", "but cluster cluster3 trusts root"},
		{"missing-service", "adservice.shop exists in cluster1, cluster3 but not in cluster2"},
		{"duplicate-gateway", "reviews.bookinfo port 9080: network2 gets 33 %"},
		{"ambient-scope-mismatch", "inventory.ambient.svc.cluster.local is global in some clusters but not in others"},
		// The broken second hop: the VMs' host is outside the hosts
		// cross-network-gateway exposes.
		{"second-hop-no-sni", "vm.mesh.internal:8080 in network2: other networks cannot reach it through network2's gateway 192.168.60.9:15443"},
	} {
		if !has(ps, want[0], want[1]) {
			t.Errorf("doctor misses the planted %s (%s): %+v", want[0], want[1], ps)
		}
	}
	// The flapping gateway: take network2's address away, as churn does.
	if err := d.step(ctx, 10); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if has(explain.Diagnose(d.Registry.Snapshot(), explain.Inputs{}), "leak", "no gateway is known for network2") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("no leak while network2's gateway has no address: %+v", explain.Diagnose(d.Registry.Snapshot(), explain.Inputs{}))
}

// TestDemoChurnPushes: churn reaches the xdsclient as EDS push events.
func TestDemoChurnPushes(t *testing.T) {
	d, ctx := startSettled(t, true, 10*time.Second)
	events := make(chan xdsclient.Event, 1024)
	c, err := xdsclient.New(xdsclient.Options{
		Viewpoint: xdsclient.Viewpoint{Cluster: "cluster1", Network: "network1"},
		Transport: xdsclient.TransportConfig{Address: d.XDSAddress},
		OnEvent: func(e xdsclient.Event) {
			select {
			case events <- e:
			default:
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Run(ctx) }()
	eds := 0
	for eds < 3 {
		select {
		case e := <-events:
			if e.Type == "eds" {
				eds++
			}
		case <-ctx.Done():
			t.Fatalf("only %d EDS pushes in 10s of churn", eds)
		}
	}
}

func has(ps []model.Problem, kind, text string) bool {
	for _, p := range ps {
		if string(p.Kind) == kind && strings.Contains(p.Sentence, text) {
			return true
		}
	}
	return false
}

// TestDemoForgetsRequests: a fake clientset records every request it
// serves; the demo empties those records, or a long demo session (the
// collector's health probes, the churn) would grow without bound.
func TestDemoForgetsRequests(t *testing.T) {
	defer func(d time.Duration) { forgetEvery = d }(forgetEvery)
	forgetEvery = 50 * time.Millisecond
	d, err := Start(context.Background(), Options{Seed: 1, Churn: true, Interval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	time.Sleep(time.Second)
	for id, c := range d.clusters {
		// 200 churn ticks a second, a few requests each: far more than
		// this in a second without forgetting.
		if n := len(c.client.Actions()); n > 300 {
			t.Errorf("%s holds %d recorded requests after 1 s", id, n)
		}
		if c.dyn == nil {
			continue
		}
		if n := len(c.dyn.Actions()); n > 40 { // the churn flaps an ambient Gateway: ~90 a second
			t.Errorf("%s's dynamic client holds %d recorded requests after 1 s", id, n)
		}
	}
}

// BenchmarkDemoSettle: process start to all clusters settled (building the
// simulated clusters included), the figure the UI's first screen waits on.
func BenchmarkDemoSettle(b *testing.B) {
	for b.Loop() {
		d, err := Start(context.Background(), Options{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := d.Registry.WaitSettled(context.Background()); err != nil {
			b.Fatal(err)
		}
		d.Stop()
	}
}
