package tui

import (
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/charmbracelet/x/ansi"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// entryByID finds a timeline entry by its id.
func entryByID(v *eventsView, id uint64) entry {
	for _, e := range v.all {
		if e.id == id {
			return e
		}
	}
	return entry{}
}

// TestPushLinkedToKubeChange: an EDS push for helloworld is linked to the
// kube change of helloworld just before it, with the delay; an older or
// unrelated change is not.
func TestPushLinkedToKubeChange(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	host := "helloworld.sample.svc.cluster.local"
	kube := model.KubeChange{Time: t0, Cluster: "cluster2", Service: host, Added: []string{"10.144.0.20", "10.144.0.21"}}
	other := model.KubeChange{Time: t0.Add(50 * time.Millisecond), Cluster: "cluster1", Service: "sleep.sample.svc.cluster.local", Added: []string{"10.44.0.30"}}
	push := xdsclient.Event{Seq: 7, Time: t0.Add(125 * time.Millisecond), ControlPlane: "cluster1", Viewpoint: "cluster1/network1", Type: "eds",
		Changed:   []string{"outbound|5000||" + host},
		Endpoints: []xdsclient.EndpointChange{{Cluster: "outbound|5000||" + host, Change: xdsclient.EndpointWeight, Address: "192.168.60.9", Port: 15443, Weight: 3, OldWeight: 1}}}
	late := push
	late.Seq, late.Time = 8, t0.Add(time.Minute)

	m := newTestModel(t, "mono", 120, 40, nil, nil)
	v := m.events
	v.add(m.vc(), []entry{{kube: &kube}, {kube: &other}, {xds: &push}, {xds: &late}})
	c, ok := v.causes[3]
	if entryByID(v, 3).xds.Seq != push.Seq || !ok || c.short != "← cluster2 +125ms" || !strings.Contains(c.long, "helloworld.sample: +10.144.0.20 +10.144.0.21") {
		t.Errorf("push cause = %+v, %v; want the cluster2 change 125 ms before", c, ok)
	}
	if _, ok := v.causes[4]; ok {
		t.Error("a push a minute later should not be linked")
	}
	m.push(viewEvents)
	press(m, "G") // the oldest: the kube change
	out := plain(m)
	row := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, ">") {
			row = l
		}
	}
	// The kube change's own columns: its cluster as the source, no
	// viewpoint, version, resources or size.
	if f := strings.Fields(row); len(f) < 8 || f[1] != "cluster2" || f[2] != "-" || f[3] != "kube" || f[4] != "-" || f[5] != "-" || f[6] != "-" ||
		!strings.Contains(row, "helloworld.sample: +10.144") {
		t.Errorf("kube row %q", row)
	}
	if !strings.Contains(out, "kube · cluster cluster2 · "+host) || !strings.Contains(out, "endpoints added: 10.144.0.20, 10.144.0.21") {
		t.Errorf("kube detail:\n%s", out)
	}
	press(m, "k", "k") // the linked push
	if out := plain(m); !strings.Contains(out, "← cluster2 +125ms · endpoi") || !strings.Contains(out, "caused by the kube change ← cluster2 +125ms") {
		t.Errorf("push row and detail do not name the cause:\n%s", out)
	}
}

