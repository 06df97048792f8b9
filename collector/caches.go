package collector

import (
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/meshscope/meshscope/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// cacheView is the read side of one cluster's informer caches; tests and
// the benchmark build parts from plain objects through it.
type cacheView struct {
	services   []*corev1.Service
	slices     []*cachedSlice
	pod        func(key string) *cachedPod
	pods       func() []*cachedPod
	namespaces func() []*corev1.Namespace
	node       func(name string) *cachedNode
	nodes      func() []*cachedNode // nil when nodes are not watched
	systemNS   *corev1.Namespace
	gateways   []*cachedGateway
	gatewayAPI bool
	podCount   int
	nodeCount  int
	secretsLen int
	// workloadEntries are the cluster's WorkloadEntries, which its
	// Services select too (serviceWorkloadEntries).
	workloadEntries []model.WorkloadEntry
}

// cachedNode is all the Node cache keeps of a Node: its identity, its
// labels (a gateway's traffic.istio.io/nodeSelector may name any of them),
// its first ExternalIP (NodePort gateways) and the locality its labels
// give. A stripped corev1.Node still holds an ObjectMeta, a NodeSpec and a
// NodeStatus; this is a few strings.
type cachedNode struct {
	Name, resourceVersion string
	Labels                map[string]string
	externalIP            string
	locality              string
}

func (n *cachedNode) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// GetObjectMeta gives the informer's store its key and resource version;
// the ObjectMeta is built on demand, not kept.
func (n *cachedNode) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: n.Name, ResourceVersion: n.resourceVersion, Labels: n.Labels}
}

func (n *cachedNode) DeepCopyObject() runtime.Object {
	c := *n
	c.Labels = make(map[string]string, len(n.Labels))
	for k, v := range n.Labels {
		c.Labels[k] = v
	}
	return &c
}

// cachedSlice is all the EndpointSlice cache keeps of an EndpointSlice:
// its identity, the Service it belongs to, its address type, its ports
// (decoded once here, shared by every endpoint of the snapshot) and, per
// endpoint, what buildPart reads. A decoded discoveryv1.EndpointSlice
// costs about 330 B per endpoint even stripped (the Endpoint struct, three
// *bool conditions, a TargetRef of seven strings, a *string node name);
// this about 100 B plus the address and pod name.
type cachedSlice struct {
	name, namespace, resourceVersion string
	// service is the kubernetes.io/service-name label ("" for a slice
	// that belongs to no Service, which istiod ignores).
	service     string
	addressType discoveryv1.AddressType
	ports       []model.EndpointPort
	endpoints   []cachedEndpoint
}

// cachedEndpoint is one endpoint of a cachedSlice.
type cachedEndpoint struct {
	addresses []string
	// pod is the targetRef's name when it is a Pod, as "namespace/name"
	// when its namespace is not the slice's (rare; pod names hold no "/"):
	// one string field less per endpoint (podKey, podName).
	pod string
	// node is interned (few distinct values per cluster). The slice's
	// zone is not kept: istiod takes localities from pods and nodes only.
	node       string
	conditions endpointConditions
}

// podKey is the pod cache's key of the endpoint's pod ("" for none).
func (e *cachedEndpoint) podKey(sliceNamespace string) string {
	if e.pod == "" || strings.Contains(e.pod, "/") {
		return e.pod
	}
	return sliceNamespace + "/" + e.pod
}

// podName is the name of the endpoint's pod.
func (e *cachedEndpoint) podName() string {
	_, name, found := strings.Cut(e.pod, "/")
	if !found {
		return e.pod
	}
	return name
}

// endpointConditions packs the three optional conditions of an endpoint:
// for each, whether it is set and its value.
type endpointConditions uint8

const (
	condReadySet endpointConditions = 1 << iota
	condReady
	condServingSet
	condServing
	condTerminatingSet
	condTerminating
)

func packConditions(c discoveryv1.EndpointConditions) endpointConditions {
	var out endpointConditions
	pack := func(b *bool, set, val endpointConditions) {
		if b != nil {
			out |= set
			if *b {
				out |= val
			}
		}
	}
	pack(c.Ready, condReadySet, condReady)
	pack(c.Serving, condServingSet, condServing)
	pack(c.Terminating, condTerminatingSet, condTerminating)
	return out
}

