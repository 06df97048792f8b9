package horizon

import (
	"strings"
	"testing"

	"github.com/meshscope/meshscope/model"
)

// TestMTLSPolicies: which setting turns mTLS off for a cross-network
// endpoint, as istiod's mtlsChecker decides it.
func TestMTLSPolicies(t *testing.T) {
	net1 := Proxy{Cluster: "cluster1", Network: "network1", Namespace: "sample"}
	pa := func(ns, name string, sel map[string]string, mode string, ports map[uint32]string) model.PeerAuthentication {
		return model.PeerAuthentication{Cluster: "cluster1", Namespace: ns, Name: name, Selector: sel, Mode: mode, PortModes: ports}
	}
	dr := func(ns, name, host, mode string, ports map[uint32]string) model.DestinationRule {
		return model.DestinationRule{Cluster: "cluster1", Namespace: ns, Name: name, Host: host, TLSMode: mode, PortTLS: ports}
	}
	app := map[string]string{"app": "helloworld"}
	cases := []struct {
		name, istiod string
		pas          []model.PeerAuthentication
		drs          []model.DestinationRule
		noLabel      bool
		proxy        Proxy
		cause        string // "" = sent through the gateway
	}{
		{name: "no policies", istiod: "default PERMISSIVE"},
		{name: "workload PA DISABLE", istiod: "authn workload policy", pas: []model.PeerAuthentication{pa("sample", "off", app, "DISABLE", nil)}, cause: CausePeerAuthentication},
		{name: "namespace PA DISABLE", istiod: "authn namespace policy", pas: []model.PeerAuthentication{pa("sample", "default", nil, "DISABLE", nil)}, cause: CausePeerAuthentication},
		{name: "mesh PA DISABLE", istiod: "authn mesh policy in the root namespace", pas: []model.PeerAuthentication{pa("istio-system", "default", nil, "DISABLE", nil)}, cause: CausePeerAuthentication},
		{name: "namespace STRICT over mesh DISABLE", istiod: "namespace policy wins over mesh",
			pas: []model.PeerAuthentication{pa("istio-system", "default", nil, "DISABLE", nil), pa("sample", "default", nil, "STRICT", nil)}},
		{name: "workload UNSET inherits namespace DISABLE", istiod: "UNSET inherits",
			pas: []model.PeerAuthentication{pa("sample", "wl", app, "UNSET", nil), pa("sample", "default", nil, "DISABLE", nil)}, cause: CausePeerAuthentication},
		{name: "port-level PERMISSIVE on the endpoint port", istiod: "portLevelMtls for the target port",
			pas: []model.PeerAuthentication{pa("sample", "wl", app, "DISABLE", map[uint32]string{5000: "PERMISSIVE"})}},
		{name: "PA in another namespace does not apply", istiod: "PA namespace = endpoint namespace", pas: []model.PeerAuthentication{pa("other", "default", nil, "DISABLE", nil)}},
		{name: "DR DISABLE", istiod: "tlsModeForDestinationRule", drs: []model.DestinationRule{dr("sample", "hw", "helloworld", "DISABLE", nil)}, cause: CauseDestinationRule},
		{name: "DR SIMPLE", istiod: "only ISTIO_MUTUAL is mTLS", drs: []model.DestinationRule{dr("sample", "hw", "helloworld.sample.svc.cluster.local", "SIMPLE", nil)}, cause: CauseDestinationRule},
		{name: "DR port-level DISABLE", istiod: "portLevelSettings override", drs: []model.DestinationRule{dr("sample", "hw", "helloworld", "ISTIO_MUTUAL", map[uint32]string{5000: "DISABLE"})}, cause: CauseDestinationRule},
		{name: "DR ISTIO_MUTUAL beats PA DISABLE", istiod: "a DR mode decides when present",
			drs: []model.DestinationRule{dr("sample", "hw", "helloworld", "ISTIO_MUTUAL", nil)}, pas: []model.PeerAuthentication{pa("sample", "default", nil, "DISABLE", nil)}},
		{name: "DR ISTIO_MUTUAL cannot rescue a pod without label", istiod: "tlsMode metadata stays disabled", noLabel: true,
			drs: []model.DestinationRule{dr("sample", "hw", "helloworld", "ISTIO_MUTUAL", nil)}, cause: CausePodLabel},
		{name: "DR in the proxy namespace first", istiod: "SidecarScope DR lookup: proxy namespace, service namespace, root",
			proxy: Proxy{Cluster: "cluster1", Network: "network1", Namespace: "client"},
			drs:   []model.DestinationRule{dr("client", "mine", "helloworld.sample.svc.cluster.local", "DISABLE", nil), dr("sample", "hw", "helloworld", "ISTIO_MUTUAL", nil)}, cause: CauseDestinationRule},
		{name: "wildcard DR in the root namespace", istiod: "root namespace DR, wildcard host",
			drs: []model.DestinationRule{dr("istio-system", "all", "*.sample.svc.cluster.local", "DISABLE", nil)}, cause: CauseDestinationRule},
		{name: "DR without TLS mode falls through to PA", istiod: "nil DR mode → label and PA",
			drs: []model.DestinationRule{dr("sample", "hw", "helloworld", "", nil)}, pas: []model.PeerAuthentication{pa("sample", "default", nil, "DISABLE", nil)}, cause: CausePeerAuthentication},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eps := []ep{seedEndpoints[0], {cluster: "cluster2", network: "network2", ip: "10.144.0.15", pod: "helloworld-v2", noMTLS: c.noLabel}}
			s := mesh(seedGateways, eps)
			for i := range s.Services[0].Clusters["cluster2"].Endpoints {
				s.Services[0].Clusters["cluster2"].Endpoints[i].Labels = map[string]string{"app": "helloworld"}
			}
			s.PeerAuthentications, s.DestinationRules = c.pas, c.drs
			proxy := net1
			if c.proxy.Namespace != "" {
				proxy = c.proxy
			}
			p := Predict(s, hello, 5000, proxy)
			got := ""
			for _, d := range p.Dropped {
				if d.Address == "10.144.0.15" {
					got = d.Cause
					if !strings.Contains(d.Why, "mTLS") {
						t.Errorf("why: %s", d.Why)
					}
				}
			}
			if got != c.cause {
				t.Errorf("istiod behaviour %q: cause %q, want %q (prediction %v)", c.istiod, got, c.cause, render(p))
			}
		})
	}
}
