package tui

import (
	"fmt"
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

// goldenCase is one screen drawn at a fixed size and compared with its
// golden file (testdata/TestGolden/NAME.golden).
type goldenCase struct {
	name  string
	model func(t *testing.T, w, h int) *Model // nil: goldenModel, default theme
	w, h  int
	// open drives the model to the screen (keys, commands) and checks
	// where it landed.
	open func(t *testing.T, m *Model)
	// mono keeps the escape sequences (the mono theme's golden).
	mono bool
	// want are on the screen; after runs once the golden matched.
	want  []string
	after func(t *testing.T, m *Model)
}

func TestGolden(t *testing.T) {
	onView := func(id viewID, keys ...string) func(*testing.T, *Model) {
		return func(t *testing.T, m *Model) {
			t.Helper()
			press(m, keys...)
			if m.currentID() != id {
				t.Fatalf("view %d, want %d (flash %q)", m.currentID(), id, m.flash)
			}
		}
	}
	command := func(id viewID, line string) func(*testing.T, *Model) {
		return func(t *testing.T, m *Model) {
			t.Helper()
			press(m, ":")
			typeText(m, line)
			onView(id, "enter")(t, m)
		}
	}
	pushed := func(id viewID, keys ...string) func(*testing.T, *Model) {
		return func(t *testing.T, m *Model) {
			t.Helper()
			m.push(id)
			onView(id, keys...)(t, m)
		}
	}
	for _, c := range []goldenCase{
		{name: "FirstFrame", model: func(t *testing.T, w, h int) *Model { return newTestModel(t, "default", w, h, nil, nil) }, w: 120, h: 40,
			want: []string{"waiting for clusters…"}},
		{name: "Clusters", w: 120, h: 40},
		{name: "Clusters80x24", w: 80, h: 24},
		{name: "Services", w: 120, h: 40, open: command(viewServices, "svc")},
		{name: "ServicesMono", model: monoModel, w: 120, h: 40, mono: true,
			open: func(t *testing.T, m *Model) {
				m.push(viewServices)
				press(m, "/")
				typeText(m, "hel")
				onView(viewServices, "enter")(t, m)
			}},
		{name: "Service", w: 120, h: 40,
			open: func(t *testing.T, m *Model) {
				m.push(viewServices)
				press(m, "/")
				typeText(m, "hello")
				press(m, "enter", "enter")
				if m.currentID() != viewService || m.service.host != helloHost {
					t.Fatalf("enter did not open %s (view %d, host %q)", helloHost, m.currentID(), m.service.host)
				}
			},
			want: []string{"192.168.60.9:15443"}}, // the gateway rewrite
		{name: "Problems", w: 120, h: 40,
			open: func(t *testing.T, m *Model) {
				press(m, ":")
				typeText(m, "prob")
				onView(viewProblems, "tab", "enter")(t, m) // :prob<tab> opens problems
			}},
		{name: "Events", w: 120, h: 40,
			open: func(t *testing.T, m *Model) {
				m.Update(eventsMsg{testEvents()})
				pushed(viewEvents)(t, m)
			}},
		{name: "Help", w: 120, h: 40, open: func(t *testing.T, m *Model) { press(m, "?") }},
		{name: "Compare", w: 120, h: 40,
			open: func(t *testing.T, m *Model) {
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
			},
			want: []string{"ONLY HERE, NOT IN cluster2/network2 (2)"}, // what only network1 gets
			after: func(t *testing.T, m *Model) {
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
			}},
		{name: "Diff", w: 120, h: 40, open: command(viewDiff, "diff network1 network2"),
			want: []string{"legacy-1@cluster2"}, // the pod only network2 reaches
			after: func(t *testing.T, m *Model) {
				press(m, "enter")
				if m.currentID() != viewCompare {
					t.Fatal("enter on a diff row should open the side-by-side compare")
				}
			}},
		{name: "ProxyConfig", model: proxyConfigModel, w: 120, h: 40, open: command(viewConfig, "pc network1 network2")},
		{name: "Proxies", model: fleetModel, w: 120, h: 40,
			open: func(t *testing.T, m *Model) {
				command(viewProxies, "proxies")(t, m)
				press(m, "down")
			},
			want: []string{"DISCONNECTED", "STALE 45s", "NACK", "network \"\"≠network2", "sidecar*"}},
		{name: "ProxiesWide", model: fleetModel, w: 160, h: 30, open: pushed(viewProxies)},
		{name: "Proxies80x24Filtered", model: fleetModel, w: 80, h: 24,
			open: func(t *testing.T, m *Model) {
				m.push(viewProxies)
				press(m, "/")
				typeText(m, "state=STALE,NACK")
				onView(viewProxies, "enter")(t, m)
			},
			// state=STALE,NACK keeps only the stale and the rejected.
			want: []string{"strasse-0"},
			after: func(t *testing.T, m *Model) {
				if strings.Contains(plain(m), "legacy-0") {
					t.Errorf("state=STALE,NACK keeps legacy-0:\n%s", plain(m))
				}
			}},
		{name: "Map", model: fleetModel, w: 120, h: 40, open: command(viewMap, "map")},
		{name: "Map80x24", model: fleetModel, w: 80, h: 24, open: pushed(viewMap)},
	} {
		t.Run(c.name, func(t *testing.T) {
			newModel := c.model
			if newModel == nil {
				newModel = func(t *testing.T, w, h int) *Model { return goldenModel(t, "default", w, h) }
			}
			m := newModel(t, c.w, c.h)
			if c.open != nil {
				c.open(t, m)
			}
			out := plain(m)
			if c.mono {
				out = m.View().Content
			}
			checkSize(t, out, c.w, c.h)
			for _, w := range c.want {
				if !strings.Contains(plain(m), w) {
					t.Errorf("the screen lacks %q:\n%s", w, plain(m))
				}
			}
			golden.RequireEqual(t, out)
			if c.after != nil {
				c.after(t, m)
			}
		})
	}
}

func monoModel(t *testing.T, w, h int) *Model { return goldenModel(t, "mono", w, h) }

// proxyConfigModel is the golden model with the proxy config of both
// viewpoints: network1's clusters, listeners and routes, network2's clusters.
func proxyConfigModel(t *testing.T, w, h int) *Model {
	snap := testSnapshot()
	hw := "outbound|5000||" + helloHost
	feed := &configFeed{fakeFeed: testFeed(snap), cfg: map[string]ProxyConfig{
		vp1.String(): {Clusters: []xdsclient.Cluster{{Name: hw, Type: "EDS", TLSMode: "auto"}, {Name: "BlackHoleCluster", Type: "STATIC", TLSMode: "none"}},
			Listeners: []xdsclient.Listener{{Name: "0.0.0.0_5000", Address: "0.0.0.0", Port: 5000, Direction: "outbound", FilterChains: 2, Routes: []string{"5000"}}},
			Routes:    []xdsclient.Route{{Name: "5000", VirtualHosts: []xdsclient.VirtualHost{{Name: "helloworld.sample.svc.cluster.local:5000", Routes: 1}}}}},
		vp2.String(): {Clusters: []xdsclient.Cluster{{Name: hw, Type: "EDS", TLSMode: "istio-mutual"}}},
	}}
	return newTestModel(t, "default", w, h, snap, feed)
}

// Every view keeps an exact frame at every size from 80×24 up.
func TestFrameSizes(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {81, 25}, {100, 30}, {120, 40}, {200, 60}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
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
		})
	}
}
