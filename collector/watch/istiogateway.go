package watch

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/meshscope/meshscope/model"
)

// networking.istio.io Gateways: the servers istiod gives the gateway
// proxies they select. An east-west gateway carries cross-network traffic
// only because one of them (istio's cross-network-gateway) has an
// AUTO_PASSTHROUGH server selecting its pods (model/istiogateway.go).

var gvrIstioGateways = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "gateways"}

// resIstioGateways names the informer (the Gateway API's is "gateways").
const resIstioGateways = "istiogateways"

// IstioGateways parses the Istio Gateways of one cluster (ID cluster) that
// the predicted revision's istiod reads.
func (w *Watcher) IstioGateways(cluster string) []model.IstioGateway {
	return w.IstioGatewaysIn(cluster, w.ConfigRevision())
}

// IstioGatewaysIn parses those the istiod of revision rev reads.
func (w *Watcher) IstioGatewaysIn(cluster, rev string) []model.IstioGateway {
	return readIstioConfig(w.istioGateways, cluster, rev, parseIstioGateway)
}

// parseIstioGateway reads a Gateway's selector and servers. A server whose
// tls.mode istiod does not know makes the whole object unreadable for
// istiod (it cannot convert it), which Error says.
func parseIstioGateway(cluster string, u *unstructured.Unstructured) model.IstioGateway {
	g := model.IstioGateway{Cluster: cluster, Namespace: u.GetNamespace(), Name: u.GetName(), Created: u.GetCreationTimestamp().Time}
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	if sel, ok := spec["selector"]; ok && sel != nil {
		g.Selector = stringMap(sel)
		if g.Selector == nil {
			g.Selector = map[string]string{}
		}
	}
	servers, _ := spec["servers"].([]any)
	var errs []string
	for i, raw := range servers {
		m, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		s := model.GatewayServer{Hosts: stringList(m["hosts"])}
		s.Name, _ = m["name"].(string)
		s.Bind, _ = m["bind"].(string)
		if p, ok := m["port"].(map[string]any); ok {
			s.Port = toUint32(p["number"])
			s.PortName, _ = p["name"].(string)
			s.Protocol, _ = p["protocol"].(string)
		}
		if tls, ok := m["tls"].(map[string]any); ok {
			s.TLS = true
			s.TLSMode, _ = tls["mode"].(string)
			if s.TLSMode == "" {
				s.TLSMode = model.TLSPassthrough
			}
			if err := model.CheckServerTLSMode(s.TLSMode); err != nil {
				errs = append(errs, fmt.Sprintf("servers[%d] (port %d): %v", i, s.Port, err))
			}
		}
		g.Servers = append(g.Servers, s)
	}
	if len(errs) > 0 {
		g.Error = strings.Join(errs, "; ") + ": istiod cannot read this Gateway and ignores all of it"
	}
	return g
}
