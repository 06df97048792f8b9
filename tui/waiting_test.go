package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// TestStatusSaysWhatItWaitsFor: a UI that has not settled a few seconds
// after it started names, in the status bar, the clusters still syncing
// and the streams without their full EDS (issue 26: a screen that never
// settled said nothing); once everything is in, the line goes.
func TestStatusSaysWhatItWaitsFor(t *testing.T) {
	snap := testSnapshot()
	snap.Clusters[1].State = model.StateSyncing // cluster2
	feed := testFeed(snap)
	feed.status = []xdsclient.StreamStatus{
		{Viewpoint: vp1.String(), State: xdsclient.StateConnected, Progress: xdsclient.Progress{FollowsCDS: true, CDS: true, EDS: 12, EDSWanted: 12}},
		{Viewpoint: vp2.String(), State: xdsclient.StateConnected, Progress: xdsclient.Progress{FollowsCDS: true, CDS: true, EDS: 1204, EDSWanted: 2004}},
	}
	now := testNow
	m, err := New(feed, Options{now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	m.Update(windowSize(160, 40))
	m.snap = snap
	m.Update(indexMsg{ix: buildIndex(snap, feed, m.doc)})
	bar := func() string { l, _ := m.statusParts(); return strings.Join(l, " | ") }

	now = now.Add(2 * time.Second)
	m.Update(tickMsg(now))
	if b := bar(); strings.Contains(b, "waiting") {
		t.Errorf("after 2s: %q, want no waiting yet (a big mesh takes a few seconds)", b)
	}
	now = now.Add(5 * time.Second)
	m.Update(tickMsg(now))
	want := "waiting 7s for cluster2 syncing, " + vp2.String() + " EDS 1204/2004"
	if b := bar(); !strings.Contains(b, want) {
		t.Errorf("after 7s: %q, want it to contain %q", b, want)
	}

	// A stream that lost its connection is named with its state.
	feed.mu.Lock()
	feed.status[0] = xdsclient.StreamStatus{Viewpoint: vp1.String(), State: xdsclient.StateConnecting, Stale: true, Progress: xdsclient.Progress{FollowsCDS: true}}
	feed.mu.Unlock()
	m.Update(tickMsg(now))
	if b := bar(); !strings.Contains(b, vp1.String()+" connecting") {
		t.Errorf("a stream connecting: %q", b)
	}

	// Everything in: the line goes at the next tick.
	synced := *snap
	synced.Clusters = append([]model.Cluster(nil), snap.Clusters...)
	synced.Clusters[1].State = model.StateSynced
	m.snap = &synced
	feed.mu.Lock()
	for i := range feed.status {
		feed.status[i].State = xdsclient.StateConnected
		feed.status[i].Progress = xdsclient.Progress{FollowsCDS: true, CDS: true, EDS: 2004, EDSWanted: 2004}
	}
	feed.mu.Unlock()
	now = now.Add(time.Second)
	m.Update(tickMsg(now))
	if b := bar(); strings.Contains(b, "waiting") {
		t.Errorf("settled: %q", b)
	}
	// A cluster in error is not waited for (the clusters view says why).
	if snap.Clusters[2].State != model.StateError {
		t.Fatalf("fixture: cluster3 is %s", snap.Clusters[2].State)
	}
}
