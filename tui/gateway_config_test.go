package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/gatewayhop"
	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/xdsclient"
)

// gatewayConfigFeed adds gateway streams to the config feed.
type gatewayConfigFeed struct {
	*configFeed
	names []string
	sent  []explain.SentGateway
}

func (f *gatewayConfigFeed) GatewayNames() []string              { return f.names }
func (f *gatewayConfigFeed) SentGateways() []explain.SentGateway { return f.sent }

// TestGatewayConfigView: ":pc gateway@network2" starts the gateway's
// stream and shows its SNI listener and clusters beside the prediction;
// a gateway that does not exist, or whose pods cannot be found, is a
// clear flash.
func TestGatewayConfigView(t *testing.T) {
	snap := meshtest.Lab()
	sni := "outbound_.5000_._.helloworld.sample.svc.cluster.local"
	cfg := ProxyConfig{Clusters: []xdsclient.Cluster{{Name: sni, Type: "EDS"}},
		Listeners: []xdsclient.Listener{{Name: "0.0.0.0_15443", Port: 15443, FilterChains: 1, SNIChains: []xdsclient.SNIChain{{ServerNames: []string{sni}, Cluster: sni}}}}}
	w := gatewayhop.Gateways(snap)[1].Pods[0]
	feed := &gatewayConfigFeed{configFeed: &configFeed{fakeFeed: testFeed(snap), cfg: map[string]ProxyConfig{"gateway@network2": cfg}}, names: []string{"gateway@network2"},
		sent: []explain.SentGateway{{ControlPlane: "cluster1", Gateway: "network2 192.168.60.9:15443", Workload: w, Listeners: cfg.Listeners, Clusters: cfg.Clusters}}}
	m := newTestModel(t, "mono", 140, 40, snap, feed)
	m.runCommand("pc gateway@network2")
	if m.currentID() != viewConfig || len(feed.watched) != 1 || feed.watched[0] != "gateway@network2" {
		t.Fatalf("view %v, watched %v, flash %q", m.currentID(), feed.watched, m.flash)
	}
	out := ansi.Strip(m.config.render(m.vc(), 140, 40))
	for _, want := range []string{"LISTENER 0.0.0.0_15443 (1 SNI chains)", sni + " → " + sni, "SNI-DNAT CLUSTERS (1)",
		"AGAINST THE PREDICTION (pod istio-eastwestgateway-7b9c5d6f8-k2x4p, istiod cluster1)",
		"listener 0.0.0.0_15443 has no filter chain for outbound_.15443_._.istio-eastwestgateway.istio-system.svc.cluster.local"} {
		if !strings.Contains(out, want) {
			t.Errorf("gateway config lacks %q:\n%s", want, out)
		}
	}
	m.runCommand("pc gateway@network9")
	if !strings.Contains(m.flash, `no single gateway "gateway@network9" (gateways: gateway@network2)`) {
		t.Errorf("unknown gateway: flash %q", m.flash)
	}
	// network1's gateway Service has no pods: nothing to impersonate.
	gws := snap.Service("istio-eastwestgateway.istio-system.svc.cluster.local")
	gws.Clusters["cluster1"].Endpoints = nil
	m.runCommand("pc gateway@network1")
	if !strings.Contains(m.flash, "gateway@network1: gateway Service istio-system/istio-eastwestgateway in cluster1 has no pods behind it (selector istio=eastwestgateway)") {
		t.Errorf("gateway without pods: flash %q", m.flash)
	}
}

// TestHopLines: the second hop under a gateway endpoint, held or broken.
func TestHopLines(t *testing.T) {
	text := func(h gatewayhop.Hop) string {
		var out []string
		for _, l := range hopLines(h, 60) {
			var b strings.Builder
			for _, s := range l {
				b.WriteString(s.text)
			}
			out = append(out, b.String())
		}
		return strings.Join(out, "\n")
	}
	if got := text(gatewayhop.Hop{State: gatewayhop.Holds, Endpoints: []string{"10.144.0.15:5000"}}); !strings.Contains(got, "second hop ✓ 10.144.0.15:5000") {
		t.Errorf("holds: %q", got)
	}
	got := text(gatewayhop.Hop{State: gatewayhop.Breaks, Why: "no Gateway selects pod istio-eastwestgateway-7b9c5d6f8-k2x4p in the config of istiod cluster2: istiod builds it no listener"})
	if !strings.HasPrefix(got, "   second hop ✗ no Gateway selects pod") || !strings.Contains(got, "\n     ") {
		t.Errorf("breaks: %q", got)
	}
}
