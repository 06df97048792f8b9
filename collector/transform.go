package collector

import (
	"maps"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Informer transforms strip what meshscope never reads before objects enter
// the caches: managedFields (often the largest part of an object),
// last-applied-configuration and other annotations, and the parts of Pod and
// Node specs and statuses that have no bearing on endpoints, networks or
// localities. This is what keeps heap per endpoint low (issue 3 target:
// under 1 KiB).

// keptAnnotationPrefixes are the annotation families istiod reads on
// Services and Pods; everything else is dropped.
var keptAnnotationPrefixes = []string{
	"networking.istio.io/", "traffic.istio.io/", "topology.istio.io/", "service.istio.io/",
}

func stripMeta(m *metav1.ObjectMeta, keepAnnotations bool) {
	m.ManagedFields = nil
	m.OwnerReferences = nil
	m.Finalizers = nil
	if !keepAnnotations || len(m.Annotations) == 0 {
		m.Annotations = nil
		return
	}
	var kept map[string]string
	for k, v := range m.Annotations {
		for _, p := range keptAnnotationPrefixes {
			if strings.HasPrefix(k, p) {
				if kept == nil {
					kept = map[string]string{}
				}
				kept[k] = v
				break
			}
		}
	}
	m.Annotations = kept
}

func transformService(obj any) (any, error) {
	if s, ok := obj.(*corev1.Service); ok {
		stripMeta(&s.ObjectMeta, true)
		s.Spec.Selector = nil
		s.Spec.SessionAffinityConfig = nil
		s.Status.Conditions = nil
	}
	return obj, nil
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
	ports       []EndpointPort
	endpoints   []cachedEndpoint
}

// cachedEndpoint is one endpoint of a cachedSlice.
type cachedEndpoint struct {
	addresses []string
	// pod is the targetRef's name when it is a Pod; podNamespace its
	// namespace when it differs from the slice's ("" otherwise).
	pod, podNamespace string
	// node and zone are interned (few distinct values per cluster).
	node, zone string
	conditions endpointConditions
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
// API defines them: a missing ready means ready, a missing serving means
// "same as ready", a missing terminating means not terminating.
func (c endpointConditions) ready() bool { return c&condReadySet == 0 || c&condReady != 0 }

func (c endpointConditions) serving() bool {
	if c&condServingSet == 0 {
		return c.ready()
	}
	return c&condServing != 0
}

func (c endpointConditions) terminating() bool {
	return c&condTerminatingSet != 0 && c&condTerminating != 0
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

func (in *interner) transformEndpointSlice(obj any) (any, error) {
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return obj, nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	c := &cachedSlice{
		name: s.Name, namespace: in.str(s.Namespace), resourceVersion: s.ResourceVersion,
		service:     s.Labels[discoveryv1.LabelServiceName],
		addressType: s.AddressType,
		ports:       slicePorts(s.Ports),
		endpoints:   make([]cachedEndpoint, len(s.Endpoints)),
	}
	for i := range s.Endpoints {
		e := &s.Endpoints[i]
		ce := cachedEndpoint{addresses: e.Addresses, conditions: packConditions(e.Conditions)}
		if r := e.TargetRef; r != nil && r.Kind == "Pod" {
			ce.pod = r.Name
			if r.Namespace != s.Namespace {
				ce.podNamespace = in.str(r.Namespace)
			}
		}
		if e.NodeName != nil {
			ce.node = in.str(*e.NodeName)
		}
		if e.Zone != nil {
			ce.zone = in.str(*e.Zone)
		}
		c.endpoints[i] = ce
	}
	return c, nil
}

// cachedPod is all the Pod cache keeps of a Pod: its identity (for the
// store's key), its node and the labels that matter, interned so pods of
// one workload share one map. A full corev1.Pod, even stripped, costs over
// 1 KiB per pod, and pods are the bulk of a mesh's objects; an embedded
// ObjectMeta alone is 248 B.
type cachedPod struct {
	Name, Namespace, resourceVersion string
	Labels                           map[string]string
	NodeName                         string
	// ServiceAccount and redirected (istio-cni's ambient enrollment
	// annotation) are what istiod's ambient workloads take from a pod.
	ServiceAccount string
	redirected     bool
}

func (p *cachedPod) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// GetObjectMeta gives the informer's store its key (namespace/name) and
// resource version (which tells updates from resyncs); the ObjectMeta is
// built on demand, not kept.
func (p *cachedPod) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, ResourceVersion: p.resourceVersion, Labels: p.Labels}
}

func (p *cachedPod) DeepCopyObject() runtime.Object {
	c := *p
	c.Labels = maps.Clone(p.Labels)
	return &c
}

// interner shares strings (namespaces, node names, zones) and label maps
// between the cached objects of one cluster: a few hundred distinct values
// stand for tens of thousands of copies.
type interner struct {
	mu      sync.Mutex
	strings map[string]string
	labels  map[string]map[string]string
}

func newInterner() *interner {
	return &interner{strings: map[string]string{}, labels: map[string]map[string]string{}}
}

// internerLimit bounds each interner table: values that are gone from the
// cluster (nodes scaled away, old revisions) are never removed one by one,
// so past the limit a table starts afresh. Cached objects keep the strings
// and maps they hold; only sharing with later objects is lost.
const internerLimit = 50_000

// str returns the shared copy of s. The caller holds in.mu.
func (in *interner) str(s string) string {
	if s == "" {
		return ""
	}
	if v, ok := in.strings[s]; ok {
		return v
	}
	if len(in.strings) >= internerLimit {
		in.strings = map[string]string{}
	}
	in.strings[s] = s
	return s
}

func (in *interner) transformPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.labels) >= internerLimit {
		in.labels = map[string]map[string]string{}
	}
	return &cachedPod{
		Name: p.Name, Namespace: in.str(p.Namespace), resourceVersion: p.ResourceVersion,
		Labels:         internLabels(in.labels, p.Labels),
		NodeName:       in.str(p.Spec.NodeName),
		ServiceAccount: in.str(p.Spec.ServiceAccountName),
		redirected:     podRedirected(p),
	}, nil
}

func transformNode(obj any) (any, error) {
	if n, ok := obj.(*corev1.Node); ok {
		stripMeta(&n.ObjectMeta, false)
		n.Spec = corev1.NodeSpec{}
		n.Status = corev1.NodeStatus{Addresses: n.Status.Addresses}
	}
	return obj, nil
}

func transformNamespace(obj any) (any, error) {
	if n, ok := obj.(*corev1.Namespace); ok {
		stripMeta(&n.ObjectMeta, false)
		n.Spec = corev1.NamespaceSpec{}
		n.Status = corev1.NamespaceStatus{Phase: n.Status.Phase}
	}
	return obj, nil
}

func transformSecret(obj any) (any, error) {
	if s, ok := obj.(*corev1.Secret); ok {
		// The data (kubeconfigs) is needed; annotations are not.
		stripMeta(&s.ObjectMeta, false)
	}
	return obj, nil
}

func transformConfigMap(obj any) (any, error) {
	if c, ok := obj.(*corev1.ConfigMap); ok {
		stripMeta(&c.ObjectMeta, false)
		// Only the mesh config and meshNetworks are read.
		var kept map[string]string
		for _, k := range []string{meshNetworksKey, meshConfigKey} {
			if v, ok := c.Data[k]; ok {
				if kept == nil {
					kept = map[string]string{}
				}
				kept[k] = v
			}
		}
		c.Data = kept
		c.BinaryData = nil
	}
	return obj, nil
}
