package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/meshscope/meshscope/model"
)

func selectedHost(m *Model) string {
	v := m.services
	id, ok := v.list.selected()
	if !ok {
		return ""
	}
	return v.ix.services[id].hostname
}

func TestCursorStaysOnHostnameWhenServicesAreInserted(t *testing.T) {
	snap := testSnapshot()
	m := newTestModel(t, "default", 120, 40, snap, nil)
	m.push(viewServices)
	press(m, "j", "j") // legacy, sleep
	if got := selectedHost(m); got != "sleep.sample.svc.cluster.local" {
		t.Fatalf("cursor on %q", got)
	}
	row := m.services.list.cur - m.services.list.top
	// A new snapshot inserts services before the selected one.
	next := testSnapshot()
	next.Version++
	for _, name := range []string{"aaa", "abc", "httpbin", "kiali"} {
		next.Services = append(next.Services, svc("sample", name, httpPort, map[string][]model.Endpoint{"cluster1": nil}))
	}
	sortServices(next.Services)
	m.snap = next
	m.Update(indexMsg{ix: buildIndex(next, nil, nil)})
	if got := selectedHost(m); got != "sleep.sample.svc.cluster.local" {
		t.Fatalf("after the update the cursor is on %q", got)
	}
	if m.services.list.cur != 6 {
		t.Fatalf("cursor index %d, want 6", m.services.list.cur)
	}
	_ = row
	// And when the selected service disappears, the cursor stays put.
	gone := testSnapshot()
	gone.Services = append(gone.Services[:2:2], gone.Services[3:]...)
	m.Update(indexMsg{ix: buildIndex(gone, nil, nil)})
	if got := selectedHost(m); got == "" {
		t.Fatal("no selection after the selected service vanished")
	}
}

// In a list longer than the screen, the selected row also keeps its line
// on screen when rows are inserted above it.
func TestCursorKeepsScreenLine(t *testing.T) {
	snap := bigSnapshot(100, 1)
	m := newTestModel(t, "default", 80, 24, snap, nil)
	m.push(viewServices)
	for i := 0; i < 50; i++ {
		press(m, "j")
	}
	host, line := selectedHost(m), m.services.list.cur-m.services.list.top
	next := bigSnapshot(100, 1)
	for i := 0; i < 5; i++ {
		next.Services = append(next.Services, svc("aaa", fmt.Sprintf("first-%d", i), httpPort, nil))
	}
	sortServices(next.Services)
	m.Update(indexMsg{ix: buildIndex(next, nil, nil)})
	if got := selectedHost(m); got != host {
		t.Fatalf("cursor moved from %q to %q", host, got)
	}
	if got := m.services.list.cur - m.services.list.top; got != line {
		t.Fatalf("selected row moved on screen from line %d to %d", line, got)
	}
}

func TestCursorStaysWhileFilteredAndSorted(t *testing.T) {
	m := goldenModel(t, "default", 120, 40)
	m.push(viewServices)
	press(m, "j") // legacy
	press(m, "s", "s")
	if m.services.sortBy != sortEndpoints {
		t.Fatalf("sort is %v", m.services.sortBy)
	}
	if got := selectedHost(m); got != "legacy.legacy.svc.cluster.local" {
		t.Fatalf("sorting moved the cursor to %q", got)
	}
	press(m, "/")
	typeText(m, "leg")
	press(m, "enter")
	if got := selectedHost(m); got != "legacy.legacy.svc.cluster.local" || len(m.services.list.rows) != 1 {
		t.Fatalf("filter: %d rows, cursor on %q", len(m.services.list.rows), got)
	}
	press(m, "esc") // clears the filter, stays in the view
	if m.currentID() != viewServices || m.services.filter.active() || len(m.services.list.rows) != 4 {
		t.Fatalf("esc: view %d, filter %q, %d rows", m.currentID(), m.services.filter.query, len(m.services.list.rows))
	}
	if got := selectedHost(m); got != "legacy.legacy.svc.cluster.local" {
		t.Fatalf("clearing the filter moved the cursor to %q", got)
	}
}

