package watch

import (
	"reflect"
	"strconv"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/meshscope/meshscope/collector/build"
	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

// cacheSlice is what the EndpointSlice informer caches for sl.
func cacheSlice(sl *discoveryv1.EndpointSlice) *build.Slice {
	o, _ := newInterner().transformEndpointSlice(sl)
	return o.(*build.Slice)
}

func TestCachedSliceKeepsWhatBuildReads(t *testing.T) {
	yes, no := true, false
	node, zone := "node-a", "zone-1"
	sl := meshtest.EndpointSlice("sample", "hw", "hw-abc", 5000, nil)
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
	if c.Name != "hw-abc" || c.Namespace != "sample" || c.Service != "hw" || c.ResourceVersion != "42" || c.AddressType != discoveryv1.AddressTypeIPv4 {
		t.Fatalf("identity = %+v", c)
	}
	if len(c.Ports) != 1 || c.Ports[0] != (model.EndpointPort{Name: "http", Port: 5000, Protocol: "TCP"}) {
		t.Fatalf("ports = %+v", c.Ports)
	}
	type cond struct{ ready, serving, terminating bool }
	want := []struct {
		podKey, podName, node string
		cond
	}{
		{"sample/hw-1", "hw-1", "node-a", cond{true, true, false}}, // conditions unset: ready, serving
		{"other/hw-2", "hw-2", "", cond{false, true, true}},        // another namespace's pod; serving while terminating
		{"", "", "", cond{false, false, true}},                     // not a Pod: no pod; serving follows ready; not ready and terminating unset: terminating, as istiod reads it
	}
	for i, w := range want {
		e := c.Endpoints[i]
		got := cond{e.Conditions.Ready(), e.Conditions.Serving(), e.Conditions.Terminating()}
		if e.PodKey(c.Namespace) != w.podKey || e.PodName() != w.podName || e.Node != w.node || got != w.cond || e.Addresses[0] != sl.Endpoints[i].Addresses[0] {
			t.Errorf("endpoint %d = %+v %+v, want %+v", i, e, got, w)
		}
	}
	// The store keys it like any object, and a copy is independent.
	if k, err := cache.MetaNamespaceKeyFunc(c); err != nil || k != "sample/hw-abc" {
		t.Fatalf("key = %q, %v", k, err)
	}
	cp := c.DeepCopyObject().(*build.Slice)
	cp.Endpoints[0].Addresses[0] = "x"
	if c.Endpoints[0].Addresses[0] != "10.0.0.1" {
		t.Fatal("DeepCopyObject shares addresses")
	}
}

func TestCachedPodKey(t *testing.T) {
	p := meshtest.Pod("sample", "hw-1", "10.0.0.1", "network1", true)
	p.ResourceVersion = "9"
	o, _ := newInterner().transformPod(p)
	c := o.(*build.Pod)
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
	fqdn := meshtest.EndpointSlice("sample", "hw", "hw-fqdn", 80, map[string]string{"p": "example.com"})
	fqdn.AddressType = discoveryv1.AddressTypeFQDN
	orphan := meshtest.EndpointSlice("sample", "hw", "hw-orphan", 80, map[string]string{"q": "10.0.0.8"})
	delete(orphan.Labels, discoveryv1.LabelServiceName)
	ok := meshtest.EndpointSlice("sample", "hw", "hw-1", 80, map[string]string{"r": "10.0.0.9"})
	v := build.Caches{
		Services: []*corev1.Service{meshtest.Service("sample", "hw", 80)},
		Slices:   []*build.Slice{cacheSlice(fqdn), cacheSlice(orphan), cacheSlice(ok)},
		Pod:      func(string) *build.Pod { return nil },
	}
	p := build.BuildPart(v, "c1", nil)
	eps := p.Services["hw.sample.svc.cluster.local"].Endpoints
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

// Pods with the same labels share one map, whatever order their maps list
// them in; a different value is a different set; the sets' strings are
// interned, so a value repeated across sets is held once.
func TestLabelSetShared(t *testing.T) {
	in := newInterner()
	in.mu.Lock()
	defer in.mu.Unlock()
	set := func(l map[string]string) map[string]string {
		m, _, shared := in.labelSet(l)
		if !shared {
			t.Fatalf("%v not shared", l)
		}
		return m
	}
	a := set(map[string]string{"app": "web", "version": "v1", "topology.kubernetes.io/zone": "z1"})
	b := set(map[string]string{"topology.kubernetes.io/zone": "z1", "version": "v1", "app": "web"})
	c := set(map[string]string{"app": "web", "version": "v1", "topology.kubernetes.io/zone": "z2"})
	if reflect.ValueOf(a).UnsafePointer() != reflect.ValueOf(b).UnsafePointer() {
		t.Fatal("equal label sets are not shared")
	}
	if reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(c).UnsafePointer() || c["topology.kubernetes.io/zone"] != "z2" {
		t.Fatalf("different label sets are mixed up: %v %v", a, c)
	}
	if unsafe.StringData(a["app"]) != unsafe.StringData(c["app"]) {
		t.Fatal("label values are not interned across sets")
	}
	if set(nil) != nil || len(in.labels) != 2 {
		t.Fatalf("table holds %d sets, want 2", len(in.labels))
	}
	// A colliding hash (forced here) must give the caller its own labels,
	// not the other set, and say it is not shared.
	for h := range in.labels {
		in.labels[h] = map[string]string{"other": "set"}
	}
	d, _, shared := in.labelSet(map[string]string{"app": "web", "version": "v1", "topology.kubernetes.io/zone": "z1"})
	if d["app"] != "web" || len(d) != 3 || shared {
		t.Fatalf("collision returned %v (shared %v)", d, shared)
	}
}

// Replicas share one build.PodTemplate; a pod whose labels, service account or
// named ports differ gets its own; and the cached pod reads as the Pod did.
func TestPodTemplateShared(t *testing.T) {
	in := newInterner()
	pod := func(name, sa, zone string, port int32) *build.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: "12345",
				Labels: map[string]string{"app": "web", "topology.kubernetes.io/zone": zone}},
			Spec: corev1.PodSpec{ServiceAccountName: sa, NodeName: "node-" + name,
				Containers: []corev1.Container{{Name: "app", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: port}}}}},
			Status: corev1.PodStatus{PodIP: "10.0.0.1", Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
		}
		c, err := in.transformPod(p)
		if err != nil {
			t.Fatal(err)
		}
		return c.(*build.Pod)
	}
	a, b := pod("a", "web", "z1", 8080), pod("b", "web", "z1", 8080)
	if a.PodTemplate != b.PodTemplate {
		t.Fatal("replicas do not share a template")
	}
	for _, other := range []*build.Pod{pod("c", "other", "z1", 8080), pod("d", "web", "z2", 8080), pod("e", "web", "z1", 9090)} {
		if other.PodTemplate == a.PodTemplate {
			t.Fatalf("pod %s shares a template it differs from", other.Name)
		}
	}
	if a.Name != "a" || a.NodeName != "node-a" || a.ServiceAccount != "web" || a.Labels["app"] != "web" ||
		a.Ports == nil || (*a.Ports)[0].Port != 8080 || !a.InEndpoints || a.GetObjectMeta().GetResourceVersion() != "12345" {
		t.Fatalf("cached pod = %+v %+v", a, a.PodTemplate)
	}
	// A deep copy owns its labels.
	c := a.DeepCopyObject().(*build.Pod)
	c.Labels["app"] = "changed"
	if a.Labels["app"] != "web" {
		t.Fatal("DeepCopyObject shares the labels")
	}
}

