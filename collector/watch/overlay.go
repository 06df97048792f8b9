package watch

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/meshscope/meshscope/collector/build"
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

// A what-if routes each changed object by the scopes of the watcher's
// informers, which add records from what their list-watches select (the
// one place that is said): it lands in every informer whose scope
// selects it, and leaves the ones that no longer do.

// of says whether the informer holds objects of this group and kind.
func (h *informerHealth) of(gk schema.GroupKind) bool { return h.scope.kind == gk }

// selects says whether the informer's list-watch would return u.
func (h *informerHealth) selects(u *unstructured.Unstructured) bool {
	if h.scope.namespace != "" && u.GetNamespace() != h.scope.namespace {
		return false
	}
	if h.scope.name != "" && u.GetName() != h.scope.name {
		return false
	}
	return h.selector == nil || h.selector.Matches(labels.Set(u.GetLabels()))
}

// cached turns an object of a what-if into what the informer would cache:
// typed (core kinds) and through the informer's transform.
func (h *informerHealth) cached(u *unstructured.Unstructured) (any, error) {
	var obj runtime.Object = u.DeepCopy()
	if h.typed {
		typed, err := scheme.Scheme.New(u.GroupVersionKind())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", u.GetKind(), err)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
			return nil, fmt.Errorf("%s %s: %w", u.GetKind(), cache.MetaObjectToName(u).String(), err)
		}
		obj = typed
	}
	if h.transform == nil {
		return obj, nil
	}
	return h.transform(obj)
}

// Apply puts obj (or, with del, deletes it) in every informer of the
// watcher whose list-watch selects it, through that informer's transform,
// and takes it out of the ones that no longer do. read names the caches
// it changed; when none, unread says why nothing reads such an object
// ("" when meshscope models no informer for it). Deleting an object that
// does not exist is an error: a what-if must say what it changes.
func (o *Overlay) Apply(obj *unstructured.Unstructured, del bool) (read []string, unread string, err error) {
	gk := obj.GroupVersionKind().GroupKind()
	key := cache.MetaObjectToName(obj).String()
	existed := false
	for _, h := range o.w.infs {
		if !h.of(gk) {
			continue
		}
		ov := o.stores[h]
		if ov == nil {
			ov = newOverlayStore(h.store())
		}
		old, had, _ := ov.GetByKey(key)
		existed = existed || had
		switch {
		case !del && h.selects(obj):
			cached, err := h.cached(obj)
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
		o.stores[h] = ov
		read = append(read, h.name)
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
	for _, h := range w.infs {
		if h.scope.kind.Kind != kind {
			continue
		}
		switch {
		case h.scope.namespace != "" && obj.GetNamespace() != h.scope.namespace:
			return fmt.Sprintf("meshscope (like istiod) reads %ss only in %s", kind, h.scope.namespace)
		case h.selector != nil:
			return fmt.Sprintf("meshscope (like istiod) reads only the %ss labelled %s", kind, h.selector)
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
	s := &Watcher{client: w.client, opts: w.opts, log: w.log, redact: w.redact, gatewayAPI: w.gatewayAPI, parsed: w.parsed}
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
	s.istioGateways = at(w.istioGateways)
	return s
}