// TestPushLinkedToDNSAnswer: a gateway DNS name's new answer is a "dns"
// entry; an EDS push at the name's addresses is linked to it whether it
// came after meshscope saw the answer or before (istiod asked DNS again
// first, up to a TTL earlier: the delay is negative); a push at other
// addresses is not, nor one long before. /NAME lists the answer and its
// pushes, and the detail says the DNS answer caused the push.
func TestPushLinkedToDNSAnswer(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	eds := func(seq uint64, at time.Duration, addr string) *xdsclient.Event {
		return &xdsclient.Event{Seq: seq, Time: t0.Add(at), ControlPlane: "cluster1", Viewpoint: "cluster1/network1", Type: "eds",
			Changed:   []string{"outbound|5000||helloworld.sample.svc.cluster.local"},
			Endpoints: []xdsclient.EndpointChange{{Cluster: "outbound|5000||helloworld.sample.svc.cluster.local", Change: xdsclient.EndpointAdded, Address: addr, Port: 15443, Weight: 1}}}
	}
	name := model.KubeChange{Time: t0, Cluster: "cluster2", Network: "network2", GatewayName: "gw2.example.test", NameChange: model.NameAnswer,
		GatewayAddresses: []string{"192.168.60.23"}, GatewayPrevious: []string{"192.168.60.21", "192.168.60.22"}}
	// The first push of a stream adds every endpoint, the name's old
	// addresses too: no cause.
	first := eds(5, -20*time.Second, "192.168.60.21")
	// The name stops resolving; istiod removes 192.168.60.23 29 s after
	// the first answer, a second before meshscope sees the second one.
	gone := eds(6, 29*time.Second, "192.168.60.23")
	gone.Endpoints[0].Change = xdsclient.EndpointRemoved
	none := model.KubeChange{Time: t0.Add(30 * time.Second), Cluster: "cluster2", Network: "network2", GatewayName: "gw2.example.test", NameChange: model.NameAnswer,
		GatewayPrevious: []string{"192.168.60.23"}}
	m := newTestModel(t, "mono", 140, 40, nil, nil)
	v := m.events
	v.add(m.vc(), []entry{
		{xds: eds(1, -2*time.Minute, "192.168.60.23")}, // id 1: too early
		{xds: first}, // id 2: a stream's first push
		{xds: eds(2, -12*time.Second, "192.168.60.23")}, // id 3: istiod first
		{xds: eds(3, -5*time.Second, "192.168.60.50")},  // id 4: another gateway
		{kube: &name}, // id 5
		{xds: eds(4, 300*time.Millisecond, "192.168.60.23")}, // id 6: after
		{xds: gone},   // id 7: the next answer's
		{kube: &none}, // id 8
	})
	want := map[uint64]string{3: "← gw2.example.test -12000ms", 6: "← gw2.example.test +300ms", 7: "← gw2.example.test -1000ms"}
	for id := uint64(1); id <= 8; id++ {
		c, ok := v.causes[id]
		if c.short != want[id] || ok != (want[id] != "") {
			t.Errorf("entry %d: cause %+v, want %q", id, c, want[id])
		}
	}
	if c := v.causes[3]; !strings.Contains(c.long, "gateway name gw2.example.test of network2: 192.168.60.23 (was 192.168.60.21, 192.168.60.22)") {
		t.Errorf("long cause %q", c.long)
	}
	if c := v.causes[7]; !strings.Contains(c.long, "gateway name gw2.example.test of network2: does not resolve (was 192.168.60.23)") {
		t.Errorf("long cause %q", c.long)
	}
	v.setFilter(m.vc(), "gw2.example.test")
	if n := len(v.list.rows); n != 5 {
		t.Errorf("/gw2.example.test: %d entries, want the two answers and their three pushes", n)
	}
	m.push(viewEvents)
	out := plain(m)
	if !strings.Contains(out, " dns ") || !strings.Contains(out, "dns        -                -       - gw2.example.test: does not resolve (") ||
		!strings.Contains(out, "gateway name gw2.example.test of network2: does not resolve (was 192.168.60.23)") {
		t.Errorf("the dns row:\n%s", out)
	}
	press(m, "G") // the oldest shown: istiod's push before meshscope saw the first answer
	if out := plain(m); !strings.Contains(out, "caused by the DNS answer ← gw2.example.test -12000ms") {
		t.Errorf("push detail:\n%s", out)
	}
}

