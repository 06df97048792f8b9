package collector

import (
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

func transformEndpointSlice(obj any) (any, error) {
	if s, ok := obj.(*discoveryv1.EndpointSlice); ok {
		stripMeta(&s.ObjectMeta, false)
		for i := range s.Endpoints {
			s.Endpoints[i].Hints = nil
			s.Endpoints[i].DeprecatedTopology = nil
			if r := s.Endpoints[i].TargetRef; r != nil {
				// Only kind, namespace and name identify the pod.
				s.Endpoints[i].TargetRef = &corev1.ObjectReference{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
			}
		}
	}
	return obj, nil
}

// cachedPod is all the Pod cache keeps of a Pod: its identity (for the
// store's key), its node and the labels that matter, interned so pods of
// one workload share one map. A full corev1.Pod, even stripped, costs over
// 1 KiB per pod, and pods are the bulk of a mesh's objects.
type cachedPod struct {
	metav1.ObjectMeta
	NodeName string
}

func (p *cachedPod) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (p *cachedPod) DeepCopyObject() runtime.Object {
	c := *p
	p.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

// podInterner shares namespace strings and label maps between cached pods.
type podInterner struct {
	mu         sync.Mutex
	namespaces map[string]string
	labels     map[string]map[string]string
}

func (in *podInterner) transform(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.namespaces == nil {
		in.namespaces, in.labels = map[string]string{}, map[string]map[string]string{}
	}
	ns, ok := in.namespaces[p.Namespace]
	if !ok {
		ns = p.Namespace
		in.namespaces[ns] = ns
	}
	return &cachedPod{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: ns, UID: p.UID, ResourceVersion: p.ResourceVersion,
			Labels: internLabels(in.labels, p.Labels)},
		NodeName: p.Spec.NodeName,
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
		if mn, ok := c.Data[meshNetworksKey]; ok {
			c.Data = map[string]string{meshNetworksKey: mn}
		} else {
			c.Data = nil
		}
		c.BinaryData = nil
	}
	return obj, nil
}
