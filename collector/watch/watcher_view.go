package watch

import (
	"encoding/json"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/meshscope/meshscope/collector/build"
	"github.com/meshscope/meshscope/model"
)

// The watcher's read side: what the Registry reads of a watcher's caches.
// View hands them to the build (package collector/build), which takes
// plain objects and so also builds from caches that did not come from
// informers.

// View is the cluster's caches as the build's input: the build reads
// plain objects, never an informer.
func (w *Watcher) View(systemNamespace string) build.Caches {
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

// MeshNetworks returns the meshNetworks text of the mesh ConfigMap
// ("istio", or "istio-<revision>"), if any.
func (w *Watcher) MeshNetworks(ns string) string {
	text, _ := w.meshConfigMapKey(ns, meshNetworksKey)
	return text
}

// RemoteSecrets are the remote secrets the watcher holds (none when it
// does not watch them): what planning parses for the clusters they
// declare.
func (w *Watcher) RemoteSecrets() []*corev1.Secret {
	if w.secrets == nil {
		return nil
	}
	var out []*corev1.Secret
	for _, obj := range w.secrets.store().List() {
		// Fakes ignore label selectors: keep only what the selector means.
		if s, ok := obj.(*corev1.Secret); ok && s.Namespace == w.opts.SystemNamespace && s.Labels[model.MultiClusterSecretLabel] == "true" {
			out = append(out, s)
		}
	}
	return out
}

// meshConfigMapKey returns one key of the mesh ConfigMap, and whether the
// ConfigMap exists.
func (w *Watcher) meshConfigMapKey(ns, key string) (string, bool) {
	return w.meshConfigMapKeyIn(ns, key, w.ConfigRevision())
}

// MeshConfigIn returns the mesh config text of revision rev's ConfigMap
// ("istio", or "istio-REV"), and whether the ConfigMap exists: istiod's
// defaults apply without one.
func (w *Watcher) MeshConfigIn(ns, rev string) (string, bool) {
	return w.meshConfigMapKeyIn(ns, meshConfigKey, rev)
}

// meshConfigMapKeyIn is meshConfigMapKey of revision rev's ConfigMap.
func (w *Watcher) meshConfigMapKeyIn(ns, key, rev string) (string, bool) {
	o, ok, _ := w.configMaps.store().GetByKey(cache.NewObjectName(ns, model.MeshConfigMapName(rev)).String())
	if !ok {
		return "", false
	}
	cm, _ := o.(*corev1.ConfigMap)
	if cm == nil {
		return "", false
	}
	return cm.Data[key], true
}

// IstiodClusterIDs are the distinct CLUSTER_IDs of the istiod pods (of the
// revision, when one is given and runs here: elsewhere the cluster is
// predicted for its default revision) in the system namespace, sorted.
func (w *Watcher) IstiodClusterIDs(ns, revision string) []string {
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

// InjectorClusterID is the clusterName of the sidecar injector's values
// (ConfigMap istio-sidecar-injector, or -REV), "" when none.
func (w *Watcher) InjectorClusterID(ns, revision string) string {
	name := injectorConfigMap
	if revision != "" && revision != "default" {
		name += "-" + revision
	}
	o, ok, _ := w.configMaps.store().GetByKey(cache.NewObjectName(ns, name).String())
	if !ok {
		return ""
	}
	c, _ := o.(*corev1.ConfigMap)
	if c == nil {
		return ""
	}
	return c.Data[injectorValuesKey]
}

// The sidecar injector's ConfigMap and the key of its Helm values.
const (
	injectorConfigMap = "istio-sidecar-injector"
	injectorValuesKey = "values"
)

// injectorValuesClusterName reads global.multiCluster.clusterName from the
// injector's values (JSON); "" when absent or unreadable.
func injectorValuesClusterName(values string) string {
	if values == "" {
		return ""
	}
	var v struct {
		Global struct {
			MultiCluster struct {
				ClusterName string `json:"clusterName"`
			} `json:"multiCluster"`
		} `json:"global"`
	}
	if err := json.Unmarshal([]byte(values), &v); err != nil {
		return ""
	}
	return v.Global.MultiCluster.ClusterName
}
