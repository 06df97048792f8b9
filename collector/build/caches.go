package build

import (
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/meshscope/meshscope/model"
)

// Caches is one cluster's caches, the build's input: what its watcher holds
// (collector's view of its informers) or objects made by hand (tests, the
// benchmark, a what-if).
type Caches struct {
	Services        []*corev1.Service
	Slices          []*Slice
	Pod             func(key string) *Pod
	Pods            func() []*Pod
	Namespaces      func() []*corev1.Namespace
	Node            func(name string) *Node
	Nodes           func() []*Node // nil when nodes are not watched
	SystemNamespace *corev1.Namespace
	Gateways        []*GatewayObject
	GatewayAPI      bool
	PodCount        int
	NodeCount       int
	SecretCount     int
	// workloadEntries are the cluster's WorkloadEntries, which its
	// Services select too (serviceWorkloadEntries).
	WorkloadEntries []model.WorkloadEntry
}

// Node is all the Node cache keeps of a Node: its identity, its
// labels (a gateway's traffic.istio.io/nodeSelector may name any of them),
// its first ExternalIP (NodePort gateways) and the locality its labels
// give. A stripped corev1.Node still holds an ObjectMeta, a NodeSpec and a
// NodeStatus; this is a few strings.
type Node struct {
	Name, ResourceVersion string
	Labels                map[string]string
	ExternalIP            string
	Locality              string
}

func (n *Node) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// GetObjectMeta gives the informer's store its key and resource version;
// the ObjectMeta is built on demand, not kept.
func (n *Node) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: n.Name, ResourceVersion: n.ResourceVersion, Labels: n.Labels}
}

func (n *Node) DeepCopyObject() runtime.Object {
	c := *n
	c.Labels = make(map[string]string, len(n.Labels))
	for k, v := range n.Labels {
		c.Labels[k] = v
	}
	return &c
}

// Slice is all the EndpointSlice cache keeps of an EndpointSlice:
// its identity, the Service it belongs to, its address type, its ports
// (decoded once here, shared by every endpoint of the snapshot) and, per
// endpoint, what BuildPart reads. A decoded discoveryv1.EndpointSlice
// costs about 330 B per endpoint even stripped (the Endpoint struct, three
// *bool conditions, a TargetRef of seven strings, a *string node name);
// this about 100 B plus the address and pod name.
type Slice struct {
	Name, Namespace, ResourceVersion string
	// service is the kubernetes.io/service-name label ("" for a slice
	// that belongs to no Service, which istiod ignores).
	Service     string
	AddressType discoveryv1.AddressType
	Ports       []model.EndpointPort
	Endpoints   []SliceEndpoint
}

// SliceEndpoint is one endpoint of a Slice.
type SliceEndpoint struct {
	Addresses []string
	// pod is the targetRef's name when it is a Pod, as "namespace/name"
	// when its namespace is not the slice's (rare; pod names hold no "/"):
	// one string field less per endpoint (podKey, podName).
	Pod string
	// node is interned (few distinct values per cluster). The slice's
	// zone is not kept: istiod takes localities from pods and nodes only.
	Node       string
	Conditions Conditions
}

// PodKey is the pod cache's key of the endpoint's pod ("" for none).
func (e *SliceEndpoint) PodKey(sliceNamespace string) string {
	if e.Pod == "" || strings.Contains(e.Pod, "/") {
		return e.Pod
	}
	return sliceNamespace + "/" + e.Pod
}

// PodName is the name of the endpoint's pod.
func (e *SliceEndpoint) PodName() string {
	_, name, found := strings.Cut(e.Pod, "/")
	if !found {
		return e.Pod
	}
	return name
}

// Conditions packs the three optional conditions of an endpoint:
// for each, whether it is set and its value.
type Conditions uint8

const (
	condReadySet Conditions = 1 << iota
	condReady
	condServingSet
	condServing
	condTerminatingSet
	condTerminating
)

func PackConditions(c discoveryv1.EndpointConditions) Conditions {
	var out Conditions
	pack := func(b *bool, set, val Conditions) {
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

// Ready, Serving and Terminating read the conditions as the EndpointSlice
// API defines them — a missing ready means ready, a missing serving means
// "same as ready" — and as istiod reads terminating: missing means
// terminating for a not-ready endpoint.
func (c Conditions) Ready() bool { return c&condReadySet == 0 || c&condReady != 0 }

func (c Conditions) Serving() bool {
	if c&condServingSet == 0 {
		return c.Ready()
	}
	return c&condServing != 0
}

func (c Conditions) Terminating() bool {
	if c&condTerminatingSet == 0 {
		// istiod (endpointHealthStatus) reads a not-ready endpoint without
		// the condition as terminating, and never sends it.
		return !c.Ready()
	}
	return c&condTerminating != 0
}

func (s *Slice) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// GetObjectMeta gives the informer's store its key (namespace/name) and
// resource version; the ObjectMeta is built on demand, not kept.
func (s *Slice) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, ResourceVersion: s.ResourceVersion}
}

