package collector

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Ambient mode. istiod's ambient index (pilot/pkg/serviceregistry/ambient)
// reads more than the endpoints of a service: which namespaces and pods are
// enrolled, every label of a Service (the mesh config's serviceScopeConfigs
// select global services by any label of the Service and its namespace),
// Gateway API Gateways (the east-west gateways of ambient multi-network),
// and pods' service accounts (the identities a global service is reached
// with). AmbientCluster carries those facts for one cluster; the prediction
// of what each istiod sends a ztunnel (collector/ambient) reads them.

// Labels and annotations of ambient mode.
const (
	// LabelDataplaneMode on a namespace or pod: "ambient" enrolls it,
	// "none" keeps a pod out of an ambient namespace.
	LabelDataplaneMode = "istio.io/dataplane-mode"
	// AnnotationRedirection is written by istio-cni's node agent on a pod
	// whose traffic it redirects to ztunnel ("enabled"); istiod then sends
	// the pod's workload with tunnel protocol HBONE.
	AnnotationRedirection = "ambient.istio.io/redirection"
	// LabelTunnel "http" says a pod terminates HBONE itself (a sidecar
	// with HBONE, a waypoint).
	LabelTunnel = "networking.istio.io/tunnel"
	// AnnotationGatewayServiceAccount overrides a Gateway's service account.
	AnnotationGatewayServiceAccount = "gateway.istio.io/service-account"
	// LabelUseWaypoint on a Service, namespace or pod names the waypoint
	// (a Gateway) its traffic goes through; "none" opts out.
	LabelUseWaypoint = "istio.io/use-waypoint"
	// LabelUseWaypointNamespace names the waypoint's namespace when it is
	// not the object's own.
	LabelUseWaypointNamespace = "istio.io/use-waypoint-namespace"
	// LabelWaypointFor on a Gateway (or its GatewayClass) says which
	// traffic it is a waypoint for: service (the default), workload, all,
	// none.
	LabelWaypointFor = "istio.io/waypoint-for"
	// LabelGatewayManaged marks the Services istiod deploys for its own
	// gateways; waypoints and east-west gateways get no waypoint.
	LabelGatewayManaged = "gateway.istio.io/managed"
)

// Gateway API classes istiod reads as network gateways in ambient mode.
const (
	// ClassEastWest is an east-west gateway deployed in its cluster; other
	// clusters' istiods use it (with an HBONE listener, TLS terminated).
	ClassEastWest = "istio-east-west"
	// ClassRemote declares, in istiod's own cluster, a gateway it cannot
	// see otherwise (no deployment).
	ClassRemote = "istio-remote"
)

// AmbientCluster holds one cluster's ambient facts.
type AmbientCluster struct {
	Cluster string `json:"cluster"`
	// Namespaces are the labels of each namespace, by name.
	Namespaces map[string]map[string]string `json:"namespaces,omitempty"`
	// ServiceLabels are every label of each Service, by hostname (shared
	// with the informer cache: read only). ServiceInCluster.Labels keeps only
	// the ones that make a gateway.
	ServiceLabels map[string]map[string]string `json:"-"`
	// Gateways are the cluster's Gateway API Gateways, by namespace/name
	// (the ambient index reads those of classes istio-east-west and
	// istio-remote; the sidecar network gateways, any networked one).
	Gateways []K8sGateway `json:"gateways,omitempty"`
	// Pods holds, by "namespace/name", the pods whose ambient facts differ
	// from the defaults (service account "default", not redirected): the
	// rest need no entry. See Pod.
	Pods map[string]AmbientPod `json:"pods,omitempty"`
	// GatewayAPI is false when the cluster has no Gateway API (its CRDs
	// are not installed, or Gateways cannot be read: see the warnings).
	GatewayAPI bool `json:"gatewayAPI"`
}

// AmbientPod is what istiod's workload for a pod takes from the pod beyond
// its endpoint.
type AmbientPod struct {
	ServiceAccount string `json:"serviceAccount,omitempty"`
	// Redirected is the ambient.istio.io/redirection=enabled annotation.
	Redirected bool `json:"redirected,omitempty"`
}

// Pod returns the ambient facts of a pod, with the defaults for a pod
// that needs no entry.
func (a *AmbientCluster) Pod(namespace, name string) AmbientPod {
	if a != nil {
		if p, ok := a.Pods[namespace+"/"+name]; ok {
			return p
		}
	}
	return AmbientPod{ServiceAccount: "default"}
}

// NamespaceLabels returns a namespace's labels (nil when unknown).
func (a *AmbientCluster) NamespaceLabels(ns string) map[string]string {
	if a == nil {
		return nil
	}
	return a.Namespaces[ns]
}

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

// GatewayAddress is one address of a Gateway (status or spec).
type GatewayAddress struct {
	// Type is IPAddress, Hostname or another type; "" when unset.
	Type  string `json:"type,omitempty"`
	Value string `json:"value"`
}

// Source is "namespace/name", the gateway's part of istiod's resource names.
func (g K8sGateway) Source() string { return g.Namespace + "/" + g.Name }

// AmbientFor returns a cluster's ambient facts, or nil.
func (s *Snapshot) AmbientFor(cluster string) *AmbientCluster {
	if s == nil {
		return nil
	}
	for i := range s.Ambient {
		if s.Ambient[i].Cluster == cluster {
			return &s.Ambient[i]
		}
	}
	return nil
}

// buildAmbient gathers a cluster's ambient facts from its caches
// (serviceLabels, by hostname, from buildPart's pass over the Services).
func buildAmbient(v cacheView, id string, serviceLabels map[string]map[string]string) *AmbientCluster {
	a := &AmbientCluster{Cluster: id, GatewayAPI: v.gatewayAPI, ServiceLabels: serviceLabels}
	var nss []*corev1.Namespace
	if v.namespaces != nil {
		nss = v.namespaces()
	}
	if len(nss) > 0 {
		a.Namespaces = make(map[string]map[string]string, len(nss))
		for _, ns := range nss {
			a.Namespaces[ns.Name] = ns.Labels
		}
	}
	for _, g := range v.gateways {
		gw := g.K8sGateway
		gw.Cluster = id
		a.Gateways = append(a.Gateways, gw)
	}
	slices.SortFunc(a.Gateways, func(x, y K8sGateway) int { return strings.Compare(x.Source(), y.Source()) })
	if v.pods != nil {
		for _, p := range v.pods() {
			if (p.ServiceAccount == "" || p.ServiceAccount == "default") && !p.redirected {
				continue
			}
			if a.Pods == nil {
				a.Pods = map[string]AmbientPod{}
			}
			a.Pods[p.Namespace+"/"+p.Name] = AmbientPod{ServiceAccount: p.ServiceAccount, Redirected: p.redirected}
		}
	}
	return a
}

// podRedirected reads istio-cni's enrollment annotation.
func podRedirected(p *corev1.Pod) bool {
	return p.Annotations[AnnotationRedirection] == "enabled"
}
