package watch

import (
	"strings"
	"testing"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

func TestParseIstioGateway(t *testing.T) {
	g := parseIstioGateway("cluster1", meshtest.IstioObject(t, meshtest.CrossNetworkGateway))
	if g.Key() != "istio-system/cross-network-gateway" || g.Cluster != "cluster1" || g.Error != "" {
		t.Fatalf("%+v", g)
	}
	if g.Selector["istio"] != "eastwestgateway" || !g.Selects(map[string]string{"istio": "eastwestgateway", "app": "x"}) || g.Selects(map[string]string{"app": "x"}) {
		t.Errorf("selector %v", g.Selector)
	}
	if len(g.Servers) != 1 {
		t.Fatalf("servers %+v", g.Servers)
	}
	s := g.Servers[0]
	if s.Port != 15443 || s.PortName != "tls" || s.Protocol != "TLS" || !s.AutoPassthrough() || strings.Join(s.Hosts, ",") != "*.local" {
		t.Errorf("server %+v", s)
	}

	// No selector: every gateway proxy; a tls block without a mode is
	// PASSTHROUGH; an unknown mode makes the whole Gateway unreadable.
	g = parseIstioGateway("c", meshtest.IstioObject(t, `apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: g, namespace: ns}
spec:
  servers:
  - port: {number: 443, name: https, protocol: TLS}
    tls: {}
    hosts: ["ns/*.example.com"]
  - port: {number: 15443, name: tls, protocol: TLS}
    tls: {mode: AUTO_PASSTRHOUGH}
    hosts: ["*"]
`))
	if g.Selector != nil || !g.Selects(nil) {
		t.Errorf("no selector: %v", g.Selector)
	}
	if g.Servers[0].TLSMode != model.TLSPassthrough || g.Servers[0].AutoPassthrough() {
		t.Errorf("empty tls: %+v", g.Servers[0])
	}
	if got := strings.Join(g.Servers[0].SNIHosts(), ","); got != "*.example.com" {
		t.Errorf("SNI hosts %q: the namespace prefix restricts nothing", got)
	}
	if !strings.Contains(g.Error, `servers[1] (port 15443): tls.mode "AUTO_PASSTRHOUGH" is not one of PASSTHROUGH`) || !strings.Contains(g.Error, "ignores all of it") {
		t.Errorf("error %q", g.Error)
	}
}
