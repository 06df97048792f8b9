package collector

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

func transformPod(obj any) (any, error) {
	if p, ok := obj.(*corev1.Pod); ok {
		stripMeta(&p.ObjectMeta, true)
		p.Spec = corev1.PodSpec{
			NodeName:           p.Spec.NodeName,
			ServiceAccountName: p.Spec.ServiceAccountName,
			HostNetwork:        p.Spec.HostNetwork,
		}
		var ready []corev1.PodCondition
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady {
				ready = append(ready, corev1.PodCondition{Type: c.Type, Status: c.Status})
			}
		}
		p.Status = corev1.PodStatus{
			Phase:      p.Status.Phase,
			PodIP:      p.Status.PodIP,
			PodIPs:     p.Status.PodIPs,
			Conditions: ready,
		}
	}
	return obj, nil
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
