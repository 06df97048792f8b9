package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/sahilm/fuzzy"

	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/xdsclient"
)

func selectedHost(m *Model) string {
	v := m.services
	if len(v.order) == 0 {
		return ""
	}
	return v.ix.services[v.order[v.c.cur]].hostname
}

func TestCursorStaysOnHostnameWhenServicesAreInserted(t *testing.T) {
	snap := testSnapshot()
	m := newTestModel(t, "default", 120, 40, snap, nil)
	m.push(viewServices)
	press(m, "j", "j") // legacy, sleep
	if got := selectedHost(m); got != "sleep.sample.svc.cluster.local" {
		t.Fatalf("cursor on %q", got)
	}
	row := m.services.c.cur - m.services.c.top
	// A new snapshot inserts services before the selected one.
	next := testSnapshot()
	next.Version++
	for _, name := range []string{"aaa", "abc", "httpbin", "kiali"} {
		next.Services = append(next.Services, svc("sample", name, httpPort, map[string][]collector.Endpoint{"cluster1": nil}))
	}
	sortServices(next.Services)
	m.snap = next
	m.Update(indexMsg{buildIndex(next, nil)})
	if got := selectedHost(m); got != "sleep.sample.svc.cluster.local" {
		t.Fatalf("after the update the cursor is on %q", got)
	}
	if m.services.c.cur != 6 {
		t.Fatalf("cursor index %d, want 6", m.services.c.cur)
	}
	_ = row
	// And when the selected service disappears, the cursor stays put.
	gone := testSnapshot()
	gone.Services = append(gone.Services[:2:2], gone.Services[3:]...)
	m.Update(indexMsg{buildIndex(gone, nil)})
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
	host, line := selectedHost(m), m.services.c.cur-m.services.c.top
	next := bigSnapshot(100, 1)
	for i := 0; i < 5; i++ {
		next.Services = append(next.Services, svc("aaa", fmt.Sprintf("first-%d", i), httpPort, nil))
	}
	sortServices(next.Services)
	m.Update(indexMsg{buildIndex(next, nil)})
	if got := selectedHost(m); got != host {
		t.Fatalf("cursor moved from %q to %q", host, got)
	}
	if got := m.services.c.cur - m.services.c.top; got != line {
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
	if got := selectedHost(m); got != "legacy.legacy.svc.cluster.local" || len(m.services.order) != 1 {
		t.Fatalf("filter: %d rows, cursor on %q", len(m.services.order), got)
	}
	press(m, "esc") // clears the filter, stays in the view
	if m.currentID() != viewServices || m.services.filter.active() || len(m.services.order) != 4 {
		t.Fatalf("esc: view %d, filter %q, %d rows", m.currentID(), m.services.filter.query, len(m.services.order))
	}
	if got := selectedHost(m); got != "legacy.legacy.svc.cluster.local" {
		t.Fatalf("clearing the filter moved the cursor to %q", got)
	}
}

func TestRunePositions(t *testing.T) {
	s := "straße.münchen.svc"
	ms := fuzzy.Find("ßmh", []string{s})
	if len(ms) != 1 {
		t.Fatalf("no match")
	}
	got := runePositions(s, ms[0].MatchedIndexes)
	r := []rune(s)
	var picked string
	for _, p := range got {
		picked += string(r[p])
	}
	if picked != "ßmh" {
		t.Fatalf("rune positions %v pick %q from byte offsets %v", got, picked, ms[0].MatchedIndexes)
	}
}

// The fuzzy highlight marks exactly the matched characters of a
// non-ASCII hostname, after converting byte offsets to runes.
func TestFuzzyHighlightNonASCII(t *testing.T) {
	m := goldenModel(t, "mono", 120, 40)
	m.push(viewServices)
	press(m, "/")
	typeText(m, "ßmü")
	if n := len(m.services.order); n != 1 {
		t.Fatalf("%d rows match ßmü", n)
	}
	out := m.View().Content
	hl := m.st.Match.Inherit(m.st.Selection)
	for _, want := range []string{hl.Render("ß"), hl.Render("m"), hl.Render("ü")} {
		if !strings.Contains(out, want) {
			t.Errorf("highlighted %q not in the frame", ansi.Strip(want))
		}
	}
	// Unit check of highlight(): rune 1 (ü) highlighted, width exact.
	base, mark := lipgloss.NewStyle(), lipgloss.NewStyle().Bold(true)
	got := highlight("müller", 10, []int{1}, base, mark)
	if ansi.Strip(got) != "müller    " || !strings.Contains(got, mark.Render("ü")) {
		t.Errorf("highlight = %q", got)
	}
	// Truncated with an ellipsis, still exact width.
	got = highlight("straße.münchen.svc.cluster.local", 12, []int{4, 8}, base, mark)
	if w := ansi.StringWidth(got); w != 12 || !strings.HasSuffix(ansi.Strip(got), "…") {
		t.Errorf("truncated highlight %q (width %d)", ansi.Strip(got), w)
	}
}

func TestFuzzyNarrowsFromPreviousMatches(t *testing.T) {
	names := []string{"alpha", "beta", "gamma", "helloworld", "hello-v2", "shell"}
	var f fuzzyFilter
	name := func(i int) string { return names[i] }
	f.set("he", len(names), name, true)
	if len(f.matched) != 3 {
		t.Fatalf("he matched %v", f.matched)
	}
	f.set("hell", len(names), name, true)
	if len(f.matched) != 3 {
		t.Fatalf("hell matched %v", f.matched)
	}
	f.set("hellow", len(names), name, true)
	if len(f.matched) != 1 || names[f.matched[0]] != "helloworld" {
		t.Fatalf("hellow matched %v", f.matched)
	}
	if f.match(4) {
		t.Fatal("hello-v2 still matches hellow")
	}
	f.set("h", len(names), name, true) // shorter: searched afresh
	if len(f.matched) != 4 {
		t.Fatalf("h matched %v", f.matched)
	}
}

// Membership by the case-folded subsequence test is exactly sahilm/fuzzy's.
func TestSubsequenceIsFuzzyMembership(t *testing.T) {
	words := []string{"helloworld.sample", "HELLO", "straße.münchen", "ΣίσυφοςΣ", "a\x00b", "aba", "abxc", "the black knight", "", "ǅemal"}
	pats := []string{"h", "hw", "HeL", "ßm", "σς", "ab", "b", "abc", "tk", "aa", "ǆ", "x", "dž"}
	for _, w := range words {
		for _, p := range pats {
			lib := len(fuzzy.Find(p, []string{w})) == 1
			if got := subsequenceFold([]rune(p), w); got != lib {
				t.Errorf("%q in %q: subsequence %v, sahilm/fuzzy %v", p, w, got, lib)
			}
		}
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

func TestCommandCompletion(t *testing.T) {
	for in, want := range map[string]string{"pro": "problems", "e": "events", "s": "svc", "cl": "clusters", "": "", "x": "x", "q": "quit"} {
		if got := complete(in); got != want {
			t.Errorf("complete(%q) = %q, want %q", in, got, want)
		}
	}
	m := goldenModel(t, "default", 120, 40)
	press(m, ":")
	typeText(m, "ev")
	if out := plain(m); !strings.Contains(out, ":ev█") || !strings.Contains(out, "events") {
		t.Fatalf("command line not shown:\n%s", out)
	}
	press(m, "tab")
	if string(m.input) != "events" {
		t.Fatalf("tab completed to %q", string(m.input))
	}
	press(m, "enter")
	if m.currentID() != viewEvents || m.mode != inputNone {
		t.Fatalf("view %d, mode %d", m.currentID(), m.mode)
	}
	press(m, ":")
	typeText(m, "nope")
	press(m, "enter")
	if !strings.Contains(plain(m), "unknown command") {
		t.Fatal("unknown command not reported")
	}
	// k9s aliases.
	press(m, ":")
	typeText(m, "pb")
	press(m, "enter")
	if m.currentID() != viewProblems {
		t.Fatalf(":pb opened view %d", m.currentID())
	}
	// esc leaves command mode without running anything.
	press(m, ":")
	typeText(m, "svc")
	press(m, "esc")
	if m.currentID() != viewProblems || m.mode != inputNone {
		t.Fatal("esc ran the command")
	}
	// :q quits.
	press(m, ":")
	typeText(m, "q")
	_, cmd := m.Update(keyMsg("enter"))
	if cmd == nil {
		t.Fatal(":q did nothing")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal(":q did not quit")
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
	snap.Service(helloHost).Ports = append(snap.Service(helloHost).Ports, collector.ServicePort{Name: "grpc", Port: 9000})
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
	press(m, "j", "enter") // drop on legacy
	if m.currentID() != viewService || m.service.host != "legacy.legacy.svc.cluster.local" {
		t.Fatalf("enter on a drop: view %d host %q", m.currentID(), m.service.host)
	}
	if !strings.Contains(plain(m), "no-mtls") {
		t.Error("the dropped endpoint's reason is not shown")
	}
}

func TestEventsPauseAndFilter(t *testing.T) {
	m := goldenModel(t, "default", 120, 40)
	m.push(viewEvents)
	evs := testEvents()
	m.Update(eventsMsg{evs[:3]})
	press(m, "p")
	m.Update(eventsMsg{evs[3:]})
	if len(m.events.order) != 3 || !strings.Contains(plain(m), "PAUSED, 2 new") {
		t.Fatalf("paused timeline has %d rows", len(m.events.order))
	}
	press(m, "p")
	if len(m.events.order) != 5 {
		t.Fatalf("resumed timeline has %d rows", len(m.events.order))
	}
	press(m, "/")
	typeText(m, "eds")
	press(m, "enter")
	if len(m.events.order) != 1 || m.events.all[m.events.order[0]].Type != "eds" {
		t.Fatalf("filter eds: %d rows", len(m.events.order))
	}
	if !strings.Contains(plain(m), "endpoints +1 -0") {
		t.Error("endpoint change summary missing")
	}
	press(m, "esc")
	if len(m.events.order) != 5 {
		t.Fatal("esc did not clear the filter")
	}
	// The cursor stays on its event while new ones arrive above it.
	press(m, "j")
	key := m.events.c.key
	m.Update(eventsMsg{[]xdsclient.Event{{Seq: 9, Time: testNow, ControlPlane: "istiod-cluster1", Viewpoint: vp1.String(), Type: "eds"}}})
	if m.events.c.key != key || m.events.c.cur != 4 {
		t.Fatalf("cursor moved to %q (%d)", m.events.c.key, m.events.c.cur)
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
	m = newTestModel(t, "default", 80, 24, &collector.Snapshot{Time: testNow}, nil)
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
	if m.services.c.cur != 6 {
		t.Fatalf("wheel down twice: cursor %d", m.services.c.cur)
	}
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if m.services.c.cur != 3 {
		t.Fatalf("wheel up: cursor %d", m.services.c.cur)
	}
}
