package watch

import (
	"net/netip"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshscope/meshscope/collector/build"
	"github.com/meshscope/meshscope/model"
)

// gatewayObj is a Gateway with the given labels, class, spec addresses
// ([type, value] pairs) and listeners.
func gatewayObj(labels map[string]any, class string, addrs [][2]string, listeners ...map[string]any) *unstructured.Unstructured {
	as := []any{}
	for _, a := range addrs {
		m := map[string]any{"value": a[1]}
		if a[0] != "" {
			m["type"] = a[0]
		}
		as = append(as, m)
	}
	ls := []any{}
	for _, l := range listeners {
		ls = append(ls, l)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
		"metadata": map[string]any{"name": "gw", "namespace": "istio-system", "labels": labels},
		"spec":     map[string]any{"gatewayClassName": class, "addresses": as, "listeners": ls},
		"status":   map[string]any{"addresses": []any{map[string]any{"type": "IPAddress", "value": "192.168.99.99"}}},
	}}
}

func listener(port int64, protocol string, tls map[string]any) map[string]any {
	l := map[string]any{"name": protocol, "port": port, "protocol": protocol}
	if tls != nil {
		l["tls"] = tls
	}
	return l
}

// TestGatewayAPIGateways: the sidecar network gateways istiod takes from
// a Gateway (handleGatewayResource, IsAutoPassthrough), read through the
// informer's transform.
func TestGatewayAPIGateways(t *testing.T) {
	net1 := map[string]any{model.LabelNetwork: "network1"}
	passthrough := map[string]any{"mode": "Passthrough"}
	hbone := listener(15008, "HBONE", map[string]any{"mode": "Terminate"})
	sa := "istio-system/gw"
	ref := "istio-system/gw"
	g := func(addr string, port, hbonePort uint32) model.Gateway {
		return model.Gateway{Network: "network1", Cluster: "c1", Address: addr, Port: port, HBONEPort: hbonePort, Hostname: !addrIsIP(addr),
			From: model.GatewayFromGatewayAPI, Gateway: ref, ServiceAccount: sa}
	}
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
		want []model.Gateway
	}{
		{"no network label", gatewayObj(nil, "istio", [][2]string{{"IPAddress", "1.1.1.1"}}, listener(15443, "TLS", passthrough)), nil},
		{"status addresses only: none", gatewayObj(net1, model.ClassEastWest, nil, hbone), nil},
		{"15443 TLS listener and HBONE, any class", gatewayObj(net1, "istio", [][2]string{{"IPAddress", "1.1.1.1"}}, listener(15443, "TLS", passthrough), hbone),
			[]model.Gateway{g("1.1.1.1", 15443, 0), g("1.1.1.1", 15008, 15008)}},
		{"every IPAddress and Hostname address; others skipped", gatewayObj(net1, "istio", [][2]string{{"IPAddress", "1.1.1.1"}, {"Hostname", "ew.example.com"}, {"", "1.1.1.2"}, {"NamedAddress", "x"}}, hbone),
			[]model.Gateway{g("1.1.1.1", 15008, 15008), g("ew.example.com", 15008, 15008)}},
		{"15443 without tls is no passthrough", gatewayObj(net1, "istio", [][2]string{{"IPAddress", "1.1.1.1"}}, listener(15443, "TCP", nil)), nil},
		{"listener-protocol option on another port", gatewayObj(net1, "istio", [][2]string{{"IPAddress", "1.1.1.1"}},
			listener(8443, "TLS", map[string]any{"mode": "Passthrough", "options": map[string]any{model.OptionListenerMode: model.ListenerAutoPassthrough}}), listener(15443, "TLS", passthrough)),
			[]model.Gateway{g("1.1.1.1", 8443, 0), g("1.1.1.1", 15443, 0)}},
		{"gatewayPort label moves the passthrough port", gatewayObj(map[string]any{model.LabelNetwork: "network1", model.LabelGatewayPort: "16443"}, "istio", [][2]string{{"IPAddress", "1.1.1.1"}},
			listener(15443, "TLS", passthrough), listener(16443, "TLS", passthrough)),
			[]model.Gateway{g("1.1.1.1", 16443, 0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := transformGateway(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			got := build.GatewayAPIGateways(&o.(*build.GatewayObject).K8sGateway, "c1")
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	// istio-remote: only for the istiod of its cluster, under the
	// name-istio-remote service account.
	o, _ := transformGateway(gatewayObj(net1, model.ClassRemote, [][2]string{{"IPAddress", "1.1.1.1"}}, hbone))
	got := build.GatewayAPIGateways(&o.(*build.GatewayObject).K8sGateway, "c1")
	if len(got) != 1 || !got[0].ConfigClusterOnly || got[0].ServiceAccount != "istio-system/gw-istio-remote" || got[0].UsedBy("c2") || !got[0].UsedBy("c1") {
		t.Errorf("istio-remote: %+v", got)
	}
	if s := got[0].Source(); s != "Gateway API Gateway istio-system/gw" {
		t.Errorf("source %q", s)
	}
}

// TestWaypointGateway: what istiod's waypoint resolution reads of a
// Gateway survives the transform (and a deep copy): the waypoint-for
// label and the HBONE listener's allowedRoutes.
func TestWaypointGateway(t *testing.T) {
	l := listener(15008, "HBONE", nil)
	l["allowedRoutes"] = map[string]any{"namespaces": map[string]any{"from": "Selector",
		"selector": map[string]any{"matchLabels": map[string]any{"team": "a"}}}}
	o, err := transformGateway(gatewayObj(map[string]any{model.LabelWaypointFor: "all"}, "istio-waypoint", nil, l, listener(15021, "HTTP", nil)))
	if err != nil {
		t.Fatal(err)
	}
	g := o.(*build.GatewayObject).DeepCopyObject().(*build.GatewayObject)
	o.(*build.GatewayObject).Listeners[0].AllowedSelector.MatchLabels["team"] = "changed"
	if g.WaypointFor != "all" || g.Listeners[0].AllowedFrom != "Selector" || g.Listeners[0].AllowedSelector.MatchLabels["team"] != "a" ||
		g.Listeners[1].AllowedFrom != "" || g.Listeners[1].AllowedSelector != nil {
		t.Errorf("waypoint Gateway read as %+v", g.K8sGateway)
	}
}

func addrIsIP(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}
