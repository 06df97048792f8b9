package model

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
