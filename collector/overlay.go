package collector

import (
	"fmt"
	discoveryv1 "k8s.io/api/discovery/v1"
	"maps"
	"slices"

	"github.com/meshscope/meshscope/model"
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
// newWatcher (and addControlPlaneInformers, addIstioConfigInformers,
// addGatewayInformer) selects. An object of a what-if lands in every
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
func (w *watcher) routes() []route {
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

// shadow is a copy of the watcher that reads through overlays (by
// informer) and shares nothing it could change: the live watcher's caches,
// its cached part and its dirty flag stay as they are.
func (w *watcher) shadow(overlays map[*informerHealth]*overlayStore) *watcher {
	s := &watcher{client: w.client, opts: w.opts, log: w.log, redact: w.redact, gatewayAPI: w.gatewayAPI}
	w.mu.Lock()
	defer w.mu.Unlock()
	copies := map[*informerHealth]*informerHealth{}
	for _, h := range w.infs {
		c := *h
		c.overlay = overlays[h]
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
