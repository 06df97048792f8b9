package main

import (
	"context"
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/fleet"
	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/istiod"
)

// TestJoinFleetSnapshotBeforeReads: a pod that the collector sees while
// the syncz reads run (it started, and connected after its istiod was
// read) is not taken for a pod that no istiod lists — the fleet joins the
// snapshot taken before the reads, as the UI does. The snapshot after the
// reads would make it DISCONNECTED.
func TestJoinFleetSnapshotBeforeReads(t *testing.T) {
	before := meshtest.LabMultiPrimary(time.Now())
	inj := &model.InjectedIdentity{Kind: model.ProxySidecar, Network: "network1", ClusterID: "cluster1"}
	old := model.ProxyPod{Cluster: "cluster1", Namespace: "sample", Name: "old", Kind: model.ProxySidecar, Network: "network1", Ready: true, Injected: inj}
	before.Proxies = []model.ProxyPod{old}
	after := *before
	after.Proxies = []model.ProxyPod{old, {Cluster: "cluster1", Namespace: "sample", Name: "new", Kind: model.ProxySidecar, Network: "network1", Ready: true, Injected: inj}}

	current := before
	newest := func() *model.Snapshot { return current }
	syncz := func(_ context.Context, snap *model.Snapshot) []fleet.Read {
		current = &after // the new pod appears while istiod is read
		var reads []fleet.Read
		for _, cp := range snap.ControlPlanes() {
			r := fleet.Read{ControlPlane: cp, Address: "127.0.0.1:1"}
			if cp == "cluster1" {
				r.Statuses = []istiod.SyncStatus{{Proxy: "old.sample", ProxyType: "sidecar", ClusterID: "cluster1", IstioVersion: "1.31.0", ClusterSent: "n1", ClusterAcked: "n1"}}
			}
			reads = append(reads, r)
		}
		return reads
	}
	f, warnings, unread := joinFleet(context.Background(), newest, syncz)
	if !f.Complete || len(warnings) > 0 || len(unread) > 0 {
		t.Fatalf("complete %v, warnings %v, unread %v", f.Complete, warnings, unread)
	}
	for _, p := range f.Proxies {
		if p.Name == "new" {
			t.Errorf("the pod that appeared during the reads is in the fleet: %s", p.State)
		}
		if p.Name == "old" && (p.State != fleet.Synced || p.ControlPlane != "cluster1") {
			t.Errorf("old: %s on %q", p.State, p.ControlPlane)
		}
	}
}
