package watch

import (
	"fmt"
	"maps"
	"slices"

	"github.com/meshscope/meshscope/collector/build"
	"github.com/meshscope/meshscope/model"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
)

// A what-if reads a cluster through an overlay: its informers' caches as
// they are, with some objects put (created or replaced) and some deleted.
// Objects enter the overlay through the informer's own transform, and the
// read side (watcher_view.go, policy.go, …) reads the overlay instead of
// the cache (informerHealth.store), so a changed object is read exactly as
// a real event would have left it in the cache.

// Overlay is a what-if's changes to one watcher's caches, by informer. It
// changes nothing of the live caches: a Shadow reads through it.
type Overlay struct {
	w *Watcher
	// cluster is the watcher's cluster ID, for sentences.
	cluster string
	stores  map[*informerHealth]*overlayStore
}

// NewOverlay starts a what-if's overlay of w's caches; cluster is the ID
// the Registry knows w's cluster by (a watcher does not know its own).
func (w *Watcher) NewOverlay(cluster string) *Overlay {
	return &Overlay{w: w, cluster: cluster, stores: map[*informerHealth]*overlayStore{}}
}

// Changes says whether the overlay changes any cache: a shadow that reads
// through one has its part rebuilt, never taken from the live watcher.
func (o *Overlay) Changes() bool { return o != nil && len(o.stores) > 0 }

// Replans says whether the overlay changes what planning reads (remote
// secrets, istiod pods, the injector's ConfigMap): the what-if then plans
// the clusters again, as a real change would.
func (o *Overlay) Replans() bool {
	if o == nil {
		return false
	}
	for _, h := range []*informerHealth{o.w.secrets, o.w.istiods, o.w.configMaps} {
		if h != nil && o.stores[h] != nil {
			return true
		}
	}
	return false
}

// storeOf is what the informer holds with the overlay, if any.
func (o *Overlay) storeOf(h *informerHealth) storeReader {
	if ov := o.stores[h]; ov != nil {
		return ov
	}
	return h.store()
}

// overlayStore is an informer's cache with objects put and deleted by key
// (namespace/name, as the informer keys them).
type overlayStore struct {
	base    storeReader
	put     map[string]any
	deleted map[string]bool
}

func newOverlayStore(base storeReader) *overlayStore {
	return &overlayStore{base: base, put: map[string]any{}, deleted: map[string]bool{}}
}

func (o *overlayStore) hidden(key string) bool {
	_, replaced := o.put[key]
	return replaced || o.deleted[key]
}

func (o *overlayStore) List() []any {
	var out []any
	for _, obj := range o.base.List() {
		if k, err := cache.MetaNamespaceKeyFunc(obj); err == nil && o.hidden(k) {
			continue
		}
		out = append(out, obj)
	}
	for _, k := range slices.Sorted(maps.Keys(o.put)) {
		out = append(out, o.put[k])
	}
	return out
}

func (o *overlayStore) ListKeys() []string {
	var out []string
	for _, k := range o.base.ListKeys() {
		if !o.hidden(k) {
			out = append(out, k)
		}
	}
	return append(out, slices.Sorted(maps.Keys(o.put))...)
}

func (o *overlayStore) GetByKey(key string) (any, bool, error) {
	if obj, ok := o.put[key]; ok {
		return obj, true, nil
	}
	if o.deleted[key] {
		return nil, false, nil
	}
	return o.base.GetByKey(key)
}

// route says which objects an informer holds: the ones its list-watch in
// New (and addControlPlaneInformers, AddIstioConfigInformers,
// AddGatewayInformer) selects. An object of a what-if lands in every
// informer whose route selects it, and leaves the ones that no longer do.
type route struct {
	h           *informerHealth
	group, kind string
	// namespace and name narrow it ("" for any); selector is its label
	// selector (nil for every object).
	namespace, name string
	selector        labels.Selector
	// typed says the informer holds typed objects (core kinds), not
	// unstructured ones (Istio config, Gateways).
	typed bool
}

