package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// faultModel is the golden model with network2's stream down since 40 s:
// what network2 holds is what it got before.
func faultModel(t *testing.T, w, h int, edit func(*model.Snapshot)) *Model {
	t.Helper()
	snap := testSnapshot()
	if edit != nil {
		edit(snap)
	}
	feed := testFeed(snap)
	feed.status[1].State, feed.status[1].Stale, feed.status[1].LastPush = xdsclient.StateDisconnected, true, ago(40*time.Second)
	return newTestModel(t, "default", w, h, snap, feed)
}

// TestFaultsSaid: with network2's stream down (and, in one case,
// cluster2 out of touch) every screen says what it rests on.
func TestFaultsSaid(t *testing.T) {
	for _, c := range []struct {
		name string
		w, h int
		edit func(*model.Snapshot)
		// line is a ":" command run (with enter), keys are pressed after it.
		line string
		keys []string
		view viewID
		// want are on the screen, wantOnce exactly once; never never.
		want     []string
		wantOnce string
		never    []string
	}{
		// The services list badges helloworld stale.
		{name: "services list badge", w: 120, h: 40, line: "svc", view: viewServices, want: []string{"mismatch,stale"}},
		// A viewpoint whose stream is down shows its last EDS as stale,
		// with the stream's state and the age of its last push, in the
		// service view (the other viewpoint does not).
		{name: "service view column", w: 120, h: 40, line: "svc", keys: []string{"enter"}, view: viewService,
			wantOnce: "stale: stream disconnected, last push 40s ago"},
		// At 60×15 the UI says the terminal is too small, how to go on,
		// and still what is wrong with the mesh: clusters not synced,
		// streams down.
		{name: "too small", w: 60, h: 15, view: viewClusters,
			want: []string{"terminal too small (need 80×24, have 60×15)", "press q to quit", "clusters 2/3 synced",
				"xds 1/2 up (cluster2/network2 disconnected,stale)", "push 3s ago"}},
		// A cluster that synced once and is out of touch now: the services
		// list says its presence marks are as last seen (cluster3 never synced).
		{name: "services legend last seen", w: 120, h: 40, line: "svc", view: viewServices,
			edit: func(s *model.Snapshot) {
				c := &s.Clusters[1]
				c.State, c.ErrorKind, c.Reason = model.StateError, model.ErrUnreachable, "API server unreachable"
			},
			want: []string{"2=cluster2 (error: as last seen)"}, never: []string{"3=cluster3 ("}},
		// The diff view's header says when one side's stream is down: what
		// it compares from that side may be old.
		{name: "diff header", w: 160, h: 40, line: "diff network1 network2", view: viewDiff,
			want: []string{"cluster2/network2 stale: stream disconnected, last push 40s ago"}, never: []string{"cluster1/network1 stale"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := faultModel(t, c.w, c.h, c.edit)
			if c.line != "" {
				press(m, ":")
				typeText(m, c.line)
				press(m, "enter")
			}
			press(m, c.keys...)
			out := plain(m)
			checkSize(t, out, c.w, c.h)
			if m.currentID() != c.view {
				t.Fatalf("view %d, want %d:\n%s", m.currentID(), c.view, out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("no %q on the screen:\n%s", w, out)
				}
			}
			if c.wantOnce != "" && strings.Count(out, c.wantOnce) != 1 {
				t.Errorf("%q %d times, want once:\n%s", c.wantOnce, strings.Count(out, c.wantOnce), out)
			}
			for _, w := range c.never {
				if strings.Contains(out, w) {
					t.Errorf("%q on the screen:\n%s", w, out)
				}
			}
		})
	}
}

