package build

import (
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshscope/meshscope/model"
)

// NamespaceLabels are the labels of every namespace of a cluster (nil when
// namespaces cannot be read).
func NamespaceLabels(v Caches) map[string]map[string]string {
	if v.Namespaces == nil {
		return nil
	}
	nss := v.Namespaces()
	out := make(map[string]map[string]string, len(nss))
	for _, n := range nss {
		out[n.Name] = n.Labels
	}
	return out
}

// namespaceTrafficDistribution is the traffic-distribution annotation of
// the namespaces that have one.
func namespaceTrafficDistribution(v Caches) map[string]string {
	if v.Namespaces == nil {
		return nil
	}
	var out map[string]string
	for _, n := range v.Namespaces() {
		if a := n.Annotations[model.AnnotationTrafficDistribution]; a != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[n.Name] = a
		}
	}
	return out
}

// discoveryNamespaces mirrors istiod's discovery namespaces filter
// (pkg/kube/namespace/filter.go selectorsChanged): with discoverySelectors
// in the mesh config, istiod reads only the namespaces (of each cluster,
// by that cluster's namespace labels) that some selector matches — their
// Services, EndpointSlices, Pods and Istio config; nil means every
// namespace. A selector that does not parse makes istiod keep its previous
// filter; meshscope then reads every namespace.
func discoveryNamespaces(mc model.MeshConfig, nsLabels map[string]map[string]map[string]string) map[string][]string {
	if len(mc.DiscoverySelectors) == 0 {
		return nil
	}
	for i := range mc.DiscoverySelectors {
		if _, err := metav1.LabelSelectorAsSelector(&mc.DiscoverySelectors[i]); err != nil {
			return nil
		}
	}
	out := map[string][]string{}
	for cluster, nss := range nsLabels {
		names := []string{}
		for name, l := range nss {
			for i := range mc.DiscoverySelectors {
				if model.Selects(&mc.DiscoverySelectors[i], l) {
					names = append(names, name)
					break
				}
			}
		}
		sort.Strings(names)
		out[cluster] = names
	}
	return out
}