func (s *Slice) DeepCopyObject() runtime.Object {
	c := *s
	c.Ports = slices.Clone(s.Ports)
	c.Endpoints = make([]SliceEndpoint, len(s.Endpoints))
	for i, e := range s.Endpoints {
		e.Addresses = slices.Clone(e.Addresses)
		c.Endpoints[i] = e
	}
	return &c
}

// Pod is all the Pod cache keeps of a Pod: its identity (for the
// store's key), its node, its address and readiness, and — shared with the
// other pods of its workload — its labels, service account and named
// ports. A full corev1.Pod, even stripped, costs over 1 KiB per pod, and
// pods are the bulk of a mesh's objects; an embedded ObjectMeta alone is
// 248 B. This is 96 B (TestCachedPodSize).
type Pod struct {
	Name, Namespace string
	// PodTemplate holds what replicas share (interned, never nil).
	*PodTemplate
	NodeName string
	// IP is the pod's (first) IP; InEndpoints says istiod's pod controller
	// would make it a workload instance (shouldPodBeInEndpoints and
	// IsPodReady): not terminal, not deleting, ready, with an IP.
	IP netip.Addr
	// ResourceVersion is the resource version, which the informer compares to tell an
	// update from a resync (resourceVersion).
	ResourceVersion uint64
	// Redirected is istio-cni's ambient enrollment annotation.
	InEndpoints, Redirected bool
}

// PodTemplate is the part of a Pod that the pods of one workload (in
// one zone: Kubernetes 1.33+ copies the node's topology labels onto pods)
// have in common; the interner shares one per distinct value.
type PodTemplate struct {
	// Labels are all the pod's labels: Istio config selects pods on any
	// label (PeerAuthentication and ServiceEntry selectors, DestinationRule
	// subsets).
	Labels map[string]string
	// ServiceAccount is what istiod's ambient workloads take from a pod.
	ServiceAccount string
	// Ports are the named TCP container ports, which a ServiceEntry port
	// of the same name targets (getPortMap).
	Ports *[]model.EndpointPort
	// Injected is what the pod's istio-proxy container was started with
	// (model.InjectedIdentity), nil without one; interned with the template.
	Injected *model.InjectedIdentity
	// Controller is the pod's controller owner reference as "Kind/name"
	// ("ReplicaSet/helloworld-v1-776f57d5f6"; "" for none): a what-if of a
	// workload controller finds the pods it owns by it. The replicas of a
	// workload share it, so it costs no heap per pod.
	Controller string
}

func (p *Pod) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// GetObjectMeta gives the informer's store its key (namespace/name) and
// resource version (which tells updates from resyncs); the ObjectMeta is
// built on demand, not kept.
func (p *Pod) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, ResourceVersion: resourceVersionText(p.ResourceVersion), Labels: p.Labels}
}

func resourceVersionText(n uint64) string { return strconv.FormatUint(n, 10) }

func (p *Pod) DeepCopyObject() runtime.Object {
	c := *p
	t := *p.PodTemplate
	t.Labels = maps.Clone(t.Labels)
	c.PodTemplate = &t
	return &c
}

// GatewayObject is all the Gateway cache keeps of a Gateway.
type GatewayObject struct {
	model.K8sGateway
	ResourceVersion string
}

func (g *GatewayObject) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (g *GatewayObject) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: g.Name, Namespace: g.Namespace, ResourceVersion: g.ResourceVersion}
}

func (g *GatewayObject) DeepCopyObject() runtime.Object {
	c := *g
	c.Listeners = append([]model.GatewayListener(nil), g.Listeners...)
	for i := range c.Listeners {
		c.Listeners[i].AllowedSelector = c.Listeners[i].AllowedSelector.DeepCopy()
	}
	c.Addresses = append([]model.GatewayAddress(nil), g.Addresses...)
	c.SpecAddresses = append([]model.GatewayAddress(nil), g.SpecAddresses...)
	return &c
}
