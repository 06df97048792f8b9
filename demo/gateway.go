package demo

import (
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tlsinspectorv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/tls_inspector/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/meshscope/meshscope/analysis/gatewayhop"
	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/model"
)

// The demo's control plane serves a gateway proxy (node type router, e.g.
// meshscope impersonating an east-west gateway pod) what istiod would: the
// second hop gatewayhop predicts — a listener per AUTO_PASSTHROUGH port
// with one SNI filter chain per service port and subset, the SNI-DNAT
// clusters and their endpoints — as istiod's builders shape them
// (networking/core/gateway.go builtAutoPassthroughFilterChains,
// cluster.go buildOutboundSniDnatClusters).

// allIstioMtlsALPNs are the ALPNs an AUTO_PASSTHROUGH chain matches.
var allIstioMtlsALPNs = []string{"istio", "istio-peer-exchange", "istio-http/1.0", "istio-http/1.1", "istio-h2"}

// routerResources are a gateway proxy's clusters, endpoints and listeners.
func routerResources(snap *model.Snapshot, ix *horizon.Index, v view, controlPlane string) map[resource.Type][]types.Resource {
	cfg := gatewayhop.Predict(snap, ix, controlPlane, v.workload())
	cds, eds := defaultClusters(), []types.Resource(nil)
	for _, c := range cfg.Clusters {
		p := cfg.Endpoints(c.Name)
		if p == nil {
			continue // a DNS cluster: the demo's mesh has none crossing networks
		}
		cds = append(cds, outboundEDSCluster(c.Name))
		eds = append(eds, loadAssignment(*p, snap.Service(c.Service)))
	}
	var lds []types.Resource
	for _, l := range cfg.Listeners {
		if l.Dropped == "" {
			lds = append(lds, sniListener(l))
		}
	}
	return map[resource.Type][]types.Resource{resource.ClusterType: cds, resource.EndpointType: eds, resource.ListenerType: lds}
}

// sniListener is an AUTO_PASSTHROUGH listener: TLS inspector, then one
// chain per SNI forwarding to the SNI-DNAT cluster of that name.
func sniListener(l gatewayhop.Listener) *listenerv3.Listener {
	out := &listenerv3.Listener{Name: l.Name, Address: socketAddress(strings.Split(l.Name, "_")[0], l.Port),
		ListenerFilters: []*listenerv3.ListenerFilter{listenerFilter("envoy.filters.listener.tls_inspector", &tlsinspectorv3.TlsInspector{})}}
	for _, c := range l.Chains {
		out.FilterChains = append(out.FilterChains, &listenerv3.FilterChain{
			FilterChainMatch: &listenerv3.FilterChainMatch{ServerNames: []string{c.SNI}, ApplicationProtocols: allIstioMtlsALPNs},
			Filters:          []*listenerv3.Filter{tcpProxy(c.SNI, c.SNI)},
		})
	}
	return out
}

// workload is the gateway pod a router node claims to be: its node ID's
// IP and pod, its metadata's namespace, labels, NETWORK, CLUSTER_ID and
// REQUESTED_NETWORK_VIEW.
func (v view) workload() gatewayhop.Workload {
	w := gatewayhop.Workload{Cluster: v.proxy.Cluster, Namespace: v.namespace, Pod: v.pod, IP: v.proxy.IP, Labels: v.labels, Ready: true,
		Proxy: &model.InjectedIdentity{Kind: model.ProxyGateway, Network: v.proxy.Network, ClusterID: v.proxy.Cluster,
			NetworkView: strings.Join(v.proxy.NetworkView, ",")}}
	return w
}

// routerView adds what a gateway's resources depend on beyond a sidecar's:
// its pod, namespace and labels (which Gateways select it).
func routerView(node *corev3.Node, v view) view {
	parts := strings.Split(node.GetId(), "~")
	if len(parts) != 4 || parts[0] != "router" {
		return v
	}
	v.router = true
	v.pod, _, _ = strings.Cut(parts[2], ".")
	f := node.GetMetadata().GetFields()
	v.namespace = f["NAMESPACE"].GetStringValue()
	v.labels = map[string]string{}
	for k, l := range f["LABELS"].GetStructValue().GetFields() {
		v.labels[k] = l.GetStringValue()
	}
	return v
}
