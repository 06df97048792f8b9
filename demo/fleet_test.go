package demo

import (
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/fleet"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/istiod"
)

// The demo's istiod debug endpoint: syncz lists every proxy of the clusters
// its control plane reads, the planted ones as planted (one STALE, one
// drifted pod, one pod no istiod lists), and clusterz and networkz agree
// with what meshscope reads (no istiod-disagrees).
func TestDemoFleet(t *testing.T) {
	d, ctx := startSettled(t, false, 10*time.Second)
	if err := d.WaitServed(ctx, d.Registry.Snapshot().Version); err != nil {
		t.Fatal(err)
	}
	snap := d.Registry.Snapshot()
	st, err := istiod.FetchSyncz(ctx, d.DebugAddress)
	if err != nil {
		t.Fatal(err)
	}
	f := fleet.Build(snap, []fleet.Read{{ControlPlane: d.ControlPlane, Address: d.DebugAddress, Statuses: st}}, time.Now())
	if !f.Complete {
		t.Fatalf("fleet incomplete: missing %v", f.Missing)
	}
	count := map[fleet.State]int{}
	var drifted []string
	kinds := map[model.ProxyKind]int{}
	for _, p := range f.Proxies {
		count[p.State]++
		kinds[p.Kind]++
		if len(p.Drift) > 0 {
			drifted = append(drifted, p.Cluster+"/"+p.ID)
		}
		if p.Version != "" && p.IstiodVersion != "" && p.Version != p.IstiodVersion {
			t.Errorf("%s runs %s against istiod %s", p.ID, p.Version, p.IstiodVersion)
		}
	}
	if count[fleet.Stale] != 1 || count[fleet.Disconnected] != 1 || len(drifted) != 1 {
		t.Errorf("states %v, drifted %v: want one STALE, one DISCONNECTED, one drifted", count, drifted)
	}
	if count[fleet.Synced] < 90 || count[fleet.Unknown] != 0 || count[fleet.Rejected] != 0 || count[fleet.NotSent] != 0 {
		t.Errorf("states %v: want the rest SYNCED", count)
	}
	if kinds["ztunnel"] != 3 || kinds["ambient"] == 0 || kinds["sidecar"] < 80 {
		t.Errorf("kinds %v: want a ztunnel in each readable cluster, ambient pods, sidecars", kinds)
	}
	ps := explain.Diagnose(snap, explain.Inputs{Now: time.Now(), Fleet: &f})
	for _, want := range []string{"proxy-stale", "proxy-disconnected", "proxy-identity-drift"} {
		found := false
		for _, p := range ps {
			found = found || string(p.Kind) == want
		}
		if !found {
			t.Errorf("doctor does not report %s", want)
		}
	}
	v, err := istiod.FetchView(ctx, d.ControlPlane, d.DebugAddress)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Clusters) != 4 || len(v.Gateways) == 0 {
		t.Errorf("clusterz %v, networkz %v", v.Clusters, v.Gateways)
	}
	if dis := explain.IstiodDisagreements(snap, v); len(dis) != 0 {
		t.Errorf("the demo's istiod disagrees with meshscope: %v", dis)
	}
}