// routes are the watcher's informers as routes (the ones it runs).
func (w *Watcher) routes() []route {
	ns := w.opts.SystemNamespace
	rs := []route{
		{h: w.services, kind: "Service", typed: true},
		{h: w.slices, group: discoveryv1.GroupName, kind: "EndpointSlice", typed: true},
		{h: w.pods, kind: "Pod", typed: true},
		{h: w.namespaces, kind: "Namespace", typed: true},
		{h: w.nodes, kind: "Node", typed: true},
		{h: w.configMaps, kind: "ConfigMap", namespace: ns, typed: true},
		{h: w.secrets, kind: "Secret", namespace: ns, selector: selector(model.MultiClusterSecretLabel + "=true"), typed: true},
		{h: w.istiods, kind: "Pod", namespace: ns, selector: selector(istiodPodLabel), typed: true},
		{h: w.rootCerts, kind: "ConfigMap", namespace: ns, name: model.RootCertConfigMap, typed: true},
		{h: w.destinationRules, group: gvrDestinationRules.Group, kind: "DestinationRule"},
		{h: w.peerAuthentications, group: gvrPeerAuthentications.Group, kind: "PeerAuthentication"},
		{h: w.sidecars, group: gvrSidecars.Group, kind: "Sidecar"},
		{h: w.virtualServices, group: gvrVirtualServices.Group, kind: "VirtualService"},
		{h: w.serviceEntriesInf, group: gvrServiceEntries.Group, kind: "ServiceEntry"},
		{h: w.workloadEntriesInf, group: gvrWorkloadEntries.Group, kind: "WorkloadEntry"},
		{h: w.gateways, group: gvrGateways.Group, kind: "Gateway"},
	}
	out := rs[:0]
	for _, r := range rs {
		if r.h != nil {
			out = append(out, r)
		}
	}
	return out
}

// selector is a list-watch's label selector (a constant of this package).
func selector(s string) labels.Selector {
	sel, err := labels.Parse(s)
	if err != nil {
		panic(err)
	}
	return sel
}

// of says whether the route is for objects of this group and kind.
func (r route) of(gk schema.GroupKind) bool { return r.group == gk.Group && r.kind == gk.Kind }

// selects says whether the route's list-watch would return u.
func (r route) selects(u *unstructured.Unstructured) bool {
	if r.namespace != "" && u.GetNamespace() != r.namespace {
		return false
	}
	if r.name != "" && u.GetName() != r.name {
		return false
	}
	return r.selector == nil || r.selector.Matches(labels.Set(u.GetLabels()))
}

// cached turns an object of a what-if into what the route's informer would
// cache: typed (core kinds) and through the informer's transform.
func (r route) cached(u *unstructured.Unstructured) (any, error) {
	var obj runtime.Object = u.DeepCopy()
	if r.typed {
		typed, err := scheme.Scheme.New(u.GroupVersionKind())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", u.GetKind(), err)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
			return nil, fmt.Errorf("%s %s: %w", u.GetKind(), objectName(u), err)
		}
		obj = typed
	}
	if r.h.transform == nil {
		return obj, nil
	}
	return r.h.transform(obj)
}

// objectName is namespace/name, or name for a cluster-scoped object.
func objectName(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetName()
	}
	return u.GetNamespace() + "/" + u.GetName()
}

// Apply puts obj (or, with del, deletes it) in every informer of the
// watcher whose list-watch selects it, through that informer's transform,
// and takes it out of the ones that no longer do. read names the caches
// it changed; when none, unread says why nothing reads such an object
// ("" when meshscope models no informer for it). Deleting an object that
// does not exist is an error: a what-if must say what it changes.
func (o *Overlay) Apply(obj *unstructured.Unstructured, del bool) (read []string, unread string, err error) {
	gk := obj.GroupVersionKind().GroupKind()
	key := objectName(obj)
	existed := false
	for _, rt := range o.w.routes() {
		if !rt.of(gk) {
			continue
		}
		ov := o.stores[rt.h]
		if ov == nil {
			ov = newOverlayStore(rt.h.store())
		}
		old, had, _ := ov.GetByKey(key)
		existed = existed || had
		switch {
		case !del && rt.selects(obj):
			cached, err := rt.cached(obj)
			if err != nil {
				return read, "", err
			}
			if had && obj.Object["status"] == nil {
				keepServerFields(old, cached)
			}
			ov.put[key] = cached
			delete(ov.deleted, key)
		case had:
			delete(ov.put, key)
			ov.deleted[key] = true
		default:
			continue
		}
		o.stores[rt.h] = ov
		read = append(read, rt.h.name)
	}
	if del && !existed {
		return read, "", fmt.Errorf("%s %s does not exist in cluster %s", obj.GetKind(), key, o.cluster)
	}
	if len(read) == 0 {
		unread = o.unreadWhy(gk.Kind, obj)
	}
	return read, unread, nil
}