// A build.Pod is held per pod of every cluster: a field added must be
// worth its bytes at 30,000 pods (docs/benchmarks.md).
func TestCachedPodSize(t *testing.T) {
	if got := unsafe.Sizeof(build.Pod{}); got > 96 {
		t.Fatalf("cachedPod is %d B, want ≤ 96 (one allocator size class); keep the bools together", got)
	}
	if got := unsafe.Sizeof(build.SliceEndpoint{}); got > 64 {
		t.Fatalf("cachedEndpoint is %d B, want ≤ 64", got)
	}
}

// Every snapshot holds one Endpoint per endpoint of the mesh.
func TestEndpointSize(t *testing.T) {
	if got := unsafe.Sizeof(model.Endpoint{}); got > 176 {
		t.Fatalf("Endpoint is %d B, want ≤ 176; keep the small fields together", got)
	}
}

// An opaque resource version is kept as a hash: equal versions compare
// equal, different ones differ, and a numeric one reads back the same.
func TestResourceVersionNumber(t *testing.T) {
	in := newInterner()
	if n := in.resourceVersionNumber("987654321"); strconv.FormatUint(n, 10) != "987654321" {
		t.Fatalf("numeric version reads back as %q", strconv.FormatUint(n, 10))
	}
	x, y := in.resourceVersionNumber("abc"), in.resourceVersionNumber("abd")
	if x == y || x != in.resourceVersionNumber("abc") || x < 1<<63 {
		t.Fatalf("opaque versions: %d %d", x, y)
	}
}

