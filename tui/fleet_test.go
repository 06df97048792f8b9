package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/fleet"
	"github.com/meshscope/meshscope/model"
)

// fleetFeed is the golden tests' feed with istiod's /debug/syncz.
type fleetFeed struct {
	*fakeFeed
	reads []fleet.Read
	// pollSnap is the snapshot the reads were taken with (nil: the latest).
	pollSnap *model.Snapshot
}

func (f *fleetFeed) Syncz() ([]fleet.Read, *model.Snapshot) { return f.reads, f.pollSnap }

// synced is a type istiod sent and the proxy acknowledged.
func synced(at time.Time) model.ResourceStatus {
	return model.ResourceStatus{Sent: "n1", Acked: "n1", SentTime: at}
}

// fleetSnapshot is the golden mesh with the pods that run a proxy: two
// helloworld pods in sync (one of them injected before cluster2 had a
// network: drift), one STALE for 45s, one that NACKs, legacy-0 connected
// nowhere (DISCONNECTED), and one of meshscope's probes.
func fleetSnapshot() (*model.Snapshot, []fleet.Read) {
	s := testSnapshot()
	s.Clusters[0].Istiods[0].Version = "1.29.1"
	injected := func(network, cluster string) *model.InjectedIdentity {
		return &model.InjectedIdentity{Kind: model.ProxySidecar, Network: network, ClusterID: cluster, Image: "proxyv2:1.29.1", Version: "1.29.1"}
	}
	pod := func(cluster, network, ns, name string, in *model.InjectedIdentity) model.ProxyPod {
		return model.ProxyPod{Cluster: cluster, Namespace: ns, Name: name, Node: cluster + "-node", Kind: model.ProxySidecar, Network: network, Ready: true, Injected: in}
	}
	s.Proxies = []model.ProxyPod{
		pod("cluster1", "network1", "legacy", "legacy-0", injected("network1", "cluster1")),
		pod("cluster1", "network1", "münchen", "strasse-0", injected("network1", "cluster1")),
		pod("cluster1", "network1", "sample", "helloworld-v1-7c8d9", injected("network1", "cluster1")),
		pod("cluster2", "network2", "sample", "helloworld-v2-5f6b8", injected("network2", "cluster2")),
		pod("cluster2", "network2", "sample", "helloworld-v2-9a1c2", injected("", "cluster2")),
	}
	at := ago(2 * time.Minute)
	all := func() map[string]model.ResourceStatus {
		return map[string]model.ResourceStatus{model.TypeCDS: synced(at), model.TypeLDS: synced(at), model.TypeEDS: synced(at), model.TypeRDS: synced(at)}
	}
	stale := all()
	stale[model.TypeEDS] = model.ResourceStatus{Sent: "n2", Acked: "n1", SentTime: ago(45 * time.Second)}
	nack := all()
	nack[model.TypeCDS] = model.ResourceStatus{Sent: "n2", Acked: "n1", SentTime: ago(20 * time.Second), LastError: "cluster outbound|5000||straße: invalid name"}
	reads := []fleet.Read{{ControlPlane: "cluster1", Address: "127.0.0.1:8080", Statuses: []model.SyncStatus{
		{Proxy: "helloworld-v1-7c8d9.sample", ProxyType: "sidecar", ClusterID: "cluster1", IstioVersion: "1.29.1", Resources: all()},
		{Proxy: "helloworld-v2-5f6b8.sample", ProxyType: "sidecar", ClusterID: "cluster2", IstioVersion: "1.29.1", Resources: stale},
		{Proxy: "helloworld-v2-9a1c2.sample", ProxyType: "sidecar", ClusterID: "cluster2", IstioVersion: "1.29.1", Resources: all()},
		{Proxy: "strasse-0.münchen", ProxyType: "sidecar", ClusterID: "cluster1", IstioVersion: "1.29.1", Resources: nack},
		{Proxy: "meshscope-network1.istio-system", ProxyType: "sidecar", ClusterID: "cluster1", IstioVersion: "1.29.1-meshscope", Resources: all()},
	}}}
	return s, reads
}

// fleetModel is a model at w×h over fleetSnapshot with its fleet built
// the way the program builds it (requestFleet's background command).
func fleetModel(t *testing.T, w, h int) *Model {
	snap, reads := fleetSnapshot()
	feed := &fleetFeed{fakeFeed: testFeed(snap), reads: reads}
	m := newTestModel(t, "default", w, h, snap, feed)
	cmd := m.requestFleet()
	if cmd == nil {
		t.Fatal("no fleet build requested")
	}
	m.Update(cmd())
	if m.requestFleet() != nil {
		t.Fatal("the fleet is built again with nothing changed")
	}
	return m
}

// enter on a proxy opens its cluster.
func TestProxiesEnterOpensCluster(t *testing.T) {
	m := fleetModel(t, 120, 40)
	m.push(viewProxies)
	press(m, "G", "enter")
	if m.currentID() != viewClusters || m.clusters.cl.key != "cluster2" {
		t.Fatalf("enter on the last proxy (cluster2): view %d, cluster %q", m.currentID(), m.clusters.cl.key)
	}
}

// The cursor stays on its proxy when a new poll reorders the rows.
func TestProxiesSelectByKey(t *testing.T) {
	m := fleetModel(t, 120, 40)
	m.push(viewProxies)
	press(m, "down", "down")
	id, _ := m.proxies.list.selected()
	want := m.proxies.fx.rows[id].key
	ff := m.feed.(*fleetFeed)
	st := ff.reads[0].Statuses
	ff.reads = []fleet.Read{{ControlPlane: "cluster1", Address: "127.0.0.1:8080", Statuses: append([]model.SyncStatus(nil), st[2:]...)}}
	m.Update(m.requestFleet()())
	id, _ = m.proxies.list.selected()
	if got := m.proxies.fx.rows[id].key; got != want {
		t.Fatalf("cursor moved from %s to %s", want, got)
	}
}