// unreadWhy says why no informer of the cluster reads the object.
func (o *Overlay) unreadWhy(kind string, obj *unstructured.Unstructured) string {
	w := o.w
	for _, rt := range w.routes() {
		if rt.kind != kind {
			continue
		}
		switch {
		case rt.namespace != "" && obj.GetNamespace() != rt.namespace:
			return fmt.Sprintf("meshscope (like istiod) reads %ss only in %s", kind, rt.namespace)
		case rt.selector != nil:
			return fmt.Sprintf("meshscope (like istiod) reads only the %ss labelled %s", kind, rt.selector)
		}
	}
	if slices.Contains([]string{"DestinationRule", "PeerAuthentication", "Sidecar", "VirtualService", "ServiceEntry"}, kind) && w.destinationRules == nil {
		return "istiod reads Istio config only from its own (config) cluster, and " + o.cluster + " is a remote cluster"
	}
	return ""
}

// keepServerFields keeps in a replacing object what the API server (or a
// controller) fills in and the written object leaves out, as a real
// apply does: a Service's status (load-balancer addresses), cluster IP and
// node ports; a pod's node, IP and readiness; a node's addresses; a
// Gateway's status addresses; an istiod pod's readiness.
func keepServerFields(old, cur any) {
	switch c := cur.(type) {
	case *corev1.Service:
		o, ok := old.(*corev1.Service)
		if !ok {
			return
		}
		c.Status = *o.Status.DeepCopy()
		if c.Spec.ClusterIP == "" {
			c.Spec.ClusterIP, c.Spec.ClusterIPs = o.Spec.ClusterIP, slices.Clone(o.Spec.ClusterIPs)
		}
		for i := range c.Spec.Ports {
			for _, op := range o.Spec.Ports {
				if c.Spec.Ports[i].NodePort == 0 && op.Port == c.Spec.Ports[i].Port {
					c.Spec.Ports[i].NodePort = op.NodePort
				}
			}
		}
	case *build.Pod:
		if o, ok := old.(*build.Pod); ok {
			c.IP, c.InEndpoints = o.IP, o.InEndpoints
			if c.NodeName == "" {
				c.NodeName = o.NodeName
			}
		}
	case *corev1.Namespace:
		if o, ok := old.(*corev1.Namespace); ok {
			c.Status = o.Status
		}
	case *build.Node:
		if o, ok := old.(*build.Node); ok {
			c.ExternalIP = o.ExternalIP
		}
	case *build.GatewayObject:
		if o, ok := old.(*build.GatewayObject); ok {
			c.Addresses = slices.Clone(o.Addresses)
		}
	case *cachedIstiod:
		if o, ok := old.(*cachedIstiod); ok {
			c.pod.Ready = o.pod.Ready
		}
	case *unstructured.Unstructured:
		if o, ok := old.(*unstructured.Unstructured); ok {
			if st, found := o.Object["status"]; found {
				c.Object["status"] = st
			}
		}
	}
}

// Shadow is a copy of the watcher that reads through o (nil: the caches
// as they are) and shares nothing it could change: the live watcher's
// caches and its dirty flag stay as they are. A what-if builds both its
// snapshots from shadows, so that both read the same moment.
func (w *Watcher) Shadow(o *Overlay) *Watcher {
	s := &Watcher{client: w.client, opts: w.opts, log: w.log, redact: w.redact, gatewayAPI: w.gatewayAPI}
	w.mu.Lock()
	defer w.mu.Unlock()
	copies := map[*informerHealth]*informerHealth{}
	for _, h := range w.infs {
		c := *h
		if o != nil {
			c.overlay = o.stores[h]
		}
		copies[h] = &c
		s.infs = append(s.infs, &c)
	}
	at := func(h *informerHealth) *informerHealth {
		if h == nil {
			return nil
		}
		return copies[h]
	}
	s.services, s.slices, s.pods, s.namespaces, s.nodes = at(w.services), at(w.slices), at(w.pods), at(w.namespaces), at(w.nodes)
	s.secrets, s.configMaps, s.istiods, s.rootCerts = at(w.secrets), at(w.configMaps), at(w.istiods), at(w.rootCerts)
	s.tags = at(w.tags)
	s.destinationRules, s.peerAuthentications, s.sidecars, s.virtualServices = at(w.destinationRules), at(w.peerAuthentications), at(w.sidecars), at(w.virtualServices)
	s.serviceEntriesInf, s.workloadEntriesInf, s.gateways = at(w.serviceEntriesInf), at(w.workloadEntriesInf), at(w.gateways)
	return s
}
