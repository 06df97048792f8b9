package collector

import (
	"slices"
	"sort"

	"github.com/meshscope/meshscope/collector/build"
	"github.com/meshscope/meshscope/model"
	corev1 "k8s.io/api/core/v1"
)

// The watcher's read side: what the Registry reads of a watcher's caches.
// view hands them to the build (package collector/build), which takes
// plain objects and so also builds from caches that did not come from
// informers.

// view is the cluster's caches as the build's input.
func (w *watcher) view(systemNamespace string) build.Caches {
	v := build.Caches{}
	for _, o := range w.services.store().List() {
		if s, ok := o.(*corev1.Service); ok {
			v.Services = append(v.Services, s)
		}
	}
	for _, o := range w.slices.store().List() {
		if s, ok := o.(*build.Slice); ok {
			v.Slices = append(v.Slices, s)
		}
	}
	podStore := w.pods.store()
	v.Pod = func(key string) *build.Pod {
		o, ok, _ := podStore.GetByKey(key)
		if !ok {
			return nil
		}
		p, _ := o.(*build.Pod)
		return p
	}
	v.PodCount = len(podStore.ListKeys())
	v.Pods = func() []*build.Pod {
		var out []*build.Pod
		for _, o := range podStore.List() {
			if p, ok := o.(*build.Pod); ok {
				out = append(out, p)
			}
		}
		return out
	}
	nsStore := w.namespaces.store()
	v.Namespaces = func() []*corev1.Namespace {
		var out []*corev1.Namespace
		for _, o := range nsStore.List() {
			if n, ok := o.(*corev1.Namespace); ok {
				out = append(out, n)
			}
		}
		return out
	}
	if w.gateways != nil {
		for _, o := range w.gateways.store().List() {
			if g, ok := o.(*build.GatewayObject); ok {
				v.Gateways = append(v.Gateways, g)
			}
		}
		v.GatewayAPI = w.gatewayAPI.Load()
	}
	if w.nodes != nil {
		ns := w.nodes.store()
		v.Node = func(name string) *build.Node {
			o, ok, _ := ns.GetByKey(name)
			if !ok {
				return nil
			}
			n, _ := o.(*build.Node)
			return n
		}
		v.NodeCount = len(ns.ListKeys())
		v.Nodes = func() []*build.Node {
			var out []*build.Node
			for _, o := range ns.List() {
				if n, ok := o.(*build.Node); ok {
					out = append(out, n)
				}
			}
			return out
		}
	}
	if o, ok, _ := nsStore.GetByKey(systemNamespace); ok {
		v.SystemNamespace, _ = o.(*corev1.Namespace)
	}
	if w.secrets != nil {
		v.SecretCount = len(w.secrets.store().ListKeys())
	}
	return v
}

// meshNetworksRaw returns the meshNetworks text of the mesh ConfigMap
// ("istio", or "istio-<revision>"), if any.
func (w *watcher) meshNetworksRaw(ns string) string {
	text, _ := w.meshConfigMapKey(ns, meshNetworksKey)
	return text
}

// meshConfigMapKey returns one key of the mesh ConfigMap, and whether the
// ConfigMap exists.
func (w *watcher) meshConfigMapKey(ns, key string) (string, bool) {
	return w.meshConfigMapKeyIn(ns, key, w.configRevision())
}

// meshConfigMapKeyIn is meshConfigMapKey of revision rev's ConfigMap.
func (w *watcher) meshConfigMapKeyIn(ns, key, rev string) (string, bool) {
	o, ok, _ := w.configMaps.store().GetByKey(ns + "/" + model.MeshConfigMapName(rev))
	if !ok {
		return "", false
	}
	cm, _ := o.(*corev1.ConfigMap)
	if cm == nil {
		return "", false
	}
	return cm.Data[key], true
}

// istiodClusterIDs are the distinct CLUSTER_IDs of the istiod pods (of the
// revision, when one is given and runs here: elsewhere the cluster is
// predicted for its default revision) in the system namespace, sorted.
func (w *watcher) istiodClusterIDs(ns, revision string) []string {
	if w.istiods == nil {
		return nil
	}
	var pods []model.IstiodPod
	runs := false
	for _, o := range w.istiods.store().List() {
		if p, ok := o.(*cachedIstiod); ok && p.pod.Name != "" && p.namespace == ns {
			pods = append(pods, p.pod)
			runs = runs || p.pod.Revision == revision
		}
	}
	var ids []string
	for _, p := range pods {
		if p.ClusterID == "" || (runs && revision != "" && revision != "default" && p.Revision != revision) {
			continue
		}
		if !slices.Contains(ids, p.ClusterID) {
			ids = append(ids, p.ClusterID)
		}
	}
	sort.Strings(ids)
	return ids
}

// injectorClusterID is the clusterName of the sidecar injector's values
// (ConfigMap istio-sidecar-injector, or -REV), "" when none.
func (w *watcher) injectorClusterID(ns, revision string) string {
	name := injectorConfigMap
	if revision != "" && revision != "default" {
		name += "-" + revision
	}
	o, ok, _ := w.configMaps.store().GetByKey(ns + "/" + name)
	if !ok {
		return ""
	}
	c, _ := o.(*corev1.ConfigMap)
	if c == nil {
		return ""
	}
	return c.Data[injectorValuesKey]
}
