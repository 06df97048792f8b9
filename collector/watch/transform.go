package watch

import (
	"fmt"
	"hash/maphash"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/meshscope/meshscope/collector/build"
	"github.com/meshscope/meshscope/model"
)

// Informer transforms strip what meshscope never reads before objects enter
// the caches: managedFields (often the largest part of an object),
// last-applied-configuration and other annotations, and the parts of Pod and
// Node specs and statuses that have no bearing on endpoints, networks or
// localities. This is what keeps heap per endpoint low (target:
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
		s.Spec.SessionAffinityConfig = nil
		s.Status.Conditions = nil
	}
	return obj, nil
}

func (in *interner) transformEndpointSlice(obj any) (any, error) {
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return obj, nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	c := &build.Slice{
		Name: s.Name, Namespace: in.str(s.Namespace), ResourceVersion: s.ResourceVersion,
		Service:     s.Labels[discoveryv1.LabelServiceName],
		AddressType: s.AddressType,
		Ports:       build.SlicePorts(s.Ports),
		Endpoints:   make([]build.SliceEndpoint, len(s.Endpoints)),
	}
	for i := range s.Endpoints {
		e := &s.Endpoints[i]
		ce := build.SliceEndpoint{Addresses: e.Addresses, Conditions: build.PackConditions(e.Conditions)}
		if r := e.TargetRef; r != nil && r.Kind == "Pod" {
			ce.Pod = r.Name
			if r.Namespace != "" && r.Namespace != s.Namespace {
				ce.Pod = types.NamespacedName{Namespace: r.Namespace, Name: r.Name}.String()
			}
		}
		if e.NodeName != nil {
			ce.Node = in.str(*e.NodeName)
		}
		c.Endpoints[i] = ce
	}
	return c, nil
}

// templateKey identifies a build.PodTemplate: its label set by the interner's
// hash (labelSet), the interned service account and port list.
type templateKey struct {
	labels uint64
	sa     string
	ports  *[]model.EndpointPort
	// injected by value: the replicas of one workload share one.
	injected model.InjectedIdentity
	// controller is the interned "Kind/name" of the controller owner.
	controller string
}

// resourceVersionNumber keeps a resource version in 8 bytes instead of a
// string: etcd-backed API servers (all of them) use decimal revisions. An
// opaque one is kept as its hash, with the top bit set; the cache only
// compares them for equality.
func (in *interner) resourceVersionNumber(rv string) uint64 {
	if n, err := strconv.ParseUint(rv, 10, 63); err == nil {
		return n
	}
	return maphash.String(in.seed, rv) | 1<<63
}

// interner shares strings (namespaces, node names, zones), label maps and
// port lists between the cached objects of one cluster: a few hundred
// distinct values stand for tens of thousands of copies.
type interner struct {
	mu      sync.Mutex
	strings map[string]string
	// labels holds each distinct label set by its hash (labelSet); its
	// keys and values are interned strings too.
	labels    map[uint64]map[string]string
	seed      maphash.Seed
	ports     map[string]*[]model.EndpointPort
	templates map[templateKey]*build.PodTemplate
}

func newInterner() *interner {
	return &interner{
		strings: map[string]string{}, labels: map[uint64]map[string]string{},
		seed: maphash.MakeSeed(), ports: map[string]*[]model.EndpointPort{}, templates: map[templateKey]*build.PodTemplate{},
	}
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

// labelSet returns the shared copy of a label set: pods of one workload
// in one zone carry the same labels (Kubernetes 1.33+ copies the node's
// topology labels onto pods), so a cluster of tens of thousands of pods has
// a few thousand sets. The table is keyed by a hash of the set rather than
// by its text (which would cost as much as the set again), and the set's
// keys and values are interned: the label keys are a handful and the
// values repeat across sets. On the (2^-64) chance that two sets share a
// hash the second is not shared, never mixed up. The caller holds in.mu.
func (in *interner) labelSet(labels map[string]string) (set map[string]string, hash uint64, shared bool) {
	if len(labels) == 0 {
		return nil, 0, true
	}
	var sum uint64
	for k, v := range labels {
		// A sum of per-label hashes does not depend on map order.
		var h maphash.Hash
		h.SetSeed(in.seed)
		h.WriteString(k)
		h.WriteByte(0)
		h.WriteString(v)
		sum += h.Sum64()
	}
	if m, ok := in.labels[sum]; ok {
		if maps.Equal(m, labels) {
			return m, sum, true
		}
		return in.copyLabels(labels), sum, false
	}
	m := in.copyLabels(labels)
	in.labels[sum] = m
	return m, sum, true
}

// template returns the shared build.PodTemplate of a pod. The caller holds in.mu.
func (in *interner) template(p *corev1.Pod) *build.PodTemplate {
	labels, hash, shared := in.labelSet(p.Labels)
	t := &build.PodTemplate{Labels: labels, ServiceAccount: in.str(p.Spec.ServiceAccountName), Ports: in.podPorts(p), Controller: in.controller(p)}
	if id := injectedIdentity(p); id != nil {
		id.Network, id.ClusterID, id.Image, id.Version = in.str(id.Network), in.str(id.ClusterID), in.str(id.Image), in.str(id.Version)
		t.Injected = id
	}
	if !shared {
		return t
	}
	k := templateKey{labels: hash, sa: t.ServiceAccount, ports: t.Ports, controller: t.Controller}
	if t.Injected != nil {
		k.injected = *t.Injected
	}
	if v, ok := in.templates[k]; ok {
		return v
	}
	in.templates[k] = t
	return t
}

// controller is the pod's controller owner reference as "Kind/name",
// interned ("" for none). The caller holds in.mu.
func (in *interner) controller(p *corev1.Pod) string {
	if r := metav1.GetControllerOfNoCopy(p); r != nil {
		return in.str(r.Kind + "/" + r.Name)
	}
	return ""
}

func (in *interner) copyLabels(labels map[string]string) map[string]string {
	m := make(map[string]string, len(labels))
	for k, v := range labels {
		m[in.str(k)] = in.str(v)
	}
	return m
}

func (in *interner) transformPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.labels) >= internerLimit || len(in.templates) >= internerLimit {
		in.labels = map[uint64]map[string]string{}
		in.templates = map[templateKey]*build.PodTemplate{}
	}
	if len(in.ports) >= internerLimit {
		in.ports = map[string]*[]model.EndpointPort{}
		in.templates = map[templateKey]*build.PodTemplate{}
	}
	c := &build.Pod{
		Name: p.Name, Namespace: in.str(p.Namespace), ResourceVersion: in.resourceVersionNumber(p.ResourceVersion),
		PodTemplate: in.template(p),
		NodeName:    in.str(p.Spec.NodeName),
		Redirected:  podRedirected(p),
	}
	c.IP, _ = netip.ParseAddr(p.Status.PodIP)
	c.InEndpoints = c.IP.IsValid() && p.DeletionTimestamp == nil &&
		p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded && podReady(p)
	return c, nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podPorts mirrors istiod's getPortMap: the named TCP ports of the