// ready, serving and terminating read the conditions as the EndpointSlice
// API defines them — a missing ready means ready, a missing serving means
// "same as ready" — and as istiod reads terminating: missing means
// terminating for a not-ready endpoint.
func (c endpointConditions) ready() bool { return c&condReadySet == 0 || c&condReady != 0 }

func (c endpointConditions) serving() bool {
	if c&condServingSet == 0 {
		return c.ready()
	}
	return c&condServing != 0
}

func (c endpointConditions) terminating() bool {
	if c&condTerminatingSet == 0 {
		// istiod (endpointHealthStatus) reads a not-ready endpoint without
		// the condition as terminating, and never sends it.
		return !c.ready()
	}
	return c&condTerminating != 0
}

func (s *cachedSlice) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// GetObjectMeta gives the informer's store its key (namespace/name) and
// resource version; the ObjectMeta is built on demand, not kept.
func (s *cachedSlice) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: s.name, Namespace: s.namespace, ResourceVersion: s.resourceVersion}
}

func (s *cachedSlice) DeepCopyObject() runtime.Object {
	c := *s
	c.ports = slices.Clone(s.ports)
	c.endpoints = make([]cachedEndpoint, len(s.endpoints))
	for i, e := range s.endpoints {
		e.addresses = slices.Clone(e.addresses)
		c.endpoints[i] = e
	}
	return &c
}

// cachedPod is all the Pod cache keeps of a Pod: its identity (for the
// store's key), its node, its address and readiness, and — shared with the
// other pods of its workload — its labels, service account and named
// ports. A full corev1.Pod, even stripped, costs over 1 KiB per pod, and
// pods are the bulk of a mesh's objects; an embedded ObjectMeta alone is
// 248 B. This is 96 B (TestCachedPodSize).
type cachedPod struct {
	Name, Namespace string
	// podTemplate holds what replicas share (interned, never nil).
	*podTemplate
	NodeName string
	// IP is the pod's (first) IP; inEndpoints says istiod's pod controller
	// would make it a workload instance (shouldPodBeInEndpoints and
	// IsPodReady): not terminal, not deleting, ready, with an IP.
	IP netip.Addr
	// rv is the resource version, which the informer compares to tell an
	// update from a resync (resourceVersion).
	rv uint64
	// redirected is istio-cni's ambient enrollment annotation.
	inEndpoints, redirected bool
}

// podTemplate is the part of a cachedPod that the pods of one workload (in
// one zone: Kubernetes 1.33+ copies the node's topology labels onto pods)
// have in common; the interner shares one per distinct value.
type podTemplate struct {
	// Labels are all the pod's labels: Istio config selects pods on any
	// label (PeerAuthentication and ServiceEntry selectors, DestinationRule
	// subsets).
	Labels map[string]string
	// ServiceAccount is what istiod's ambient workloads take from a pod.
	ServiceAccount string
	// ports are the named TCP container ports, which a ServiceEntry port
	// of the same name targets (getPortMap).
	ports *[]model.EndpointPort
}

func (p *cachedPod) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// GetObjectMeta gives the informer's store its key (namespace/name) and
// resource version (which tells updates from resyncs); the ObjectMeta is
// built on demand, not kept.
func (p *cachedPod) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, ResourceVersion: resourceVersionText(p.rv), Labels: p.Labels}
}

func resourceVersionText(n uint64) string { return strconv.FormatUint(n, 10) }

func (p *cachedPod) DeepCopyObject() runtime.Object {
	c := *p
	t := *p.podTemplate
	t.Labels = maps.Clone(t.Labels)
	c.podTemplate = &t
	return &c
}

// cachedGateway is all the Gateway cache keeps of a Gateway.
type cachedGateway struct {
	model.K8sGateway
	resourceVersion string
}

func (g *cachedGateway) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (g *cachedGateway) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: g.Name, Namespace: g.Namespace, ResourceVersion: g.resourceVersion}
}

func (g *cachedGateway) DeepCopyObject() runtime.Object {
	c := *g
	c.Listeners = append([]model.GatewayListener(nil), g.Listeners...)
	for i := range c.Listeners {
		c.Listeners[i].AllowedSelector = c.Listeners[i].AllowedSelector.DeepCopy()
	}
	c.Addresses = append([]model.GatewayAddress(nil), g.Addresses...)
	c.SpecAddresses = append([]model.GatewayAddress(nil), g.SpecAddresses...)
	return &c
}
