package fleet

import (
	"testing"
	"time"

	"github.com/meshscope/meshscope/model"
)

func TestBuild(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	sent := now.Add(-time.Minute)
	inj := func(network, cluster string) *model.InjectedIdentity {
		return &model.InjectedIdentity{Kind: model.ProxySidecar, Network: network, ClusterID: cluster, Version: "1.28.0"}
	}
	snap := &model.Snapshot{
		Clusters: []model.Cluster{
			{ID: "c1", Istiods: []model.IstiodPod{{Name: "istiod-1", Version: "1.29.1", Ready: true}}},
			{ID: "c2", Istiods: []model.IstiodPod{{Name: "istiod-2", Version: "1.29.1", Ready: true}}},
		},
		Proxies: []model.ProxyPod{
			{Cluster: "c1", Namespace: "a", Name: "synced", Kind: model.ProxySidecar, Network: "n1", Injected: inj("n1", "c1")},
			{Cluster: "c1", Namespace: "a", Name: "stale", Kind: model.ProxySidecar, Network: "n1", Injected: inj("n1", "c1")},
			{Cluster: "c1", Namespace: "a", Name: "nack", Kind: model.ProxySidecar, Network: "n1", Injected: inj("n1", "c1")},
			{Cluster: "c1", Namespace: "a", Name: "orphan", Kind: model.ProxySidecar, Network: "n1", Injected: inj("n1", "c1")},
			{Cluster: "c2", Namespace: "a", Name: "drift", Kind: model.ProxySidecar, Network: "n2", Injected: inj("", "c1")},
			{Cluster: "c2", Namespace: "istio-system", Name: "ztunnel-x", Node: "node-a", Kind: model.ProxyZtunnel},
			{Cluster: "c2", Namespace: "b", Name: "amb", Node: "node-a", Kind: model.ProxyAmbient},
			{Cluster: "c2", Namespace: "b", Name: "amb-elsewhere", Node: "node-z", Kind: model.ProxyAmbient},
		},
	}
	st := func(proxy, cluster, version string, res map[string]model.ResourceStatus) model.SyncStatus {
		return model.SyncStatus{Proxy: proxy, ProxyType: "sidecar", ClusterID: cluster, IstioVersion: version, Resources: res}
	}
	reads := []Read{
		{ControlPlane: "c1", Statuses: []model.SyncStatus{
			st("synced.a", "c1", "1.28.0", map[string]model.ResourceStatus{model.TypeCDS: {Sent: "x", Acked: "x"}, model.TypeEDS: {}}),
			st("stale.a", "c1", "1.28.0", map[string]model.ResourceStatus{model.TypeCDS: {Sent: "y", Acked: "x", SentTime: sent}}),
			st("nack.a", "c1", "1.26.0", map[string]model.ResourceStatus{model.TypeCDS: {Sent: "y", Acked: "x", LastError: "bad", SentTime: sent}}),
			st("synced.a", "c1", "1.31.0-meshscope", map[string]model.ResourceStatus{model.TypeCDS: {Sent: "x", Acked: "x"}}),
		}},
		{ControlPlane: "c2", Statuses: []model.SyncStatus{
			st("drift.a", "c1", "1.28.0", map[string]model.ResourceStatus{model.TypeCDS: {Sent: "x", Acked: "x"}}),
			{Proxy: "ztunnel-x.istio-system", ProxyType: "ztunnel", ClusterID: "c2", ClusterSent: "z", ClusterAcked: "z"},
		}},
	}
	f := Build(snap, reads, now)
	if !f.Complete {
		t.Fatalf("fleet incomplete: missing %v", f.Missing)
	}
	byKey := map[string]Proxy{}
	for _, p := range f.Proxies {
		k := p.Namespace + "/" + p.Name
		if p.Probe {
			k += "(probe)"
		}
		byKey[k] = p
	}
	cases := []struct {
		key   string
		state State
		cp    string
		drift int
	}{
		{"a/synced", Synced, "c1", 0},
		{"a/stale", Stale, "c1", 0},
		{"a/nack", Rejected, "c1", 0},
		{"a/orphan", Disconnected, "", 0},
		{"a/drift", Synced, "c2", 2},
		{"a/synced(probe)", Synced, "c1", 0},
		{"b/amb", Synced, "c2", 0},
		{"b/amb-elsewhere", Unknown, "", 0},
	}
	for _, c := range cases {
		p, ok := byKey[c.key]
		if !ok {
			t.Errorf("%s: missing from %+v", c.key, byKey)
			continue
		}
		if p.State != c.state || p.ControlPlane != c.cp || len(p.Drift) != c.drift {
			t.Errorf("%s: state %s on %q with drift %+v, want %s on %q with %d", c.key, p.State, p.ControlPlane, p.Drift, c.state, c.cp, c.drift)
		}
	}
	if p := byKey["a/synced(probe)"]; p.Pod != nil {
		t.Errorf("a probe took a pod's connection: %+v", p.Pod)
	}
	if p := byKey["a/stale"]; p.StaleFor != time.Minute {
		t.Errorf("stale for %s, want 1m", p.StaleFor)
	}
	if p := byKey["a/synced"]; p.IstiodVersion != "1.29.1" || p.Version != "1.28.0" {
		t.Errorf("versions %q / %q", p.Version, p.IstiodVersion)
	}

	// One control plane unread: nobody is disconnected, only unknown.
	f = Build(snap, reads[:1], now)
	if f.Complete || len(f.Missing) != 1 || f.Missing[0] != "c2" {
		t.Fatalf("complete=%v missing=%v, want c2 missing", f.Complete, f.Missing)
	}
	for _, p := range f.Proxies {
		if p.State == Disconnected {
			t.Errorf("%s disconnected although c2 was not read", p.ID)
		}
	}
}

