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
	v := build.Caches{
		Services: listOf[*corev1.Service](w.services.store()),
		Slices:   listOf[*build.Slice](w.slices.store()),
	}
	podStore := w.pods.store()
	v.Pod = func(key string) *build.Pod {
		p, _ := getOf[*build.Pod](podStore, key)
		return p
	}
	v.PodCount = len(podStore.ListKeys())
	v.Pods = func() []*build.Pod { return listOf[*build.Pod](podStore) }
	nsStore := w.namespaces.store()
	v.Namespaces = func() []*corev1.Namespace { return listOf[*corev1.Namespace](nsStore) }
	if w.gateways != nil {
		v.Gateways = listOf[*build.GatewayObject](w.gateways.store())
		v.GatewayAPI = w.gatewayAPI.Load()
	}
	if w.nodes != nil {
		ns := w.nodes.store()
		v.Node = func(name string) *build.Node {
			n, _ := getOf[*build.Node](ns, name)
			return n
		}
		v.NodeCount = len(ns.ListKeys())
		v.Nodes = func() []*build.Node { return listOf[*build.Node](ns) }
	}
	v.SystemNamespace, _ = getOf[*corev1.Namespace](nsStore, systemNamespace)
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
	for s := range objectsOf[*corev1.Secret](w.secrets.store()) {
		// Fakes ignore label selectors: keep only what the selector means.
		if s.Namespace == w.opts.SystemNamespace && s.Labels[model.MultiClusterSecretLabel] == "true" {
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
	cm, ok := getOf[*corev1.ConfigMap](w.configMaps.store(), cache.NewObjectName(ns, model.MeshConfigMapName(rev)).String())
	if !ok || cm == nil {
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
	for p := range objectsOf[*cachedIstiod](w.istiods.store()) {
		if p.pod.Name != "" && p.namespace == ns {
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
	c, ok := getOf[*corev1.ConfigMap](w.configMaps.store(), cache.NewObjectName(ns, name).String())
	if !ok || c == nil {
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
