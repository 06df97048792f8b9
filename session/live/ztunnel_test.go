package live

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/meshscope/meshscope/xdsclient"
)

const echoKey = "ambient/echo.ambient.svc.cluster.local"

func splitHorizons(v xdsclient.WDSServiceView) int {
	n := 0
	for _, w := range v.Workloads {
		if w.SplitHorizon() {
			n++
		}
	}
	return n
}

// TestFeedZtunnel: the demo mesh uses ambient mode, so the feed runs one
// impersonated ztunnel per control plane next to the sidecars: its status
// is in Status (named ztunnel@CP), its pushes in Events, and WDS hands out
// what it holds for a service.
func TestFeedZtunnel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	s, _ := openDemo(t, ctx, Options{})
	f := s.Feed(ctx, xdsclient.ModeDelta)
	defer f.Close()
	if _, ok := f.WDS("cluster9", echoKey); ok {
		t.Error("WDS for a control plane without a ztunnel")
	}
	waitFor(t, ctx, "echo's WDS", func() bool {
		v, ok := f.WDS("cluster1", echoKey)
		return ok && v.Service != nil && splitHorizons(v) == 1
	})
	if zs := f.Ztunnels(); !slices.Equal(zs, []string{"cluster1"}) {
		t.Errorf("ztunnels %v", zs)
	}
	st := f.Status()
	if z := st[len(st)-1]; z.Viewpoint != "ztunnel@cluster1" || z.ControlPlane != "cluster1" || z.State != xdsclient.StateConnected || z.Stale {
		t.Errorf("ztunnel status %+v", z)
	}
	for e := range f.Events() {
		if e.Type == xdsclient.EventWDS && e.Viewpoint == "ztunnel@cluster1" && len(e.Addresses) > 0 {
			break
		}
	}
}

// TestFetchWDS: a one-shot ztunnel per control plane holds istiod's first
// full response; a control plane that does not answer says why.
func TestFetchWDS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	s, snap := openDemo(t, ctx, Options{})
	if cps := s.ControlPlaneIDs(snap); !slices.Equal(cps, []string{"cluster1"}) {
		t.Fatalf("control planes %v", cps)
	}
	res := s.FetchWDS(ctx, []string{"cluster1"}, 5*time.Second)
	if len(res) != 1 || res[0].Client == nil || res[0].Why != "" {
		t.Fatalf("fetch: %+v", res)
	}
	if v := res[0].Client.ServiceView(echoKey); v.Service == nil || splitHorizons(v) != 1 {
		t.Errorf("echo: %+v", v)
	}
	s.controlPlanes = []Target{{Cluster: "cluster1", Address: "127.0.0.1:1"}}
	res = s.FetchWDS(ctx, []string{"cluster1"}, 300*time.Millisecond)
	if res[0].Client != nil || res[0].Why == "" {
		t.Errorf("unreachable: %+v", res)
	}
}

// TestWatchZtunnel: watch streams WDS pushes of a ztunnel.
func TestWatchZtunnel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	s, _ := openDemo(t, ctx, Options{})
	wctx, stop := context.WithCancel(ctx)
	got := make(chan xdsclient.Event, 16)
	go func() {
		_ = Watch(wctx, WatchOptions{Ztunnels: []string{""}, ControlPlanes: s.ControlPlanes(), OnEvent: func(e xdsclient.Event) {
			if e.Type == xdsclient.EventWDS {
				select {
				case got <- e:
				default:
				}
			}
		}})
	}()
	defer stop()
	select {
	case e := <-got:
		if e.ControlPlane != "cluster1" || e.Viewpoint != "ztunnel@cluster1" || len(e.Added) == 0 {
			t.Errorf("first push %+v", e)
		}
	case <-ctx.Done():
		t.Fatal("no WDS push")
	}
}