func TestTooSmall(t *testing.T) {
	m := goldenModel(t, "default", 79, 30)
	out := plain(m)
	checkSize(t, out, 79, 30)
	if !strings.Contains(out, "terminal too small (need 80×24, have 79×30)") {
		t.Fatalf("frame:\n%s", out)
	}
	m.Update(windowSize(100, 20))
	if out := plain(m); !strings.Contains(out, "have 100×20") {
		t.Fatalf("frame:\n%s", out)
	}
	m.Update(windowSize(80, 24))
	if out := plain(m); strings.Contains(out, "too small") {
		t.Fatal("80×24 is big enough")
	}
}

func TestEscBackStack(t *testing.T) {
	m := goldenModel(t, "default", 120, 40)
	press(m, ":")
	typeText(m, "svc")
	press(m, "enter", "enter")
	if m.currentID() != viewService || m.service.host != helloHost {
		t.Fatalf("view %d host %q", m.currentID(), m.service.host)
	}
	press(m, "esc")
	if m.currentID() != viewServices {
		t.Fatalf("esc from service went to %d", m.currentID())
	}
	press(m, "esc")
	if m.currentID() != viewClusters {
		t.Fatalf("esc from services went to %d", m.currentID())
	}
	press(m, "esc")
	if m.currentID() != viewClusters || len(m.stack) != 1 {
		t.Fatal("esc on the first screen must stay there")
	}
	// A view opened twice is returned to, not stacked.
	for i := 0; i < 3; i++ {
		m.push(viewServices)
		m.push(viewProblems)
	}
	if len(m.stack) != 3 {
		t.Fatalf("stack %v", m.stack)
	}
}

func TestServiceViewKeys(t *testing.T) {
	snap := testSnapshot()
	snap.Service(helloHost).Ports = append(snap.Service(helloHost).Ports, model.ServicePort{Name: "grpc", Port: 9000})
	m := newTestModel(t, "default", 120, 40, snap, testFeed(snap))
	m.openService(helloHost)
	if m.service.focus != 0 || len(m.service.views) != 2 {
		t.Fatalf("focus %d, %d views", m.service.focus, len(m.service.views))
	}
	press(m, "l")
	if m.service.focus != 1 {
		t.Fatal("l did not move the focus")
	}
	press(m, "]")
	if m.service.port != 1 || m.service.views[0].Port != 9000 {
		t.Fatalf("] port %d", m.service.port)
	}
	if !strings.Contains(plain(m), "[9000/grpc]") {
		t.Fatal("port 9000 not shown as current")
	}
	press(m, "[")
	if m.service.views[0].Port != 5000 {
		t.Fatal("[ did not go back to 5000")
	}
	// At 80 columns one viewpoint column shows: the focused one.
	m.Update(windowSize(80, 24))
	press(m, "h")
	out := plain(m)
	if !strings.Contains(out, "▌cluster1/network1") || strings.Contains(out, "▌cluster2/network2") {
		t.Fatalf("80 columns, focus 0:\n%s", out)
	}
	press(m, "l")
	if out := plain(m); !strings.Contains(out, "▌cluster2/network2") {
		t.Fatalf("switching viewpoint did not change the focused column:\n%s", out)
	}
}

func TestProblemsJump(t *testing.T) {
	m := goldenModel(t, "default", 120, 40)
	m.push(viewProblems)
	// First problem: cluster3 is in error.
	press(m, "enter")
	if m.currentID() != viewClusters || m.ix.snap.Clusters[m.clusters.cl.cur].ID != "cluster3" {
		t.Fatalf("enter on a cluster problem: view %d", m.currentID())
	}
	m.push(viewProblems)
	press(m, "j", "j", "enter") // drop on legacy (after control-plane-missing-cluster)
	if m.currentID() != viewService || m.service.host != "legacy.legacy.svc.cluster.local" {
		t.Fatalf("enter on a drop: view %d host %q", m.currentID(), m.service.host)
	}
	if !strings.Contains(plain(m), "no-mtls") {
		t.Error("the dropped endpoint's reason is not shown")
	}
	// And back: enter on a cluster opens the problems on it.
	for _, k := range []string{"g", "G"} {
		m.push(viewClusters)
		press(m, k)
		want := m.ix.snap.Clusters[m.clusters.cl.cur].ID
		press(m, "enter")
		id, _ := m.problems.list.selected()
		if m.currentID() != viewProblems || m.ix.problems[id].Cluster != want {
			t.Fatalf("enter on %s: view %d, problem %+v", want, m.currentID(), m.ix.problems[id])
		}
	}
	// A cluster without problems says so (the view asks the root, by a
	// message, to show it).
	m = newTestModel(t, "default", 120, 40, &model.Snapshot{Time: testNow, Clusters: []model.Cluster{{ID: "quiet", State: model.StateSynced}}}, nil)
	press(m, "enter")
	if m.currentID() != viewClusters || m.flash != "no problems for cluster quiet" {
		t.Fatalf("enter on a quiet cluster: view %d, flash %q", m.currentID(), m.flash)
	}
}

