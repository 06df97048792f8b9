package collector

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

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
)

// istioProxyContainer is the container name the injector (and the gateway
// and ztunnel charts) give the proxy.
const istioProxyContainer = "istio-proxy"

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

// injectedIdentity reads the istio-proxy container of a pod (a container,
// or a native sidecar init container), or nil.
func injectedIdentity(p *corev1.Pod) *InjectedIdentity {
	var c *corev1.Container
	for i := range p.Spec.Containers {
		if p.Spec.Containers[i].Name == istioProxyContainer {
			c = &p.Spec.Containers[i]
		}
	}
	for i := range p.Spec.InitContainers {
		if p.Spec.InitContainers[i].Name == istioProxyContainer {
			c = &p.Spec.InitContainers[i]
		}
	}
	if c == nil {
		return nil
	}
	id := &InjectedIdentity{Kind: ProxySidecar, Image: c.Image, Version: imageVersion(c.Image)}
	switch {
	case slices.Contains(c.Args, "router"):
		id.Kind = ProxyGateway
	case strings.Contains(imageName(c.Image), "ztunnel") || p.Labels["app"] == "ztunnel":
		id.Kind = ProxyZtunnel
	}
	for _, e := range c.Env {
		switch e.Name {
		case "ISTIO_META_NETWORK":
			id.Network = e.Value
		case "ISTIO_META_CLUSTER_ID":
			id.ClusterID = e.Value
		}
	}
	return id
}

// imageName is the repository part of an image reference (no registry
// path before the last '/', no tag or digest).
func imageName(image string) string {
	if i := strings.LastIndexByte(image, '/'); i >= 0 {
		image = image[i+1:]
	}
	if i := strings.IndexAny(image, ":@"); i >= 0 {
		image = image[:i]
	}
	return image
}

// imageVersion is an image's tag up to its first '-' ("1.28.0" of
// "docker.io/istio/proxyv2:1.28.0-distroless"), or "" for a digest or no tag.
func imageVersion(image string) string {
	if strings.Contains(image, "@") {
		return ""
	}
	i := strings.LastIndexByte(image, ':')
	if i < 0 || strings.Contains(image[i:], "/") {
		return ""
	}
	tag := image[i+1:]
	if j := strings.IndexByte(tag, '-'); j > 0 {
		tag = tag[:j]
	}
	return tag
}

// buildProxies lists a cluster's pods that run a proxy or that ambient
// mode captures, sorted by namespace and name.
func buildProxies(v cacheView, id, systemNetwork string, ix *meshNetworkIndex) []ProxyPod {
	if v.pods == nil {
		return nil
	}
	var out []ProxyPod
	for _, p := range v.pods() {
		if p.injected == nil && !p.redirected {
			continue
		}
		pp := ProxyPod{Cluster: id, Namespace: p.Namespace, Name: p.Name, Node: p.NodeName, Ready: p.inEndpoints,
			Kind: ProxyAmbient, Injected: p.injected}
		if p.IP.IsValid() {
			pp.IP = p.IP.String()
		}
		if p.injected != nil {
			pp.Kind = p.injected.Kind
		}
		pp.Network, _ = resolveNetwork(p.Labels[LabelNetwork], systemNetwork, ix, id, pp.IP)
		out = append(out, pp)
	}
	slices.SortFunc(out, func(a, b ProxyPod) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}