// TestKubeChangesFromSnapshots: the UI derives kube changes from successive
// snapshots off the update loop, once a snapshot settled (the initial sync
// is not news), and puts them on the timeline.
func TestKubeChangesFromSnapshots(t *testing.T) {
	first := testSnapshot()
	first.Clusters[0].State = model.StateSyncing // not settled
	m := newTestModel(t, "mono", 120, 40, first, nil)
	derive := func(next *model.Snapshot) {
		t.Helper()
		m.Update(snapshotMsg{next})
		if !m.deriving {
			t.Fatal("no derivation started")
		}
		msg := deriveCmd(m.ix.snap, next, nil, nil)()
		m.Update(msg)
	}
	settled := testSnapshot()
	settled.Version = 8
	derive(settled)
	if n := len(m.events.all); n != 0 {
		t.Fatalf("%d timeline entries from the initial sync", n)
	}
	next := testSnapshot()
	next.Version = 9
	hw := next.Service(helloHost)
	hw.Clusters["cluster2"] = &model.ServiceInCluster{Cluster: "cluster2", Ports: httpPort,
		Endpoints: append(hw.Clusters["cluster2"].Endpoints, ep("cluster2", "network2", "10.20.0.10", "helloworld-v2-new", true))}
	derive(next)
	if len(m.events.all) != 1 || m.events.all[0].kube == nil || m.events.all[0].kube.Service != helloHost ||
		m.events.all[0].kube.Cluster != "cluster2" || strings.Join(m.events.all[0].kube.Added, ",") != "10.20.0.10" {
		t.Fatalf("timeline after a new endpoint: %+v", m.events.all)
	}
	// Verdicts recomputed on the same snapshot are no kube change.
	m.Update(indexMsg{ix: buildIndex(next, nil, nil), kube: kubeChanges(next, next)})
	if len(m.events.all) != 1 {
		t.Fatalf("re-deriving the same snapshot added entries: %d", len(m.events.all))
	}
}

// TestStaleBadge: a verdict resting on EDS from a stream that is down says so.
func TestStaleBadge(t *testing.T) {
	snap := testSnapshot()
	feed := testFeed(snap)
	badge := func() string {
		ix := buildIndex(snap, feed, nil)
		for _, r := range ix.services {
			if r.hostname == "helloworld.sample.svc.cluster.local" {
				return r.badge()
			}
		}
		return "(no row)"
	}
	if b := badge(); strings.Contains(b, "stale") {
		t.Fatalf("badge %q with every stream up", b)
	}
	feed.mu.Lock()
	for i := range feed.status {
		feed.status[i].Stale = true
	}
	feed.mu.Unlock()
	if b := badge(); !strings.Contains(b, "stale") {
		t.Errorf("badge %q with the streams down, want stale", b)
	}
}

type istiodFeed struct {
	*fakeFeed
	views []model.IstiodView
}

func (f *istiodFeed) Istiod() []model.IstiodView { return f.views }

// TestIstiodOpinion: where istiod's clusterz disagrees with meshscope, the
// clusters view says so (istiod keeps "synced" for a dead cluster).
func TestIstiodOpinion(t *testing.T) {
	snap := testSnapshot() // cluster3 is in error (unreachable)
	feed := &istiodFeed{fakeFeed: testFeed(snap), views: []model.IstiodView{{ControlPlane: "cluster1",
		Clusters: []model.IstiodCluster{{ID: "cluster1", SyncStatus: "synced"}, {ID: "cluster3", SyncStatus: "synced"}}}}}
	m := newTestModel(t, "mono", 180, 40, snap, feed) // wide enough for the state cell
	out := ansi.Strip(m.View().Content)
	if !strings.Contains(out, "istiod (cluster1) says synced") {
		t.Errorf("no istiod opinion on cluster3:\n%s", out)
	}
	if strings.Count(out, "istiod (cluster1) says") != 1 {
		t.Errorf("istiod agrees on cluster1: it should not be mentioned:\n%s", out)
	}
}

// TestEventsFilterByServiceAndViewpoint: the events filter matches type,
// viewpoint, control plane or cluster and the services a push or a kube
// change concerns, word by word.
func TestEventsFilterByServiceAndViewpoint(t *testing.T) {
	m := newTestModel(t, "mono", 120, 40, nil, nil)
	host := "helloworld.sample.svc.cluster.local"
	evs := []xdsclient.Event{
		{Seq: 1, Time: testNow, ControlPlane: "cluster1", Viewpoint: "cluster1/network1", Type: "eds", Changed: []string{"outbound|5000||" + host}},
		{Seq: 2, Time: testNow, ControlPlane: "cluster1", Viewpoint: "cluster2/network2", Type: "eds", Changed: []string{"outbound|80||sleep.sample.svc.cluster.local"}},
		{Seq: 3, Time: testNow, ControlPlane: "cluster1", Viewpoint: "cluster2/network2", Type: "nack"},
	}
	es := []entry{{kube: &model.KubeChange{Time: testNow, Cluster: "cluster2", Service: host, Added: []string{"10.144.0.20"}}}}
	for i := range evs {
		es = append(es, entry{xds: &evs[i]})
	}
	m.events.add(m.vc(), es)
	for _, c := range []struct {
		name, q string
		want    int
	}{
		{"no filter", "", 4},
		{"service", "helloworld", 2},
		{"type and service", "eds helloworld", 1},
		{"network of the viewpoint", "network2", 2},
		{"viewpoint and type", "network2 nack", 1},
		{"kube changes", "kube", 1},
		{"kube and cluster", "kube cluster2", 1},
		{"cluster and service", "cluster2 helloworld", 1},
		{"nothing", "nothing-like-this", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			m.events.setFilter(m.vc(), c.q)
			if got := len(m.events.list.rows); got != c.want {
				t.Errorf("filter %q: %d events, want %d", c.q, got, c.want)
			}
		})
	}
}