func TestTexts(t *testing.T) {
	inj := &model.InjectedIdentity{Kind: model.ProxySidecar}
	cases := []struct {
		p                             Proxy
		state, cds, version, identity string
	}{
		{Proxy{State: Synced, Types: []TypeSync{{Type: "CDS", State: Synced}}, Version: "1.28.0", IstiodVersion: "1.29.1", Pod: &model.ProxyPod{Injected: inj}},
			"SYNCED", "SYNCED", "1.28.0 / 1.29.1", "ok"},
		{Proxy{State: Stale, StaleFor: 61500 * time.Millisecond, Version: "1.28.0"}, "STALE 1m2s", "-", "1.28.0", "-"},
		{Proxy{State: Disconnected, StaleFor: time.Minute, Drift: []Drift{{Field: "network", Injected: "", Derived: "network2"}}},
			"DISCONNECTED", "-", "-", `network ""≠network2`},
	}
	for _, c := range cases {
		if got := [4]string{c.p.StateText(), c.p.TypeText("CDS"), c.p.VersionText(), c.p.IdentityText()}; got != [4]string{c.state, c.cds, c.version, c.identity} {
			t.Errorf("%+v: got %q", c.p, got)
		}
	}
}

// TestBuildRevisions: in a canary upgrade a proxy's istiod is its
// revision's (its version for the skew), and a proxy of the revision whose
// syncz was not read is not called disconnected.
func TestBuildRevisions(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	inj := func(rev, version string) *model.InjectedIdentity {
		return &model.InjectedIdentity{Kind: model.ProxySidecar, Revision: rev, Version: version}
	}
	snap := &model.Snapshot{
		Clusters: []model.Cluster{{ID: "c1", PredictedRevision: "1-27", Istiods: []model.IstiodPod{
			{Name: "istiod-1-27", Revision: "1-27", Version: "1.27.3", Ready: true},
			{Name: "istiod-1-28", Revision: "1-28", Version: "1.28.1", Ready: true},
		}}},
		Proxies: []model.ProxyPod{
			{Cluster: "c1", Namespace: "a", Name: "old", Kind: model.ProxySidecar, Injected: inj("1-27", "1.27.3")},
			{Cluster: "c1", Namespace: "a", Name: "old-gone", Kind: model.ProxySidecar, Injected: inj("1-27", "1.27.3")},
			{Cluster: "c1", Namespace: "a", Name: "new", Kind: model.ProxySidecar, Injected: inj("1-28", "1.28.1")},
		},
	}
	// The syncz read is 1-27's istiod's: it lists "old" only.
	reads := []Read{{ControlPlane: "c1", Statuses: []model.SyncStatus{
		{Proxy: "old.a", ProxyType: "sidecar", ClusterID: "c1", IstioVersion: "1.27.3",
			Resources: map[string]model.ResourceStatus{model.TypeCDS: {Sent: "x", Acked: "x"}}},
	}}}
	got := map[string]Proxy{}
	for _, p := range Build(snap, reads, now).Proxies {
		got[p.Name] = p
	}
	if p := got["old"]; p.State != Synced || p.IstiodVersion != "1.27.3" {
		t.Errorf("old: %s against istiod %s, want synced against 1.27.3", p.State, p.IstiodVersion)
	}
	if p := got["old-gone"]; p.State != Disconnected {
		t.Errorf("old-gone: %s, want disconnected (its revision's syncz was read)", p.State)
	}
	if p := got["new"]; p.State != Unknown {
		t.Errorf("new: %s, want unknown (1-28's syncz was not read)", p.State)
	}
	// 1-28 is a control plane of its own (c1@1-28) whose syncz is read
	// too: "new" is listed nowhere, so disconnected.
	snap.RevisionPlanes = []model.RevisionPlane{{Cluster: "c1", Revision: "1-28"}}
	reads = append(reads, Read{ControlPlane: "c1@1-28"})
	for _, p := range Build(snap, reads, now).Proxies {
		if p.Name == "new" && p.State != Disconnected {
			t.Errorf("new with 1-28's syncz read: %s, want disconnected", p.State)
		}
	}
}
