package model

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// K8sGateway is a Gateway API Gateway as istiod's ambient index reads it.
type K8sGateway struct {
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Class     string `json:"class"`
	// Network is the Gateway's topology.istio.io/network label.
	Network string `json:"network,omitempty"`
	// ServiceAccount is istiod's GatewaySA: the annotation, else the name
	// (name-istio-remote for class istio-remote).
	ServiceAccount string            `json:"serviceAccount"`
	Listeners      []GatewayListener `json:"listeners,omitempty"`
	// Addresses are status.addresses: what the gateway controller (or
	// load balancer) reports.
	Addresses []GatewayAddress `json:"addresses,omitempty"`
	// SpecAddresses are spec.addresses, the addresses asked for: istiod's
	// sidecar network gateways come from these (see gatewayAPIGateways).
	SpecAddresses []GatewayAddress `json:"specAddresses,omitempty"`
	// WaypointFor is the Gateway's istio.io/waypoint-for label ("" when
	// it has none).
	WaypointFor string `json:"waypointFor,omitempty"`
	// PassthroughPort is the listener port istiod takes as auto-passthrough
	// on a networked Gateway: its networking.istio.io/gatewayPort label,
	// else "15443" (a string, compared as istiod does).
	PassthroughPort string `json:"passthroughPort,omitempty"`
}

// GatewayListener is one listener of a Gateway.
type GatewayListener struct {
	Name     string `json:"name"`
	Port     uint32 `json:"port"`
	Protocol string `json:"protocol"`
	// TLSMode is tls.mode (Terminate, Passthrough), "" when unset.
	TLSMode string `json:"tlsMode,omitempty"`
	// TLS is whether the listener has a tls block at all.
	TLS bool `json:"tls,omitempty"`
	// ListenerMode is the tls option gateway.istio.io/listener-protocol
	// ("auto-passthrough" makes an SNI-routed network gateway).
	ListenerMode string `json:"listenerMode,omitempty"`
	// AllowedFrom is allowedRoutes.namespaces.from (All, Same, Selector);
	// "" when the listener does not set it.
	AllowedFrom string `json:"allowedFrom,omitempty"`
	// AllowedSelector is allowedRoutes.namespaces.selector.
	AllowedSelector *metav1.LabelSelector `json:"allowedSelector,omitempty"`
}

// Gateway API address types (status.addresses[].type) istiod reads.
const (
	AddressTypeIP       = "IPAddress"
	AddressTypeHostname = "Hostname"
)

// GatewayAddress is one address of a Gateway (status or spec).
type GatewayAddress struct {
	// Type is IPAddress, Hostname or another type; "" when unset.
	Type  string `json:"type,omitempty"`
	Value string `json:"value"`
}

// Source is "namespace/name", the gateway's part of istiod's resource names.
func (g K8sGateway) Source() string {
	return types.NamespacedName{Namespace: g.Namespace, Name: g.Name}.String()
}
