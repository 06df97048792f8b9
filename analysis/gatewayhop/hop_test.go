package gatewayhop

import (
	"strings"
	"testing"

	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

// check follows helloworld:5000 (and subset) into network2 through its
// gateway in snap.
func check(snap *model.Snapshot, subset string) Hop {
	return checkerOf(snap).Check("network2", "192.168.60.9", 15443, meshtest.Hello, 5000, subset)
}

func gatewaySvc(s *model.Snapshot, cluster string) *model.ServiceInCluster {
	return s.Service(model.Hostname("istio-eastwestgateway", "istio-system")).Clusters[cluster]
}

func TestHopHolds(t *testing.T) {
	h := check(meshtest.Lab(), "")
	if h.State != Holds || strings.Join(h.Endpoints, ",") != "10.144.0.15:5000" || h.Listener != "0.0.0.0_15443" || len(h.Elsewhere) != 0 {
		t.Fatalf("%+v", h)
	}
	if p := h.Path(); p != "→ 192.168.60.9:15443 → SNI outbound_.5000_._.helloworld.sample.svc.cluster.local ✓ → 1 endpoint 10.144.0.15:5000 ✓" {
		t.Errorf("path %q", p)
	}
	cfg := checkerOf(meshtest.Lab()).config(checkerOf(meshtest.Lab()).Gateways()[1].Pods[0])
	if len(cfg.Listeners) != 1 || cfg.Gateways[0] != "istio-system/cross-network-gateway" {
		t.Fatalf("config %+v", cfg)
	}
	var snis []string
	for _, c := range cfg.Listeners[0].Chains {
		snis = append(snis, c.SNI)
	}
	// Every service of the gateway's scope matching *.local: helloworld
	// and the gateway Service itself.
	if got := strings.Join(snis, " "); got != "outbound_.5000_._.helloworld.sample.svc.cluster.local outbound_.15443_._.istio-eastwestgateway.istio-system.svc.cluster.local" {
		t.Errorf("chains %s", got)
	}
	if len(cfg.Clusters) != 2 || cfg.Clusters[0].Type != "EDS" {
		t.Errorf("clusters %+v", cfg.Clusters)
	}
}

// TestHopBreaks: each failure of the second hop, where it breaks and why.
func TestHopBreaks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(s *model.Snapshot)
		subset string
		state  State
		step   Step
		why    string
	}{
		{"no Gateway", func(s *model.Snapshot) { s.IstioGateways = nil }, "", Breaks, stepListener, "no Gateway selects pod istio-eastwestgateway-7b9c5d6f8-k2x4p"},
		{"selector misses", func(s *model.Snapshot) { s.IstioGateways[0].Selector = map[string]string{"istio": "ingressgateway"} }, "", Breaks, stepListener, "no Gateway selects"},
		{"not AUTO_PASSTHROUGH", func(s *model.Snapshot) { s.IstioGateways[0].Servers[0].TLSMode = model.TLSPassthrough }, "", Breaks, stepListener, "have no AUTO_PASSTHROUGH server"},
		{"hosts miss", func(s *model.Snapshot) { s.IstioGateways[0].Servers[0].Hosts = []string{"*.global"} }, "", Breaks, stepListener, "no service of the gateway's scope matches"},
		{"hosts miss one", func(s *model.Snapshot) {
			s.IstioGateways[0].Servers[0].Hosts = []string{"*.istio-system.svc.cluster.local"}
		}, "", Breaks, stepChain, "(*.istio-system.svc.cluster.local) do not match helloworld"},
		{"namespace prefix restricts nothing", func(s *model.Snapshot) { s.IstioGateways[0].Servers[0].Hosts = []string{"other/*.local"} }, "", Holds, "", ""},
		{"unknown tls mode", func(s *model.Snapshot) { s.IstioGateways[0].Error = "bad" }, "", Breaks, stepListener, "no Gateway selects"},
		{"service exportTo .", func(s *model.Snapshot) {
			s.Service(meshtest.Hello).Clusters["cluster2"].ExportTo = []string{"."}
			s.Service(meshtest.Hello).Clusters["cluster1"].ExportTo = []string{"."}
		}, "", Breaks, stepChain, "not visible from the gateway's namespace istio-system"},
		{"subset hidden by exportTo", func(s *model.Snapshot) {
			s.DestinationRules = []model.DestinationRule{{Cluster: "cluster1", Namespace: "sample", Name: "helloworld", Host: "helloworld", ExportTo: []string{"."},
				Subsets: []model.Subset{{Name: "v2", Labels: map[string]string{"version": "v2"}}}}}
		}, "v2", Breaks, stepChain, "sample/helloworld (exportTo .) declares it but is not visible from istio-system"},
		{"subset visible", func(s *model.Snapshot) {
			s.DestinationRules = []model.DestinationRule{{Cluster: "cluster1", Namespace: "sample", Name: "helloworld", Host: "helloworld",
				Subsets: []model.Subset{{Name: "v2", Labels: map[string]string{"version": "v2"}}}}}
			s.Service(meshtest.Hello).Clusters["cluster2"].Endpoints[0].Labels = map[string]string{"version": "v2"}
		}, "v2", Holds, "", ""},
		{"port misses", func(s *model.Snapshot) { s.IstioGateways[0].Servers[0].Port = 15444 }, "", Breaks, stepListener, "reaches pod port 15443, but the gateway's AUTO_PASSTHROUGH listener is on 15444"},
		{"targetPort followed", func(s *model.Snapshot) {
			gs := gatewaySvc(s, "cluster2")
			gs.Ports = []model.ServicePort{{Name: "tls", Port: 15443, TargetPort: "15444"}}
			gs.Endpoints[0].Ports = []model.EndpointPort{{Name: "tls", Port: 15444}}
		}, "", Holds, "", ""},
		{"no network", func(s *model.Snapshot) {
			s.Proxies[1].Injected.Network = ""
			delete(gatewaySvc(s, "cluster2").Endpoints[0].Labels, model.LabelNetwork)
		}, "", Breaks, stepEndpoint, "sends no NETWORK"},
		{"view of another network", func(s *model.Snapshot) { s.Proxies[1].Injected.NetworkView = "network1" }, "", Breaks, stepEndpoint, `REQUESTED_NETWORK_VIEW is "network1"`},
		{"no view", func(s *model.Snapshot) { s.Proxies[1].Injected.NetworkView = "" }, "", Doubtful, "", "192.168.60.113:15443"},
		{"not a router", func(s *model.Snapshot) { s.Proxies[1].Injected.Kind = model.ProxySidecar }, "", Breaks, stepPods, "runs no istio-proxy started as a router"},
		{"no proxy", func(s *model.Snapshot) { s.Proxies = s.Proxies[:1] }, "", Breaks, stepPods, "runs no istio-proxy"},
		{"not ready", func(s *model.Snapshot) { gatewaySvc(s, "cluster2").Endpoints[0].Ready = false }, "", Breaks, stepPods, "none of the 1 pod(s)"},
		{"no pods", func(s *model.Snapshot) { gatewaySvc(s, "cluster2").Endpoints = nil }, "", Breaks, stepPods, "has no pods behind it (selector istio=eastwestgateway)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := meshtest.Lab()
			tc.edit(s)
			h := check(s, tc.subset)
			if h.State != tc.state || h.Step != tc.step || !strings.Contains(h.Why, tc.why) {
				t.Errorf("got %s at %q: %s\npath: %s", h.State, h.Step, h.Why, h.Path())
			}
		})
	}
}

// checkerOf is a Checker of snap whose every control plane sees all of it.
func checkerOf(snap *model.Snapshot) *Checker {
	ix := horizon.NewIndex(snap)
	return NewChecker(snap, func(string) (*model.Snapshot, *horizon.Index) { return snap, ix }, nil)
}
