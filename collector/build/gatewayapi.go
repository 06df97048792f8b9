package build

import (
	"strconv"

	"k8s.io/apimachinery/pkg/types"

	"github.com/meshscope/meshscope/model"
)

// Gateway API Gateways as sidecar network gateways. With
// PILOT_MULTI_NETWORK_DISCOVER_GATEWAY_API (default true) istiod's network
// manager reads every Gateway of every cluster it reads, whatever its
// class, next to the gateway Services (kube/controller/network.go
// handleGatewayResource, merged in (*Controller).NetworkGateways).

// GatewayAPIGateways returns the network gateways istiod takes from a
// Gateway of cluster (handleGatewayResource): none without the network
// label; else, for each spec address (not status: an address the
// controller reports is not read here) of type IPAddress or Hostname —
// an untyped one is skipped, as the API server defaults the type — one
// gateway per auto-passthrough listener (Port = its port) and one per HBONE
// listener (Port = HBONEPort = its port). Each carries the Gateway's
// service account. An istio-remote Gateway counts only for the istiod whose
// config cluster holds it (discoverRemoteGatewayResources).
func GatewayAPIGateways(g *model.K8sGateway, cluster string) []model.Gateway {
	if g.Network == "" {
		return nil
	}
	var out []model.Gateway
	ref := types.NamespacedName{Namespace: g.Namespace, Name: g.Name}.String()
	for _, a := range g.SpecAddresses {
		if a.Type != model.AddressTypeIP && a.Type != model.AddressTypeHostname {
			continue
		}
		add := func(port, hbone uint32) {
			out = append(out, model.Gateway{
				Network: g.Network, Cluster: cluster, Address: a.Value, Port: port, HBONEPort: hbone,
				Hostname: !isIP(a.Value), From: model.GatewayFromGatewayAPI, Gateway: ref,
				ServiceAccount: g.Namespace + "/" + g.ServiceAccount, ConfigClusterOnly: g.Class == model.ClassRemote,
			})
		}
		for _, l := range g.Listeners {
			if autoPassthrough(g, l) {
				add(l.Port, 0)
			}
		}
		for _, l := range g.Listeners {
			if l.Protocol == "HBONE" {
				add(l.Port, l.Port)
			}
		}
	}
	return out
}

// autoPassthrough mirrors kube.IsAutoPassthrough: a listener with tls whose
// listener-protocol option is auto-passthrough, or (on a networked Gateway)
// whose port is the gatewayPort label's, default 15443.
func autoPassthrough(g *model.K8sGateway, l model.GatewayListener) bool {
	if !l.TLS {
		return false
	}
	if l.ListenerMode == model.ListenerAutoPassthrough {
		return true
	}
	return g.Network != "" && strconv.FormatUint(uint64(l.Port), 10) == g.PassthroughPort
}
