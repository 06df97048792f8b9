package watch

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/meshscope/meshscope/collector/build"
)

// A real change of a Service's selector or ports, or of a pod's labels,
// readiness or address (or of the workload controller that makes the pod),
// reaches istiod through the EndpointSlices the
// endpoint controller rewrites. A what-if has no controller: EndpointSlices
// plays its part on the overlays of one cluster, for the Services of the
// namespaces the changes touch — each Service with a selector gets the
// EndpointSlice the controller would write (its pods: matching, with an
// address, ready or not), replacing its slices when what they hold
// differs; a deleted Service loses its slices (they are its own). A
// Service whose EndpointSlices the changes give explicitly is left alone.

// EndpointSlices brings the overlay's slices in line with its (overlaid)
// Services and Pods in the namespaces the changed objects touch, as the
// endpoint controller would; it returns what it rewrote, for the
// what-if's notes. Call it once all of the cluster's changes are applied.
func (o *Overlay) EndpointSlices(changed []*unstructured.Unstructured) []string {
	w, cluster := o.w, o.cluster
	if w.slices == nil || w.services == nil || w.pods == nil {
		return nil
	}
	touched, given := map[string]bool{}, map[string]bool{}
	for _, obj := range changed {
		ns := obj.GetNamespace()
		gk := obj.GroupVersionKind().GroupKind()
		switch gk.String() {
		case "Service", "Pod":
			touched[ns] = true
		case "EndpointSlice.discovery.k8s.io":
			given[ns+"/"+obj.GetLabels()[discoveryv1.LabelServiceName]] = true
		default:
			// A workload controller's pods (ApplyWorkload).
			touched[ns] = touched[ns] || IsWorkload(gk)
		}
	}
	if len(touched) == 0 {
		return nil
	}
	svcs, pods := o.storeOf(w.services), o.storeOf(w.pods)
	ov := o.stores[w.slices]
	if ov == nil {
		ov = newOverlayStore(w.slices.store())
	}
	bySvc := map[string][]*build.Slice{}
	for s := range objectsOf[*build.Slice](ov) {
		if touched[s.Namespace] && s.Service != "" {
			bySvc[s.Namespace+"/"+s.Service] = append(bySvc[s.Namespace+"/"+s.Service], s)
		}
	}
	live := map[string]bool{}
	var notes []string
	for svc := range objectsOf[*corev1.Service](svcs) {
		if !touched[svc.Namespace] || len(svc.Spec.Selector) == 0 {
			continue
		}
		key := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}.String()
		live[key] = true
		if given[key] {
			continue
		}
		want := controllerSlice(svc, pods)
		obj, err := w.slices.transform(want)
		if err != nil {
			continue
		}
		slice := obj.(*build.Slice)
		if sameEndpoints(bySvc[key], slice) {
			continue
		}
		for _, old := range bySvc[key] {
			delete(ov.put, old.Namespace+"/"+old.Name)
			ov.deleted[old.Namespace+"/"+old.Name] = true
		}
		ov.put[slice.Namespace+"/"+slice.Name] = slice
		delete(ov.deleted, slice.Namespace+"/"+slice.Name)
		notes = append(notes, fmt.Sprintf("the EndpointSlices of Service %s in %s are rewritten as the endpoint controller would (%d endpoints)", key, cluster, len(slice.Endpoints)))
	}
	// A deleted Service's slices go with it (garbage collection).
	for key, ss := range bySvc {
		if live[key] || given[key] {
			continue
		}
		if _, exists, _ := svcs.GetByKey(key); exists {
			continue
		}
		for _, old := range ss {
			delete(ov.put, old.Namespace+"/"+old.Name)
			ov.deleted[old.Namespace+"/"+old.Name] = true
		}
	}
	if len(ov.put)+len(ov.deleted) > 0 {
		o.stores[w.slices] = ov
	}
	return notes
}

// controllerSlice is the EndpointSlice the endpoint controller writes for
// svc from the pods it selects (one slice; a named targetPort resolved
// with the first pod that names it), as kubesim writes them in the lab.
func controllerSlice(svc *corev1.Service, pods storeReader) *discoveryv1.EndpointSlice {
	sel := labels.SelectorFromSet(svc.Spec.Selector)
	var matched []*build.Pod
	for p := range objectsOf[*build.Pod](pods) {
		if p.Namespace == svc.Namespace && p.IP.IsValid() && sel.Matches(labels.Set(p.Labels)) {
			matched = append(matched, p)
		}
	}
	sort.Slice(matched, func(i, j int) bool { return matched[i].Name < matched[j].Name })
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: svc.Name + "-what-if", Namespace: svc.Namespace,
			Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name, discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	for _, sp := range svc.Spec.Ports {
		port := sp.Port
		switch {
		case sp.TargetPort.IntVal != 0:
			port = sp.TargetPort.IntVal
		case sp.TargetPort.StrVal != "":
			port = namedPort(matched, sp.TargetPort.StrVal, sp.Port)
		}
		s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr.To(sp.Name), Port: ptr.To(port), Protocol: ptr.To(sp.Protocol)})
	}
	for _, p := range matched {
		ready := p.InEndpoints
		ep := discoveryv1.Endpoint{
			Addresses:  []string{p.IP.String()},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready), Serving: ptr.To(ready), Terminating: ptr.To(false)},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name},
		}
		if p.NodeName != "" {
			ep.NodeName = ptr.To(p.NodeName)
		}
		s.Endpoints = append(s.Endpoints, ep)
	}
	return s
}

// namedPort resolves a named targetPort with the first pod that has it.
func namedPort(pods []*build.Pod, name string, def int32) int32 {
	for _, p := range pods {
		if p.Ports == nil {
			continue
		}
		for _, np := range *p.Ports {
			if np.Name == name {
				return np.Port
			}
		}
	}
	return def
}

// sameEndpoints says whether the service's slices hold what the
// controller's slice would: the same pods at the same addresses, with the
// same readiness, on the same ports.
func sameEndpoints(have []*build.Slice, want *build.Slice) bool {
	var a, b []string
	var pa, pb []string
	for _, s := range have {
		for _, e := range s.Endpoints {
			a = append(a, fmt.Sprintf("%s=%s/%t", e.PodName(), strings.Join(e.Addresses, ","), e.Conditions.Ready()))
		}
		for _, p := range s.Ports {
			pa = append(pa, fmt.Sprintf("%s/%d", p.Name, p.Port))
		}
	}
	for _, e := range want.Endpoints {
		b = append(b, fmt.Sprintf("%s=%s/%t", e.PodName(), strings.Join(e.Addresses, ","), e.Conditions.Ready()))
	}
	for _, p := range want.Ports {
		pb = append(pb, fmt.Sprintf("%s/%d", p.Name, p.Port))
	}
	slices.Sort(a)
	slices.Sort(b)
	slices.Sort(pa)
	slices.Sort(pb)
	return slices.Equal(a, b) && slices.Equal(slices.Compact(pa), pb)
}
