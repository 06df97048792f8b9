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

// A viewpoint whose stream is down shows its last EDS as stale, with the
// stream's state and the age of its last push, in the service view (the
// other viewpoint does not), and the services list badges it.
func TestServiceViewSaysStale(t *testing.T) {
	m := faultModel(t, 120, 40, nil)
	press(m, ":")
	typeText(m, "svc")
	press(m, "enter")
	if out := plain(m); !strings.Contains(out, "mismatch,stale") {
		t.Fatalf("the services list does not badge helloworld stale:\n%s", out)
	}
	press(m, "enter")
	out := plain(m)
	if m.currentID() != viewService || strings.Count(out, "stale: stream disconnected, last push 40s ago") != 1 {
		t.Fatalf("the service view should mark network2's column stale, once:\n%s", out)
	}
}

// At 60×15 the UI says the terminal is too small, how to go on, and still
// what is wrong with the mesh: clusters not synced, streams down.
func TestTooSmallSaysWhatIsWrong(t *testing.T) {
	m := faultModel(t, 60, 15, nil)
	out := plain(m)
	checkSize(t, out, 60, 15)
	for _, want := range []string{"terminal too small (need 80×24, have 60×15)", "press q to quit", "clusters 2/3 synced",
		"xds 1/2 up (cluster2/network2 disconnected,stale)", "push 3s ago"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q on the small screen:\n%s", want, out)
		}
	}
}

// A cluster that synced once and is out of touch now: the services list
// says its presence marks are as last seen.
func TestServicesLegendLastSeen(t *testing.T) {
	m := faultModel(t, 120, 40, func(s *model.Snapshot) {
		c := &s.Clusters[1]
		c.State, c.ErrorKind, c.Reason = model.StateError, model.ErrUnreachable, "API server unreachable"
	})
	press(m, ":")
	typeText(m, "svc")
	press(m, "enter")
	out := plain(m)
	if !strings.Contains(out, "2=cluster2 (error: as last seen)") || strings.Contains(out, "3=cluster3 (") {
		t.Fatalf("the legend should say cluster2's marks are as last seen (cluster3 never synced):\n%s", out)
	}
}

// The diff view's header says when one side's stream is down: what it
// compares from that side may be old.
func TestDiffSaysStale(t *testing.T) {
	m := faultModel(t, 160, 40, nil)
	press(m, ":")
	typeText(m, "diff network1 network2")
	press(m, "enter")
	out := plain(m)
	if m.currentID() != viewDiff || !strings.Contains(out, "cluster2/network2 stale: stream disconnected, last push 40s ago") || strings.Contains(out, "cluster1/network1 stale") {
		t.Fatalf("the diff header should say network2's side is stale:\n%s", out)
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
