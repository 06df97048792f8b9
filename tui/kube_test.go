package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/collector/istiod"
	"github.com/meshscope/meshscope/xdsclient"
)

// TestPushLinkedToKubeChange: an EDS push for helloworld is linked to the
// kube change of helloworld just before it, with the delay; an older or
// unrelated change is not.
func TestPushLinkedToKubeChange(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	host := "helloworld.sample.svc.cluster.local"
	kube := KubeEvent(collector.KubeChange{Time: t0, Cluster: "cluster2", Service: host, Added: []string{"10.144.0.20", "10.144.0.21"}})
	other := KubeEvent(collector.KubeChange{Time: t0.Add(50 * time.Millisecond), Cluster: "cluster1", Service: "sleep.sample.svc.cluster.local", Added: []string{"10.44.0.30"}})
	push := xdsclient.Event{Seq: 7, Time: t0.Add(125 * time.Millisecond), ControlPlane: "cluster1", Viewpoint: "cluster1/network1", Type: "eds",
		Changed:   []string{"outbound|5000||" + host},
		Endpoints: []xdsclient.EndpointChange{{Cluster: "outbound|5000||" + host, Change: xdsclient.EndpointWeight, Address: "192.168.60.9", Port: 15443, Weight: 3, OldWeight: 1}}}
	late := push
	late.Seq, late.Time = 8, t0.Add(time.Minute)

	m := newTestModel(t, "mono", 120, 40, nil, nil)
	v := m.events
	v.add(m, []xdsclient.Event{kube, other, push, late})
	c, ok := v.causes[eventKey(push)]
	if !ok || c.short != "← cluster2 +125ms" || !strings.Contains(c.long, "+10.144.0.20") {
		t.Errorf("push cause = %+v, %v; want the cluster2 change 125 ms before", c, ok)
	}
	if _, ok := v.causes[eventKey(late)]; ok {
		t.Error("a push a minute later should not be linked")
	}
	if kube.Type != EventKube || kube.ControlPlane != "cluster2" || !strings.Contains(kube.Message, "helloworld.sample: +10.144.0.20 +10.144.0.21") {
		t.Errorf("kube entry %+v", kube)
	}
}

// TestStaleBadge: a verdict resting on EDS from a stream that is down says so.
func TestStaleBadge(t *testing.T) {
	snap := testSnapshot()
	feed := testFeed(snap)
	badge := func() string {
		ix := buildIndex(snap, feed)
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
	views []istiod.View
}

func (f *istiodFeed) Istiod() []istiod.View { return f.views }

// TestIstiodOpinion: where istiod's clusterz disagrees with meshscope, the
// clusters view says so (istiod keeps "synced" for a dead cluster).
func TestIstiodOpinion(t *testing.T) {
	snap := testSnapshot() // cluster3 is in error (unreachable)
	feed := &istiodFeed{fakeFeed: testFeed(snap), views: []istiod.View{{ControlPlane: "cluster1",
		Clusters: []istiod.Cluster{{ID: "cluster1", SyncStatus: "synced"}, {ID: "cluster3", SyncStatus: "synced"}}}}}
	m := newTestModel(t, "mono", 160, 40, snap, feed)
	out := ansi.Strip(m.View().Content)
	if !strings.Contains(out, "istiod (cluster1) says synced") {
		t.Errorf("no istiod opinion on cluster3:\n%s", out)
	}
	if strings.Count(out, "istiod (cluster1) says") != 1 {
		t.Errorf("istiod agrees on cluster1: it should not be mentioned:\n%s", out)
	}
}

// TestEventsFilterByServiceAndViewpoint: the events filter matches type,
// viewpoint, control plane and the services a push changed, word by word.
func TestEventsFilterByServiceAndViewpoint(t *testing.T) {
	m := newTestModel(t, "mono", 120, 40, nil, nil)
	host := "helloworld.sample.svc.cluster.local"
	evs := []xdsclient.Event{
		{Seq: 1, Time: testNow, ControlPlane: "cluster1", Viewpoint: "cluster1/network1", Type: "eds", Changed: []string{"outbound|5000||" + host}},
		{Seq: 2, Time: testNow, ControlPlane: "cluster1", Viewpoint: "cluster2/network2", Type: "eds", Changed: []string{"outbound|80||sleep.sample.svc.cluster.local"}},
		{Seq: 3, Time: testNow, ControlPlane: "cluster1", Viewpoint: "cluster2/network2", Type: "nack"},
		KubeEvent(collector.KubeChange{Time: testNow, Cluster: "cluster2", Service: host, Added: []string{"10.144.0.20"}}),
	}
	m.events.add(m, evs)
	for q, want := range map[string]int{"": 4, "helloworld": 2, "eds helloworld": 1, "network2": 2, "network2 nack": 1, "kube": 1, "nothing-like-this": 0} {
		m.events.setFilter(m, q)
		if got := len(m.events.order); got != want {
			t.Errorf("filter %q: %d events, want %d", q, got, want)
		}
	}
}
