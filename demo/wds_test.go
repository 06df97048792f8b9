package demo

import (
	"slices"
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/ambient"
	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// TestDemoServesWDS: a ztunnel on the demo's control plane gets the
// workload API in istiod's shapes, matching the prediction for every
// ambient service (echo's network2 pods behind one split-horizon workload
// of capacity 3, ledger's network2 pod dropped as not global); the planted
// scope mismatch is an ambient problem; and the flapping gateway's ambient
// Gateway losing its address is a push that removes the split-horizon
// workload.
func TestDemoServesWDS(t *testing.T) {
	d, ctx := startSettled(t, false, 10*time.Second)
	events := make(chan xdsclient.Event, 64)
	c, err := xdsclient.NewWDS(xdsclient.WDSOptions{Identity: xdsclient.ZtunnelIdentity{Cluster: "cluster1"},
		Transport: xdsclient.TransportConfig{Address: d.XDSAddress},
		OnEvent: func(e xdsclient.Event) {
			if e.Type == xdsclient.EventWDS {
				events <- e
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Run(ctx) }()
	explainAll := func() map[string]ambient.Explanation {
		snap := d.Registry.Snapshot()
		v := plane.NewSet(snap, nil).Of("cluster1").Ambient()
		out := map[string]ambient.Explanation{}
		for _, s := range []string{"echo", "ledger", "inventory", "orders"} {
			host := s + ".ambient.svc.cluster.local"
			actual := c.ServiceView(ambient.ServiceKey("ambient", host))
			out[s] = ambient.Explain(v, host, &actual, "")
		}
		return out
	}
	// The first push may come from a snapshot before every cluster
	// synced: wait until the control plane caught up.
	for mismatch := true; mismatch; {
		mismatch = false
		for s, e := range explainAll() {
			if e.Verdict != ambient.Match {
				mismatch = true
				if ctx.Err() != nil {
					t.Fatalf("%s: %s %+v", s, e.Verdict, e.Differences)
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	for len(events) > 0 {
		<-events
	}
	// doctor: nothing differs; a ztunnel that lost echo's split-horizon
	// workload does.
	sent := explain.SentWDS{ControlPlane: "cluster1", Service: c.ServiceView}
	if ps := explain.Diagnose(d.Registry.Snapshot(), explain.Inputs{WDS: []explain.SentWDS{sent}}); has(ps, "wds-differs", "") {
		t.Errorf("the demo's control plane sends what is predicted: %+v", ps)
	}
	sent.Service = func(key string) xdsclient.WDSServiceView {
		v := c.ServiceView(key)
		v.Workloads = slices.DeleteFunc(v.Workloads, func(w xdsclient.WDSWorkload) bool { return w.SplitHorizon() })
		return v
	}
	ps := explain.Diagnose(d.Registry.Snapshot(), explain.Inputs{WDS: []explain.SentWDS{sent}, Now: time.Now()})
	if !has(ps, "wds-differs", "echo.ambient --from ztunnel@cluster1): istiod did not send network2/SplitHorizonWorkload") {
		t.Errorf("a missing split-horizon workload is not reported: %+v", ps)
	}
	var sh ambient.Workload
	for _, w := range explainAll()["echo"].Prediction.Workloads {
		if w.Kind == ambient.KindSplitHorizon {
			sh = w
		}
	}
	if sh.Capacity != 3 || sh.Gateway != "192.168.60.10:15008" {
		t.Errorf("echo's split-horizon workload: %+v", sh)
	}
	if l := explainAll()["ledger"].Prediction; len(l.Dropped) == 0 || l.Dropped[0].Reason != ambient.DropNotGlobal {
		t.Errorf("ledger: %+v", l)
	}
	problems := func() []model.Problem {
		s := d.Registry.Snapshot()
		return ambient.Problems(s, plane.NewSet(s, nil).Ambient)
	}
	if !slices.ContainsFunc(problems(), func(p model.Problem) bool {
		return p.Kind == "ambient-scope-mismatch" && p.Service == "inventory.ambient.svc.cluster.local"
	}) {
		t.Errorf("no planted scope mismatch: %+v", problems())
	}

	if err := d.step(ctx, 10); err != nil { // network2's gateways lose their addresses
		t.Fatal(err)
	}
	for {
		select {
		case e := <-events:
			for _, a := range e.Addresses {
				if a.Name == sh.UID && a.Change == xdsclient.AddressRemoved {
					if e := explainAll()["echo"]; e.Verdict != ambient.Match {
						t.Errorf("echo without network2's gateway: %+v", e.Differences)
					}
					return
				}
			}
		case <-ctx.Done():
			t.Fatal("no push removing echo's split-horizon workload")
		}
	}
}
