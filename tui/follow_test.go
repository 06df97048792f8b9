package tui

import (
	"strings"
	"testing"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// followSnapshot is the next snapshot of the test mesh: a new service whose
// only pod (in cluster2, network2) has no sidecar, so network1 drops it and
// network2 reaches it — a new row of ":diff network1 network2".
func followSnapshot() *model.Snapshot {
	next := testSnapshot()
	next.Version++
	next.Services = append(next.Services, svc("sample", "plain", httpPort, map[string][]model.Endpoint{
		"cluster2": {ep("cluster2", "network2", "10.20.0.30", "plain-0", false)},
	}))
	sortServices(next.Services)
	return next
}

// TestOpenViewFollowsSnapshot: an open ":diff" or ":pc" shows a new
// snapshot (and what the feed holds then) without being reopened.
func TestOpenViewFollowsSnapshot(t *testing.T) {
	for _, c := range []struct {
		name string
		line string
		view viewID
		// config, when set, is the feed's proxy config of vp1, and next
		// what it holds when the new snapshot arrives.
		config, next []xdsclient.Cluster
		// before is on the screen before the new snapshot (absent: is not);
		// after is after.
		before string
		absent bool
		after  []string
	}{
		{name: "diff", line: "diff network1 network2", view: viewDiff, before: "plain.sample", absent: true,
			after: []string{"plain.sample", "plain-0@cluster2"}},
		{name: "proxy config", line: "pc network1", view: viewConfig, before: "CLUSTERS (1)",
			config: []xdsclient.Cluster{{Name: "BlackHoleCluster", Type: "STATIC", TLSMode: "none"}},
			next: []xdsclient.Cluster{{Name: "BlackHoleCluster", Type: "STATIC", TLSMode: "none"},
				{Name: "outbound|5000||plain.sample.svc.cluster.local", Type: "EDS", TLSMode: "auto"}},
			after: []string{"CLUSTERS (2)", "plain.sample"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			snap := testSnapshot()
			var feed Feed
			var cf *configFeed
			if c.config != nil {
				cf = &configFeed{fakeFeed: testFeed(snap), cfg: map[string]ProxyConfig{vp1.String(): {Clusters: c.config}}}
				feed = cf
			}
			m := newTestModel(t, "mono", 120, 40, snap, feed)
			m.runCommand(c.line)
			if m.currentID() != c.view {
				t.Fatalf("view %v after :%s, flash %q", m.currentID(), c.line, m.flash)
			}
			if out := plain(m); strings.Contains(out, c.before) == c.absent {
				t.Fatalf("before the snapshot, %q shown: %v, want %v:\n%s", c.before, !c.absent, c.absent, out)
			}
			if cf != nil {
				cf.cfg[vp1.String()] = ProxyConfig{Clusters: c.next}
			}
			next := followSnapshot()
			m.snap = next
			m.Update(indexMsg{ix: buildIndex(next, feed, nil)})
			out := plain(m)
			for _, w := range c.after {
				if !strings.Contains(out, w) {
					t.Errorf("the open :%s did not follow the new snapshot (no %q):\n%s", c.line, w, out)
				}
			}
		})
	}
}