// A feed without syncz: every pod with a proxy is UNKNOWN, and the view
// says why.
func TestProxiesNoSyncz(t *testing.T) {
	snap, _ := fleetSnapshot()
	m := newTestModel(t, "default", 120, 40, snap, testFeed(snap))
	m.Update(m.requestFleet()())
	m.push(viewProxies)
	out := plain(m)
	if !strings.Contains(out, "UNKNOWN") || !strings.Contains(out, "reads no istiod /debug/syncz") {
		t.Fatalf("no syncz is not said:\n%s", out)
	}
}

// Every size from 80×24 up keeps an exact frame, and the map scrolls.
func TestFleetFrameSizes(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {81, 25}, {100, 30}, {200, 60}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			m := fleetModel(t, sz[0], sz[1])
			for _, id := range []viewID{viewProxies, viewMap} {
				m.push(id)
				checkSize(t, m.View().Content, sz[0], sz[1])
				press(m, "G")
				checkSize(t, m.View().Content, sz[0], sz[1])
			}
		})
	}
}

// istiodFleetFeed also serves istiod's own view: doctor's diagnosis then
// checks the fleet, as `meshscope doctor` does.
type istiodFleetFeed struct{ *fleetFeed }

func (istiodFleetFeed) Istiod() []model.IstiodView {
	return []model.IstiodView{{ControlPlane: "cluster1",
		Clusters: []model.IstiodCluster{{ID: "cluster1", SyncStatus: "synced"}, {ID: "cluster2", SecretName: "istio-system/istio-remote-secret-cluster2", SyncStatus: "synced"}},
		Gateways: []model.IstiodGateway{{Network: "network2", Cluster: "cluster2", Addr: "192.168.60.9", Port: 15443}}}}
}

func TestProblemsAndMapHaveTheFleet(t *testing.T) {
	snap, reads := fleetSnapshot()
	feed := istiodFleetFeed{&fleetFeed{fakeFeed: testFeed(snap), reads: reads}}
	m := newTestModel(t, "default", 120, 50, snap, feed)
	m.Update(m.requestFleet()())
	found := map[string]bool{}
	for _, p := range m.ix.problems {
		found[string(p.Kind)+" "+p.Cluster] = true
	}
	for _, want := range []string{"proxy-disconnected cluster1", "proxy-stale cluster1", "proxy-stale cluster2", "proxy-identity-drift cluster2"} {
		if !found[want] {
			t.Errorf("problems lack %s (all: %v)", want, found)
		}
	}
	m.push(viewMap)
	out := plain(m)
	for _, want := range []string{"✗ proxy-identity-drift", "✗ proxy-disconnected"} {
		if !strings.Contains(out, want) {
			t.Errorf("map lacks %q:\n%s", want, out)
		}
	}
}

// In a terminal below 80×24 the proxies view and the map give way to the
// too-small screen, and come back whole when the terminal grows.
func TestFleetTinyTerminal(t *testing.T) {
	m := fleetModel(t, 120, 40)
	for _, id := range []viewID{viewProxies, viewMap} {
		m.push(id)
		m.Update(windowSize(60, 15))
		out := plain(m)
		checkSize(t, out, 60, 15)
		if !strings.Contains(out, "terminal too small") {
			t.Fatalf("view %d at 60×15:\n%s", id, out)
		}
		press(m, "j", "G", "/")
		m.Update(windowSize(80, 24))
		checkSize(t, m.View().Content, 80, 24)
		m.Update(windowSize(120, 40))
	}
}

// A pod that started after the last syncz poll is not DISCONNECTED: the
// fleet joins the reads with the snapshot of the poll.
func TestFleetJoinsThePollsSnapshot(t *testing.T) {
	snap, reads := fleetSnapshot()
	before := *snap
	before.Proxies = snap.Proxies[1:] // legacy-0 started after the poll
	feed := &fleetFeed{fakeFeed: testFeed(snap), reads: reads, pollSnap: &before}
	m := newTestModel(t, "default", 120, 40, snap, feed)
	m.Update(m.requestFleet()())
	for _, r := range m.fleet.fx.rows {
		if r.p.State == fleet.Disconnected {
			t.Errorf("%s is DISCONNECTED: it started after the poll", r.p.ID)
		}
	}
}

// The :proxies view takes the fleet the diagnosis joined for the same
// syncz poll instead of joining it again; a new poll is joined anew.
func TestFleetReusesTheDiagnosisJoin(t *testing.T) {
	snap, reads := fleetSnapshot()
	ff := &fleetFeed{fakeFeed: testFeed(snap), reads: reads}
	m := newTestModel(t, "default", 120, 40, snap, istiodFleetFeed{ff})
	m.Update(m.requestFleet()())
	if m.ix.fleet == nil || len(m.ix.fleet.Proxies) == 0 {
		t.Fatal("the diagnosis joined no fleet although istiod's views are read")
	}
	if &m.fleet.fx.f.Proxies[0] != &m.ix.fleet.Proxies[0] {
		t.Fatal("the proxies view joined again the poll the diagnosis had joined")
	}
	ff.reads = append([]fleet.Read(nil), ff.reads...)
	m.Update(m.requestFleet()())
	if &m.fleet.fx.f.Proxies[0] == &m.ix.fleet.Proxies[0] {
		t.Fatal("a new poll took the diagnosis's fleet of the old one")
	}
}
