package model

import (
	"strings"
	"time"
)

// IstiodView is istiod's own account of the mesh, from its HTTP debug
// endpoints (port 8080, or 15014; reachable through a port-forward),
// read by session/istiod.
type IstiodView struct {
	// ControlPlane names the istiod (the cluster it is primary of).
	ControlPlane string `json:"controlPlane"`
	// Clusters is /debug/clusterz: the config cluster first, then one per
	// remote-secret key.
	Clusters []IstiodCluster `json:"clusters"`
	// Gateways is /debug/networkz.
	Gateways []IstiodGateway `json:"gateways"`
}

// IstiodCluster is one row of /debug/clusterz.
type IstiodCluster struct {
	ID         string `json:"id"`
	SecretName string `json:"secretName"`
	SyncStatus string `json:"syncStatus"`
}

// ClusterFromSecret is the row of cluster id registered from the remote
// secret secretName ("ns/name"), nil when istiod lists none.
func (v *IstiodView) ClusterFromSecret(id, secretName string) *IstiodCluster {
	for i := range v.Clusters {
		if c := &v.Clusters[i]; c.ID == id && c.SecretName == secretName {
			return c
		}
	}
	return nil
}

// IstiodGateway is one row of /debug/networkz.
type IstiodGateway struct {
	Network   string `json:"Network"`
	Cluster   string `json:"Cluster"`
	Addr      string `json:"Addr"`
	Port      uint32 `json:"Port"`
	HBONEPort uint32 `json:"HBONEPort"`
}

// SyncStatus is one row of istiod's /debug/syncz: a proxy connected to it
// and, per xDS type it watches, the nonce istiod last sent and the one the
// proxy last acknowledged (pilot/pkg/xds/debug.go SyncStatus).
type SyncStatus struct {
	// Proxy is the proxy's ID, NAME.NAMESPACE (the node ID's third field).
	Proxy string `json:"proxy"`
	// ProxyType is sidecar, router, ztunnel or waypoint.
	ProxyType    ProxyKind `json:"proxy_type,omitempty"`
	ClusterID    string    `json:"cluster_id,omitempty"`
	IstioVersion string    `json:"istio_version,omitempty"`
	// Resources, by type URL (istiod 1.24+).
	Resources map[string]ResourceStatus `json:"resources,omitempty"`
	// The per-type fields of older istiods (and of newer ones, beside
	// Resources): read when Resources is absent.
	ClusterSent   string `json:"cluster_sent,omitempty"`
	ClusterAcked  string `json:"cluster_acked,omitempty"`
	ListenerSent  string `json:"listener_sent,omitempty"`
	ListenerAcked string `json:"listener_acked,omitempty"`
	RouteSent     string `json:"route_sent,omitempty"`
	RouteAcked    string `json:"route_acked,omitempty"`
	EndpointSent  string `json:"endpoint_sent,omitempty"`
	EndpointAcked string `json:"endpoint_acked,omitempty"`
}

// ResourceStatus is what istiod sent of one type and what came back.
type ResourceStatus struct {
	Sent      string    `json:"sent,omitempty"`
	Acked     string    `json:"acked,omitempty"`
	SentTime  time.Time `json:"sentTime,omitzero"`
	LastError string    `json:"lastError,omitempty"`
}

// Type URLs of the xDS types istioctl proxy-status shows.
const (
	TypeCDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
	TypeLDS = "type.googleapis.com/envoy.config.listener.v3.Listener"
	TypeRDS = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"
	TypeEDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"
	TypeWDS = "type.googleapis.com/istio.workload.Address"
)

// Types gives the proxy's per-type status, from Resources or, for an
// older istiod, from the flat fields.
func (s SyncStatus) Types() map[string]ResourceStatus {
	if len(s.Resources) > 0 {
		return s.Resources
	}
	m := map[string]ResourceStatus{}
	for _, f := range []struct{ t, sent, acked string }{
		{TypeCDS, s.ClusterSent, s.ClusterAcked}, {TypeLDS, s.ListenerSent, s.ListenerAcked},
		{TypeRDS, s.RouteSent, s.RouteAcked}, {TypeEDS, s.EndpointSent, s.EndpointAcked},
	} {
		if f.sent != "" || f.acked != "" {
			m[f.t] = ResourceStatus{Sent: f.sent, Acked: f.acked}
		}
	}
	return m
}

// Name and Namespace split the proxy ID (NAME.NAMESPACE; a pod name has
// no dots in practice, a namespace never does).
func (s SyncStatus) Name() string {
	if i := strings.LastIndexByte(s.Proxy, '.'); i >= 0 {
		return s.Proxy[:i]
	}
	return s.Proxy
}

// Namespace is the part of the proxy ID after its last dot.
func (s SyncStatus) Namespace() string {
	if i := strings.LastIndexByte(s.Proxy, '.'); i >= 0 {
		return s.Proxy[i+1:]
	}
	return ""
}