func TestEventsPauseAndFilter(t *testing.T) {
	m := goldenModel(t, "default", 120, 40)
	m.push(viewEvents)
	evs := testEvents()
	m.Update(eventsMsg{evs[:3]})
	press(m, "p")
	m.Update(eventsMsg{evs[3:]})
	if len(m.events.list.rows) != 3 || !strings.Contains(plain(m), "PAUSED, 2 new") {
		t.Fatalf("paused timeline has %d rows", len(m.events.list.rows))
	}
	press(m, "p")
	if len(m.events.list.rows) != 5 {
		t.Fatalf("resumed timeline has %d rows", len(m.events.list.rows))
	}
	press(m, "/")
	typeText(m, "eds")
	press(m, "enter")
	if len(m.events.list.rows) != 1 || m.events.all[m.events.list.rows[0]].kind() != "eds" {
		t.Fatalf("filter eds: %d rows", len(m.events.list.rows))
	}
	if !strings.Contains(plain(m), "endpoints +1 -0") {
		t.Error("endpoint change summary missing")
	}
	press(m, "esc")
	if len(m.events.list.rows) != 5 {
		t.Fatal("esc did not clear the filter")
	}
	// The cursor stays on its event while new ones arrive above it.
	press(m, "j")
	key := m.events.list.key
	m.Update(eventsMsg{[]xdsclient.Event{{Seq: 9, Time: testNow, ControlPlane: "istiod-cluster1", Viewpoint: vp1.String(), Type: "eds"}}})
	if m.events.list.key != key || m.events.list.cur != 4 {
		t.Fatalf("cursor moved to %q (%d)", m.events.list.key, m.events.list.cur)
	}
}

// TestTimelineKeepsAFewEndpointsOfABigPush: a proxy's first push lists
// every endpoint it is sent; the timeline keeps a bounded copy (counts of
// every change, the first few changes, cloned strings), and says how many
// more there were.
func TestTimelineKeepsAFewEndpointsOfABigPush(t *testing.T) {
	raw := strings.Clone("outbound|8080||svc-0000.bench-00.svc.cluster.local")
	big := xdsclient.Event{Seq: 9, Time: time.Now(), ControlPlane: "cluster1", Viewpoint: "cluster1/network1", Type: "eds", Added: []string{raw}}
	for i := 0; i < 1000; i++ {
		big.Endpoints = append(big.Endpoints, xdsclient.EndpointChange{Cluster: raw, Change: xdsclient.EndpointAdded, Address: "10.50.0.1", Port: 8080, Weight: 1})
	}
	m := newTestModel(t, "mono", 120, 40, nil, nil)
	m.Update(eventsMsg{[]xdsclient.Event{big}})
	kept := m.events.all[0]
	if len(kept.xds.Endpoints) != maxKeptEndpoints || kept.eps.total != 1000 || kept.eps.added != 1000 {
		t.Fatalf("kept %d endpoint changes, counts %+v", len(kept.xds.Endpoints), kept.eps)
	}
	if unsafe.StringData(kept.xds.Added[0]) == unsafe.StringData(raw) || unsafe.StringData(kept.xds.Endpoints[0].Cluster) == unsafe.StringData(raw) {
		t.Error("the kept entry still points into the push's strings")
	}
	if got := changesText(kept); !strings.HasPrefix(got, "endpoints +1000 -0 ~0 w0") {
		t.Errorf("row = %q", got)
	}
	m.push(viewEvents)
	if out := plain(m); !strings.Contains(out, "1000 endpoint changes; the first 8:") {
		t.Errorf("detail does not say how many more:\n%s", out)
	}
}