func TestThemeCycleAndBackground(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	m := goldenModel(t, "default", 120, 40)
	press(m, "t")
	if m.themeName == "default" {
		t.Fatal("t did not change the theme")
	}
	if !strings.Contains(plain(m), "theme "+m.themeName) {
		t.Fatal("status bar does not name the theme")
	}
	m.Update(tea.BackgroundColorMsg{Color: lipgloss.Color("#ffffff")})
	if m.isDark {
		t.Fatal("a white background is not dark")
	}
}

func TestSnapshotFlow(t *testing.T) {
	feed := newFakeFeed()
	defer feed.close()
	m, err := New(feed, Options{now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	m.Update(windowSize(120, 40))
	snap := testSnapshot()
	feed.snaps <- snap
	msg := waitSnapshot(feed.Snapshots())()
	_, cmd := m.Update(msg)
	if !m.deriving {
		t.Fatal("no derivation started")
	}
	// A second snapshot while deriving is coalesced.
	m.Update(snapshotMsg{snap})
	if !m.dirty {
		t.Fatal("second snapshot not remembered")
	}
	for _, c := range cmd().(tea.BatchMsg) {
		if c == nil {
			continue
		}
		done := make(chan tea.Msg, 1)
		go func() { done <- c() }()
		select {
		case msg := <-done:
			if ix, ok := msg.(indexMsg); ok {
				_, next := m.Update(ix)
				if next == nil || !m.deriving {
					t.Fatal("dirty snapshot not derived again")
				}
			}
		case <-time.After(100 * time.Millisecond): // the re-armed wait
		}
	}
	if m.ix.snap != snap || !strings.Contains(plain(m), "cluster3") {
		t.Fatal("snapshot not shown")
	}
}

func TestWithoutFeedAndEmptySnapshot(t *testing.T) {
	// No feed: the service view predicts from the default viewpoints.
	m := newTestModel(t, "default", 120, 40, testSnapshot(), nil)
	m.openService(helloHost)
	out := plain(m)
	if !strings.Contains(out, "PREDICTED (3)") || !strings.Contains(out, "no xDS stream for this viewpoint") || !strings.Contains(out, "192.168.60.9:15443") {
		t.Fatalf("prediction-only service view:\n%s", out)
	}
	// An empty snapshot draws every view.
	m = newTestModel(t, "default", 80, 24, &model.Snapshot{Time: testNow}, nil)
	for _, id := range []viewID{viewClusters, viewServices, viewProblems, viewEvents} {
		m.push(id)
		checkSize(t, m.View().Content, 80, 24)
		press(m, "j", "enter", "tab", "k")
		checkSize(t, m.View().Content, 80, 24)
	}
	m.openService("nope.default.svc.cluster.local")
	if out := plain(m); !strings.Contains(out, "not in the latest snapshot") {
		t.Fatalf("missing service:\n%s", out)
	}
}

func TestMouseWheel(t *testing.T) {
	m := newTestModel(t, "default", 80, 24, bigSnapshot(100, 1), nil)
	m.push(viewServices)
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if m.services.list.cur != 6 {
		t.Fatalf("wheel down twice: cursor %d", m.services.list.cur)
	}
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if m.services.list.cur != 3 {
		t.Fatalf("wheel up: cursor %d", m.services.list.cur)
	}
}
