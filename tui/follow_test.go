package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

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

// TestOpenDiffFollowsSnapshot: an open ":diff" shows a new snapshot without
// being reopened.
func TestOpenDiffFollowsSnapshot(t *testing.T) {
	m := newTestModel(t, "mono", 120, 40, testSnapshot(), nil)
	m.runCommand("diff network1 network2")
	if m.currentID() != viewDiff {
		t.Fatalf("view %v after :diff, flash %q", m.currentID(), m.flash)
	}
	if out := plain(m); strings.Contains(out, "plain.sample") {
		t.Fatalf("plain.sample listed before it exists:\n%s", out)
	}
	next := followSnapshot()
	m.snap = next
	m.Update(indexMsg{ix: buildIndex(next, nil, nil)})
	if out := plain(m); !strings.Contains(out, "plain.sample") || !strings.Contains(out, "plain-0@cluster2") {
		t.Errorf("the open :diff did not follow the new snapshot:\n%s", out)
	}
}

// TestOpenProxyConfigFollowsSnapshot: an open ":pc" shows what the feed holds
// when a new snapshot arrives, without being reopened.
func TestOpenProxyConfigFollowsSnapshot(t *testing.T) {
	snap := testSnapshot()
	feed := &configFeed{fakeFeed: testFeed(snap), cfg: map[string]ProxyConfig{
		vp1.String(): {Clusters: []xdsclient.Cluster{{Name: "BlackHoleCluster", Type: "STATIC", TLSMode: "none"}}},
	}}
	m := newTestModel(t, "mono", 120, 40, snap, feed)
	m.runCommand("pc network1")
	if m.currentID() != viewConfig {
		t.Fatalf("view %v after :pc, flash %q", m.currentID(), m.flash)
	}
	if out := ansi.Strip(m.View().Content); !strings.Contains(out, "CLUSTERS (1)") {
		t.Fatalf("pc view before the snapshot:\n%s", out)
	}
	c := feed.cfg[vp1.String()]
	c.Clusters = append(c.Clusters, xdsclient.Cluster{Name: "outbound|5000||plain.sample.svc.cluster.local", Type: "EDS", TLSMode: "auto"})
	feed.cfg[vp1.String()] = c
	next := followSnapshot()
	m.snap = next
	m.Update(indexMsg{ix: buildIndex(next, feed, nil)})
	if out := ansi.Strip(m.View().Content); !strings.Contains(out, "CLUSTERS (2)") || !strings.Contains(out, "plain.sample") {
		t.Errorf("the open :pc did not follow the new snapshot:\n%s", out)
	}
}