// A push that changes 10,000 endpoints (a gateway lost its address in a
// large mesh) keeps its counts in the timeline but only the first
// maxKeptEndpoints changes: the timeline holds maxEvents entries for hours.
func TestTimelineKeepsFewChanges(t *testing.T) {
	m := newTestModel(t, "mono", 120, 40, nil, nil)
	ev := xdsclient.Event{Seq: 1, Time: testNow, ControlPlane: "cluster1", Viewpoint: vp1.String(), Type: xdsclient.EventType(xdsclient.EDS),
		Changed: []string{"outbound|5000||" + helloHost}}
	for i := 0; i < 10000; i++ {
		ev.Endpoints = append(ev.Endpoints, xdsclient.EndpointChange{Cluster: "outbound|5000||" + helloHost, Change: xdsclient.EndpointAdded,
			Address: fmt.Sprintf("10.%d.%d.%d", i/65536, i/256%256, i%256), Port: 5000, Weight: 1})
	}
	ev.Endpoints[0].Change = xdsclient.EndpointWeight
	m.Update(eventsMsg{[]xdsclient.Event{ev}})
	m.push(viewEvents)
	kept := m.events.all[0]
	if len(kept.xds.Endpoints) != maxKeptEndpoints || cap(kept.xds.Endpoints) > 2*maxKeptEndpoints {
		t.Fatalf("the entry keeps %d endpoint changes (cap %d), want %d", len(kept.xds.Endpoints), cap(kept.xds.Endpoints), maxKeptEndpoints)
	}
	out := plain(m)
	for _, want := range []string{"endpoints +9999 -0 ~0 w1", "10000 endpoint changes; the first 8:"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q on the events view:\n%s", want, out)
		}
	}
}

// A stream going down while kube is quiet (no new snapshot) still has the
// verdicts derived again at the next tick, so the services list marks them
// stale; an unchanged set of stale streams asks for nothing.
func TestStreamDownRederives(t *testing.T) {
	snap := testSnapshot()
	feed := testFeed(snap)
	m := newTestModel(t, "default", 120, 40, snap, feed)
	m.Update(tickMsg(testNow))
	m.deriving = false // as if the derivation the first tick asked for ended
	m.Update(tickMsg(testNow))
	if m.deriving {
		t.Fatal("a tick with no stream change asked for a derivation")
	}
	feed.status[1].State, feed.status[1].Stale = xdsclient.StateDisconnected, true
	m.Update(tickMsg(testNow))
	if !m.deriving {
		t.Fatal("network2's stream went down, and the tick asked for no derivation")
	}
}

// TestEmptyViewsSayWhy: with the only cluster unreachable the services
// and events views are empty, and say it is the reading, with the cause —
// not "no services" as if the mesh had none. With a cluster read and one
// not, the message counts them.
func TestEmptyViewsSayWhy(t *testing.T) {
	unreachable := model.Cluster{ID: "c", Source: model.SourceRef{Kind: model.SourceContext, Name: "c"}, State: model.StateError,
		ErrorKind: model.ErrUnreachable, Reason: "unreachable: dial tcp 127.0.0.1:1: connect: connection refused"}
	for _, c := range []struct {
		name     string
		clusters []model.Cluster
		line     string
		want     []string
		never    string
	}{
		{"services, nothing read", []model.Cluster{unreachable}, "svc",
			[]string{"no services: no cluster synced", "cluster c is unreachable (dial tcp 127.0.0.1:1: connect: connection refused)"}, ""},
		{"events, nothing read", []model.Cluster{unreachable}, "events",
			[]string{"no events yet: no cluster synced", "cluster c is unreachable (dial tcp 127.0.0.1:1:"}, ""},
		{"services, one of two read", []model.Cluster{{ID: "ok", State: model.StateSynced}, unreachable}, "svc",
			[]string{"no services: 1 of 2 clusters not read", "cluster c is unreachable"}, ""},
		{"services, everything read", []model.Cluster{{ID: "ok", State: model.StateSynced}}, "svc", []string{"no services"}, "no services:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			snap := &model.Snapshot{Version: 1, Time: testNow, Clusters: c.clusters}
			m := newTestModel(t, "mono", 120, 40, snap, newFakeFeed())
			press(m, ":")
			typeText(m, c.line)
			press(m, "enter")
			out := plain(m)
			checkSize(t, out, 120, 40)
			flat := strings.Join(strings.Fields(strings.ReplaceAll(out, "\n", " \n ")), " ")
			for _, w := range c.want {
				if !strings.Contains(flat, strings.Join(strings.Fields(w), " ")) && !strings.Contains(out, w) {
					t.Errorf("no %q on the screen:\n%s", w, out)
				}
			}
			if c.never != "" && strings.Contains(out, c.never) {
				t.Errorf("%q on the screen:\n%s", c.never, out)
			}
		})
	}
}
