package collector

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// cacheSlice is what the EndpointSlice informer caches for sl.
func cacheSlice(sl *discoveryv1.EndpointSlice) *cachedSlice {
	o, _ := newInterner().transformEndpointSlice(sl)
	return o.(*cachedSlice)
}

func TestCachedSliceKeepsWhatBuildReads(t *testing.T) {
	yes, no := true, false
	node, zone := "node-a", "zone-1"
	sl := sliceObj("sample", "hw", "hw-abc", 5000, nil)
	sl.ResourceVersion = "42"
	sl.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}}
	sl.Endpoints = []discoveryv1.Endpoint{
		{Addresses: []string{"10.0.0.1"}, NodeName: &node, Zone: &zone,
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "sample", Name: "hw-1", UID: "u1", ResourceVersion: "7"}},
		{Addresses: []string{"10.0.0.2"}, Conditions: discoveryv1.EndpointConditions{Ready: &no, Serving: &yes, Terminating: &yes},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "other", Name: "hw-2"}},
		{Addresses: []string{"10.0.0.3"}, Conditions: discoveryv1.EndpointConditions{Ready: &no},
			TargetRef: &corev1.ObjectReference{Kind: "Node", Name: "vm-1"}},
	}
	c := cacheSlice(sl)
	if c.name != "hw-abc" || c.namespace != "sample" || c.service != "hw" || c.resourceVersion != "42" || c.addressType != discoveryv1.AddressTypeIPv4 {
		t.Fatalf("identity = %+v", c)
	}
	if len(c.ports) != 1 || c.ports[0] != (EndpointPort{Name: "http", Port: 5000, Protocol: "TCP"}) {
		t.Fatalf("ports = %+v", c.ports)
	}
	type cond struct{ ready, serving, terminating bool }
	want := []struct {
		pod, podNS, node string
		cond
	}{
		{"hw-1", "", "node-a", cond{true, true, false}}, // conditions unset: ready, serving
		{"hw-2", "other", "", cond{false, true, true}},  // serving while terminating
		{"", "", "", cond{false, false, true}},          // not a Pod: no pod; serving follows ready; not ready and terminating unset: terminating, as istiod reads it
	}
	for i, w := range want {
		e := c.endpoints[i]
		got := cond{e.conditions.ready(), e.conditions.serving(), e.conditions.terminating()}
		if e.pod != w.pod || e.podNamespace != w.podNS || e.node != w.node || got != w.cond || e.addresses[0] != sl.Endpoints[i].Addresses[0] {
			t.Errorf("endpoint %d = %+v %+v, want %+v", i, e, got, w)
		}
	}
	// The store keys it like any object, and a copy is independent.
	if k, err := cache.MetaNamespaceKeyFunc(c); err != nil || k != "sample/hw-abc" {
		t.Fatalf("key = %q, %v", k, err)
	}
	cp := c.DeepCopyObject().(*cachedSlice)
	cp.endpoints[0].addresses[0] = "x"
	if c.endpoints[0].addresses[0] != "10.0.0.1" {
		t.Fatal("DeepCopyObject shares addresses")
	}
}

func TestCachedPodKey(t *testing.T) {
	p := podObj("sample", "hw-1", "10.0.0.1", "network1", true)
	p.ResourceVersion = "9"
	o, _ := newInterner().transformPod(p)
	c := o.(*cachedPod)
	if k, err := cache.MetaNamespaceKeyFunc(c); err != nil || k != "sample/hw-1" {
		t.Fatalf("key = %q, %v", k, err)
	}
	// The resource version tells an update from a resync in the informer.
	if m := c.GetObjectMeta(); m.GetResourceVersion() != "9" {
		t.Fatalf("resourceVersion = %q", m.GetResourceVersion())
	}
}

// FQDN slices are ignored, as istiod does (istio#34995), and so are slices
// that belong to no Service.
func TestBuildSkipsFQDNAndOrphanSlices(t *testing.T) {
	fqdn := sliceObj("sample", "hw", "hw-fqdn", 80, map[string]string{"p": "example.com"})
	fqdn.AddressType = discoveryv1.AddressTypeFQDN
	orphan := sliceObj("sample", "hw", "hw-orphan", 80, map[string]string{"q": "10.0.0.8"})
	delete(orphan.Labels, discoveryv1.LabelServiceName)
	ok := sliceObj("sample", "hw", "hw-1", 80, map[string]string{"r": "10.0.0.9"})
	v := cacheView{
		services: []*corev1.Service{svcObj("sample", "hw", 80)},
		slices:   []*cachedSlice{cacheSlice(fqdn), cacheSlice(orphan), cacheSlice(ok)},
		pod:      func(string) *cachedPod { return nil },
	}
	p := buildPart(v, "c1", "cluster.local", nil)
	eps := p.services["hw.sample.svc.cluster.local"].Endpoints
	if len(eps) != 1 || eps[0].Address != "10.0.0.9" {
		t.Fatalf("endpoints = %+v", eps)
	}
}

func TestInternerBounded(t *testing.T) {
	in := newInterner()
	in.mu.Lock()
	defer in.mu.Unlock()
	first := in.str("node-0")
	for i := 1; i <= internerLimit; i++ {
		in.str("node-" + strconv.Itoa(i))
	}
	if len(in.strings) > internerLimit {
		t.Fatalf("interner holds %d strings, limit %d", len(in.strings), internerLimit)
	}
	if first != "node-0" || in.str("node-0") != "node-0" {
		t.Fatal("values must survive a reset")
	}
}
