package tui

import (
	"testing"

	"github.com/meshscope/meshscope/internal/uiprobe"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// TestProbeHooks: with hooks installed (the end-to-end benchmark's), the
// model reports each events batch once it is applied, and each new index
// with how many services have a verdict; without hooks nothing is called.
func TestProbeHooks(t *testing.T) {
	snap := testSnapshot()
	feed := testFeed(snap)
	var batches [][]xdsclient.Event
	var services, known []int
	restore := uiprobe.Set(&uiprobe.Hooks{
		EventsApplied: func(evs []xdsclient.Event) { batches = append(batches, evs) },
		IndexApplied:  func(_ *model.Snapshot, n, k int) { services, known = append(services, n), append(known, k) },
	})
	m := newTestModel(t, "default", 120, 40, snap, feed)
	evs := []xdsclient.Event{{Seq: 7, Type: xdsclient.EventEDS, Viewpoint: vp1.String()}, {Seq: 8, Type: xdsclient.EventCDS, Viewpoint: vp2.String()}}
	m.Update(eventsMsg{evs})
	if len(batches) != 1 || len(batches[0]) != 2 || batches[0][0].Seq != 7 {
		t.Fatalf("events applied = %+v", batches)
	}
	if len(services) != 1 || services[0] != len(snap.Services) || known[0] != m.ix.verdictsKnown() || known[0] == 0 {
		t.Fatalf("index applied: services %v, verdicts known %v (index says %d)", services, known, m.ix.verdictsKnown())
	}
	restore()
	m.Update(eventsMsg{evs})
	if len(batches) != 1 {
		t.Fatal("a hook was called after it was removed")
	}
}