// containers and of native sidecar init containers, the first of a name
// winning; interned (replicas share one list). The caller holds in.mu.
func (in *interner) podPorts(p *corev1.Pod) *[]model.EndpointPort {
	var out []model.EndpointPort
	add := func(cs []corev1.Container, sidecarsOnly bool) {
		for _, c := range cs {
			if sidecarsOnly && (c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways) {
				continue
			}
			for _, cp := range c.Ports {
				if cp.Name == "" || (cp.Protocol != "" && cp.Protocol != corev1.ProtocolTCP) || slices.ContainsFunc(out, func(e model.EndpointPort) bool { return e.Name == cp.Name }) {
					continue
				}
				out = append(out, model.EndpointPort{Name: cp.Name, Port: cp.ContainerPort})
			}
		}
	}
	add(p.Spec.Containers, false)
	add(p.Spec.InitContainers, true)
	if len(out) == 0 {
		return nil
	}
	var key strings.Builder
	for _, e := range out {
		fmt.Fprintf(&key, "%s=%d,", e.Name, e.Port)
	}
	if v, ok := in.ports[key.String()]; ok {
		return v
	}
	in.ports[key.String()] = &out
	return &out
}

func transformNamespace(obj any) (any, error) {
	if n, ok := obj.(*corev1.Namespace); ok {
		td, hasTD := n.Annotations[model.AnnotationTrafficDistribution]
		stripMeta(&n.ObjectMeta, false)
		if hasTD { // the default of the namespace's Services
			n.Annotations = map[string]string{model.AnnotationTrafficDistribution: td}
		}
		n.Spec = corev1.NamespaceSpec{}
		n.Status = corev1.NamespaceStatus{Phase: n.Status.Phase}
	}
	return obj, nil
}

func transformSecret(obj any) (any, error) {
	if s, ok := obj.(*corev1.Secret); ok {
		// The data (kubeconfigs) is needed; annotations are not. Of the
		// managed fields only the newest time: when it was last written.
		newest := s.CreationTimestamp
		for _, f := range s.ManagedFields {
			if f.Time != nil && f.Time.After(newest.Time) {
				newest = *f.Time
			}
		}
		stripMeta(&s.ObjectMeta, false)
		// stringData (istioctl create-remote-secret writes it) is folded
		// into data as the API server does on write, over data's keys: a
		// what-if of such a file reads what the cluster would hold.
		for k, v := range s.StringData {
			if s.Data == nil {
				s.Data = map[string][]byte{}
			}
			s.Data[k] = []byte(v)
		}
		s.StringData = nil
		if !newest.IsZero() {
			s.ManagedFields = []metav1.ManagedFieldsEntry{{Time: &newest}}
		}
	}
	return obj, nil
}

// transformConfigMap keeps, of the system namespace's ConfigMaps, only
// what meshscope reads: the mesh config and meshNetworks of ConfigMaps
// istio[-REV], and the cluster name and network from the values of
// istio-sidecar-injector[-REV].
func transformConfigMap(obj any) (any, error) {
	c, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return obj, nil
	}
	stripMeta(&c.ObjectMeta, false)
	data := c.Data
	c.Data, c.BinaryData = nil, nil
	keep := func(k, v string) {
		if c.Data == nil {
			c.Data = map[string]string{}
		}
		c.Data[k] = v
	}
	switch {
	case strings.HasPrefix(c.Name, injectorConfigMap):
		if id := injectorValuesClusterName(data[injectorValuesKey]); id != "" {
			keep(injectorValuesKey, id)
		}
	case c.Name == "istio" || strings.HasPrefix(c.Name, "istio-"):
		for _, k := range []string{meshNetworksKey, meshConfigKey} {
			if v, ok := data[k]; ok {
				keep(k, v)
			}
		}
	}
	return c, nil
}

// podRedirected reads istio-cni's enrollment annotation.
func podRedirected(p *corev1.Pod) bool {
	return p.Annotations[model.AnnotationRedirection] == "enabled"
}

func transformNode(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	c := &build.Node{Name: n.Name, ResourceVersion: n.ResourceVersion, Labels: n.Labels, Locality: model.NodeLocality(n.Labels)}
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeExternalIP && a.Address != "" {
			c.ExternalIP = a.Address
			break
		}
	}
	return c, nil
}