func TestStripTransforms(t *testing.T) {
	s := meshtest.Service("a", "b", 80)
	s.Annotations["networking.istio.io/exportTo"] = "."
	_, _ = transformService(s)
	if s.ManagedFields != nil || len(s.Annotations) != 1 {
		t.Fatalf("service not stripped: %+v", s.ObjectMeta)
	}
	// Pods are cached as build.Pod: identity, node, all labels (any label
	// may be selected by Istio config), and pods with the same labels share
	// one label map.
	in := newInterner()
	p1, p2, p3 := meshtest.Pod("a", "p1", "1.1.1.1", "", true), meshtest.Pod("a", "p2", "1.1.1.2", "", true), meshtest.Pod("a", "p3", "1.1.1.3", "", true)
	p3.Labels["pod-template-hash"] = "y"
	p1.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	o1, _ := in.transformPod(p1)
	o2, _ := in.transformPod(p2)
	o3, _ := in.transformPod(p3)
	c1, c2, c3 := o1.(*build.Pod), o2.(*build.Pod), o3.(*build.Pod)
	if c1.Name != "p1" || c1.Namespace != "a" || c1.NodeName != "node1" || c1.Labels["pod-template-hash"] != "abc" || c1.Labels["app"] == "" {
		t.Fatalf("cached pod: %+v", c1)
	}
	if c1.IP.String() != "1.1.1.1" || !c1.InEndpoints || c2.InEndpoints {
		t.Errorf("pod address and readiness: %+v / %+v", c1, c2)
	}
	if reflect.ValueOf(c1.Labels).Pointer() != reflect.ValueOf(c2.Labels).Pointer() {
		t.Error("pods with the same labels should share one map")
	}
	if reflect.ValueOf(c1.Labels).Pointer() == reflect.ValueOf(c3.Labels).Pointer() || c3.Labels["pod-template-hash"] != "y" {
		t.Error("pods with other labels need a map of their own")
	}
}

// An endpoint whose pod is not (yet) in the cache is marked: istiod skips it.
func TestEndpointWithoutPod(t *testing.T) {
	v := build.Caches{
		Services: []*corev1.Service{meshtest.Service("sample", "hw", 80)},
		Slices:   []*build.Slice{cacheSlice(meshtest.EndpointSlice("sample", "hw", "hw-1", 80, map[string]string{"ghost": "10.0.0.9"}))},
		Pod:      func(string) *build.Pod { return nil },
	}
	p := build.BuildPart(v, "c1", nil)
	eps := p.Services["hw.sample.svc.cluster.local"].Endpoints
	if len(eps) != 1 || !eps[0].PodMissing || eps[0].Pod != "ghost" || eps[0].Network != "" {
		t.Fatalf("endpoints = %+v", eps)
	}
}
