package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/meshscope/meshscope/xdsclient"
)

// Goldens are View() at a fixed size. "Plain" ones are stripped of escape
// sequences (no colour, stable across themes); the mono one keeps them.
// Regenerate with: go test ./tui/ -run Golden -update

func plain(m *Model) string { return ansi.Strip(m.View().Content) }

// press presses keys, one after the other, as the program would: a
// navigation message a key asks for is delivered before the next key.
func press(m *Model, keys ...string) {
	for _, k := range keys {
		send(m, keyMsg(k))
	}
}

// send delivers msg, then the message of the command it returns (a key's
// commands are navigation messages, or tea.Quit, which Update ignores).
func send(m *Model, msg tea.Msg) {
	if _, cmd := m.Update(msg); cmd != nil {
		m.Update(cmd())
	}
}

// keyMsg builds the key press for a key name (as key.Matches sees it) or
// a single character.
func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

func typeText(m *Model, s string) {
	for _, r := range s {
		send(m, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// checkSize fails when the frame is not exactly w×h cells.
func checkSize(t *testing.T, out string, w, h int) {
	t.Helper()
	lines := strings.Split(out, "\n")
	if len(lines) != h {
		t.Fatalf("frame has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got != w {
			t.Fatalf("line %d is %d cells wide, want %d: %q", i, got, w, ansi.Strip(l))
		}
	}
}

func testEvents() []xdsclient.Event {
	base := testNow.Add(-10 * time.Second)
	return []xdsclient.Event{
		{Seq: 1, Time: base, ControlPlane: "istiod-cluster1", Viewpoint: vp1.String(), Type: xdsclient.EventConnect, Message: "connected to istiod-cluster1"},
		{Seq: 2, Time: base.Add(time.Second), ControlPlane: "istiod-cluster1", Viewpoint: vp1.String(), Type: "cds", Version: "2026-11-22T02:59:51Z/7", Resources: 42, Bytes: 81234, Added: []string{"a", "b"}},
		{Seq: 3, Time: base.Add(2 * time.Second), ControlPlane: "istiod-cluster1", Viewpoint: vp1.String(), Type: "eds", Version: "2026-11-22T02:59:52Z/8", Resources: 40, Bytes: 9000,
			Endpoints: []xdsclient.EndpointChange{{Cluster: "outbound|5000||" + helloHost, Change: xdsclient.EndpointAdded, Address: "192.168.60.9", Port: 15443, Weight: 2}}},
		{Seq: 1, Time: base.Add(3 * time.Second), ControlPlane: "istiod-cluster1", Viewpoint: vp2.String(), Type: xdsclient.EventNACK, Error: "cluster outbound|80||x: invalid"},
		{Seq: 2, Time: base.Add(4 * time.Second), ControlPlane: "istiod-cluster1", Viewpoint: vp2.String(), Type: xdsclient.EventDisconnect, Error: "stream reset by istiod; retrying in 2s"},
	}
}

func goldenModel(t *testing.T, theme string, w, h int) *Model {
	snap := testSnapshot()
	return newTestModel(t, theme, w, h, snap, testFeed(snap))
}

func TestGoldenFirstFrame(t *testing.T) {
	m := newTestModel(t, "default", 120, 40, nil, nil)
	out := plain(m)
	checkSize(t, out, 120, 40)
	if !strings.Contains(out, "waiting for clusters…") {
		t.Fatal("first frame does not say it waits for clusters")
	}
	golden.RequireEqual(t, out)
}

func TestGoldenClusters(t *testing.T) {
	m := goldenModel(t, "default", 120, 40)
	out := plain(m)
	checkSize(t, out, 120, 40)
	golden.RequireEqual(t, out)
}

func TestGoldenClusters80x24(t *testing.T) {
	m := goldenModel(t, "default", 80, 24)
	out := plain(m)
	checkSize(t, out, 80, 24)
	golden.RequireEqual(t, out)
}

func TestGoldenServices(t *testing.T) {
	m := goldenModel(t, "default", 120, 40)
	press(m, ":")
	typeText(m, "svc")
	press(m, "enter")
	out := plain(m)
	checkSize(t, out, 120, 40)
	golden.RequireEqual(t, out)
}

func TestGoldenServicesMono(t *testing.T) {
	m := goldenModel(t, "mono", 120, 40)
	m.push(viewServices)
	press(m, "/")
	typeText(m, "hel")
	press(m, "enter")
	out := m.View().Content
	checkSize(t, out, 120, 40)
	golden.RequireEqual(t, out)
}

func TestGoldenService(t *testing.T) {
	m := goldenModel(t, "default", 120, 40)
	m.push(viewServices)
	press(m, "/")
	typeText(m, "hello")
	press(m, "enter", "enter")
	if m.currentID() != viewService || m.service.host != helloHost {
		t.Fatalf("enter did not open %s (view %d, host %q)", helloHost, m.currentID(), m.service.host)
	}
	out := plain(m)
	checkSize(t, out, 120, 40)
	if !strings.Contains(out, "192.168.60.9:15443") {
		t.Error("the gateway rewrite 192.168.60.9:15443 is not shown")
	}
	golden.RequireEqual(t, out)
}

func TestGoldenProblems(t *testing.T) {
	m := goldenModel(t, "default", 120, 40)
	press(m, ":")
	typeText(m, "prob")
	press(m, "tab", "enter")
	if m.currentID() != viewProblems {
		t.Fatalf(":prob<tab> did not open problems")
	}
	out := plain(m)
	checkSize(t, out, 120, 40)
	golden.RequireEqual(t, out)
}

func TestGoldenEvents(t *testing.T) {
	m := goldenModel(t, "default", 120, 40)
	m.Update(eventsMsg{testEvents()})
	m.push(viewEvents)
	out := plain(m)
	checkSize(t, out, 120, 40)
	golden.RequireEqual(t, out)
}

func TestGoldenHelp(t *testing.T) {
	m := goldenModel(t, "default", 120, 40)
	press(m, "?")
	out := plain(m)
	checkSize(t, out, 120, 40)
	golden.RequireEqual(t, out)
}

// Every view keeps an exact frame at every size from 80×24 up.
func TestFrameSizes(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {81, 25}, {100, 30}, {120, 40}, {200, 60}} {
		m := goldenModel(t, "default", sz[0], sz[1])
		m.Update(eventsMsg{testEvents()})
		for _, id := range []viewID{viewClusters, viewServices, viewProblems, viewEvents} {
			m.push(id)
			checkSize(t, m.View().Content, sz[0], sz[1])
		}
		m.openService(helloHost)
		checkSize(t, m.View().Content, sz[0], sz[1])
		press(m, "?")
		checkSize(t, m.View().Content, sz[0], sz[1])
	}
}

func TestGoldenCompare(t *testing.T) {
	m := goldenModel(t, "default", 120, 40)
	m.push(viewServices)
	press(m, ":")
	typeText(m, "comp")
	press(m, "tab")
	typeText(m, "cluster1")
	press(m, "tab")
	if got := string(m.input); got != "compare cluster1/network1 " {
		t.Fatalf("completed to %q", got)
	}
	typeText(m, "network2")
	press(m, "enter")
	if m.currentID() != viewCompare || m.compare.host != helloHost || len(m.compare.views) != 2 {
		t.Fatalf("view %d host %q (%d views), flash %q", m.currentID(), m.compare.host, len(m.compare.views), m.flash)
	}
	out := plain(m)
	checkSize(t, out, 120, 40)
	if !strings.Contains(out, "ONLY HERE, NOT IN cluster2/network2 (2)") {
		t.Errorf("compare does not list what only network1 gets:\n%s", out)
	}
	golden.RequireEqual(t, out)
	press(m, "esc")
	if m.currentID() != viewServices {
		t.Fatal("esc from compare did not go back")
	}
	press(m, ":")
	typeText(m, "compare nowhere network2")
	press(m, "enter")
	if m.currentID() != viewServices || !strings.Contains(m.flash, "no single viewpoint") {
		t.Fatalf("bad viewpoint: view %d flash %q", m.currentID(), m.flash)
	}
}

func TestGoldenDiff(t *testing.T) {
	m := goldenModel(t, "default", 120, 40)
	press(m, ":")
	typeText(m, "diff network1 network2")
	press(m, "enter")
	if m.currentID() != viewDiff {
		t.Fatalf("view %d, flash %q", m.currentID(), m.flash)
	}
	out := plain(m)
	checkSize(t, out, 120, 40)
	if !strings.Contains(out, "legacy-1@cluster2") {
		t.Errorf("diff does not name the pod only network2 reaches:\n%s", out)
	}
	golden.RequireEqual(t, out)
	press(m, "enter")
	if m.currentID() != viewCompare {
		t.Fatal("enter on a diff row should open the side-by-side compare")
	}
}

func TestGoldenProxyConfig(t *testing.T) {
	snap := testSnapshot()
	hw := "outbound|5000||" + helloHost
	feed := &configFeed{fakeFeed: testFeed(snap), cfg: map[string]ProxyConfig{
		vp1.String(): {Clusters: []xdsclient.Cluster{{Name: hw, Type: "EDS", TLSMode: "auto"}, {Name: "BlackHoleCluster", Type: "STATIC", TLSMode: "none"}},
			Listeners: []xdsclient.Listener{{Name: "0.0.0.0_5000", Address: "0.0.0.0", Port: 5000, Direction: "outbound", FilterChains: 2, Routes: []string{"5000"}}},
			Routes:    []xdsclient.Route{{Name: "5000", VirtualHosts: []xdsclient.VirtualHost{{Name: "helloworld.sample.svc.cluster.local:5000", Routes: 1}}}}},
		vp2.String(): {Clusters: []xdsclient.Cluster{{Name: hw, Type: "EDS", TLSMode: "istio-mutual"}}},
	}}
	m := newTestModel(t, "default", 120, 40, snap, feed)
	press(m, ":")
	typeText(m, "pc network1 network2")
	press(m, "enter")
	if m.currentID() != viewConfig {
		t.Fatalf("view %d, flash %q", m.currentID(), m.flash)
	}
	out := plain(m)
	checkSize(t, out, 120, 40)
	golden.RequireEqual(t, out)
}
