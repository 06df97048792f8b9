package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/meshscope/meshscope/xdsclient"
)

// configFeed adds proxy config to the test feed.
type configFeed struct {
	*fakeFeed
	cfg     map[string]ProxyConfig
	watched []string
}

func (f *configFeed) Config(vp string) (ProxyConfig, bool) { c, ok := f.cfg[vp]; return c, ok }
func (f *configFeed) WatchListeners(vp string)             { f.watched = append(f.watched, vp) }

func TestConfigView(t *testing.T) {
	hw := "outbound|5000||helloworld.sample.svc.cluster.local"
	feed := &configFeed{fakeFeed: testFeed(testSnapshot()), cfg: map[string]ProxyConfig{
		vp1.String(): {Clusters: []xdsclient.Cluster{{Name: hw, Type: "EDS", TLSMode: "auto"}, {Name: "BlackHoleCluster", Type: "STATIC", TLSMode: "none"}},
			Listeners: []xdsclient.Listener{{Name: "0.0.0.0_5000", Address: "0.0.0.0", Port: 5000, Direction: "outbound", FilterChains: 2, Routes: []string{"5000"}}}},
		vp2.String(): {Clusters: []xdsclient.Cluster{{Name: hw, Type: "EDS", TLSMode: "istio-mutual"}}},
	}}
	m := newTestModel(t, "mono", 120, 40, testSnapshot(), feed)
	m.runCommand("pc network1")
	if m.currentID() != viewConfig || len(feed.watched) != 1 {
		t.Fatalf("view %v, watched %v, flash %q", m.currentID(), feed.watched, m.flash)
	}
	out := ansi.Strip(m.config.render(m.vc(), 120, 30))
	for _, want := range []string{"CLUSTERS (2)", hw, "LISTENERS (1)", "0.0.0.0_5000"} {
		if !strings.Contains(out, want) {
			t.Errorf("pc view lacks %q:\n%s", want, out)
		}
	}
	// Listeners subscribed when :pc opened arrive later: the view follows.
	m.runCommand("pc network2")
	if out := ansi.Strip(m.config.render(m.vc(), 120, 30)); !strings.Contains(out, "LISTENERS (0)") {
		t.Fatalf("before LDS:\n%s", out)
	}
	c := feed.cfg[vp2.String()]
	c.Listeners = []xdsclient.Listener{{Name: "virtualOutbound", Address: "0.0.0.0", Port: 15001, Direction: "outbound"}}
	feed.cfg[vp2.String()] = c
	m.Update(eventsMsg{[]xdsclient.Event{{Seq: 1, Time: testNow, Viewpoint: vp2.String(), Type: "lds"}}})
	if out := ansi.Strip(m.config.render(m.vc(), 120, 30)); !strings.Contains(out, "LISTENERS (1)") || !strings.Contains(out, "virtualOutbound") {
		t.Errorf("after an LDS push the view still shows:\n%s", out)
	}
	m.runCommand("pc network1 network2")
	out = ansi.Strip(m.config.render(m.vc(), 120, 30))
	for _, want := range []string{"< BlackHoleCluster", "≠ " + hw + ": EDS tls auto ↔ EDS tls istio-mutual", "< 0.0.0.0_5000"} {
		if !strings.Contains(out, want) {
			t.Errorf("pc diff lacks %q:\n%s", want, out)
		}
	}
}
