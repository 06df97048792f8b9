package model

import "strings"

// The fleet: the pods that run an Istio proxy, or that ambient mode
// captures, with the identity their proxy was started with. istiod's
// injector writes ISTIO_META_NETWORK and ISTIO_META_CLUSTER_ID into the
// istio-proxy container's env once, at injection (pkg/kube/inject
// extractClusterAndNetwork): a pod keeps them until it is recreated, so a
// network label added after its pods started, or a wrong clusterName at
// install, leaves proxies that tell istiod an identity the mesh no longer
// gives them. The pod cache keeps that identity (interned per workload in
// the podTemplate), and the snapshot lists every such pod (ProxyPod).

// ProxyKind is what kind of proxy a pod runs.
type ProxyKind string

const (
	// ProxySidecar is an injected istio-proxy container next to an app.
	ProxySidecar ProxyKind = "sidecar"
	// ProxyGateway is a gateway deployment (istio-proxy started as "router").
	ProxyGateway ProxyKind = "router"
	// ProxyZtunnel is a ztunnel pod (ambient's node proxy).
	ProxyZtunnel ProxyKind = "ztunnel"
	// ProxyAmbient is an application pod captured by ambient mode: its
	// node's ztunnel is its proxy.
	ProxyAmbient ProxyKind = "ambient"
	// ProxyWaypoint is a waypoint, as istiod's syncz names its proxy type
	// (a pod of a waypoint Gateway runs istio-proxy as a router).
	ProxyWaypoint ProxyKind = "waypoint"
)

// InjectedIdentity is what a pod's istio-proxy container was started with.
type InjectedIdentity struct {
	Kind ProxyKind `json:"kind"`
	// Network and ClusterID are the container's ISTIO_META_NETWORK and
	// ISTIO_META_CLUSTER_ID ("" when not set: the proxy then sends no
	// NETWORK, and istiod takes its cluster as its own).
	Network   string `json:"network,omitempty"`
	ClusterID string `json:"clusterId,omitempty"`
	// Image is the proxy image; Version its tag up to the first '-'
	// (1.28.0 of proxyv2:1.28.0-distroless).
	Image   string `json:"image,omitempty"`
	Version string `json:"version,omitempty"`
	// Revision is the pod's istio.io/rev label, which the injector writes
	// (the revision whose istiod the proxy connects to; "" when absent).
	Revision string `json:"revision,omitempty"`
	// NetworkView is ISTIO_META_REQUESTED_NETWORK_VIEW as written (a
	// comma-separated list, a string so that the identity stays
	// comparable for the interner): the networks whose endpoints istiod
	// sends the proxy ("": every network). An east-west gateway's install
	// sets its own network.
	NetworkView string `json:"networkView,omitempty"`
	// RouterMode is ISTIO_META_ROUTER_MODE (sni-dnat on east-west
	// gateways; current istiod builds the SNI clusters from an
	// AUTO_PASSTHROUGH server whatever it says).
	RouterMode string `json:"routerMode,omitempty"`
	// Unprivileged is ISTIO_META_UNPRIVILEGED_POD=true: istiod then
	// builds no gateway listener below port 1024.
	Unprivileged bool `json:"unprivileged,omitempty"`
}

// NetworkViews is NetworkView split at commas (nil when unset), as istiod
// reads the StringList metadata.
func (id *InjectedIdentity) NetworkViews() []string {
	if id == nil || id.NetworkView == "" {
		return nil
	}
	var out []string
	for _, n := range strings.Split(id.NetworkView, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// ProxyPod is one pod of the fleet: where it is, the network istiod gives
// its endpoints today, and what its proxy was started with.
type ProxyPod struct {
	Cluster   string    `json:"cluster"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	IP        string    `json:"ip,omitempty"`
	Node      string    `json:"node,omitempty"`
	Kind      ProxyKind `json:"kind"`
	// Network is the network istiod derives for the pod today (its
	// label, else its cluster's default network, else meshNetworks).
	Network string `json:"network,omitempty"`
	Ready   bool   `json:"ready"`
	// Injected is nil for an ambient pod (it runs no proxy of its own).
	Injected *InjectedIdentity `json:"injected,omitempty"`
}

// Key is "cluster/namespace/name".
func (p ProxyPod) Key() string { return p.Cluster + "/" + p.Namespace + "/" + p.Name }

// ProxyID is the proxy ID istiod shows for the pod's proxy (NAME.NAMESPACE,
// the third field of the node ID).
func (p ProxyPod) ProxyID() string { return p.Name + "." + p.Namespace }
