package build

import (
	"slices"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// buildProxies lists a cluster's pods that run a proxy or that ambient
// mode captures, sorted by namespace and name.
func buildProxies(v Caches, id, systemNetwork string, ix *NetworkIndex) []model.ProxyPod {
	if v.Pods == nil {
		return nil
	}
	var out []model.ProxyPod
	for _, p := range v.Pods() {
		if p.Injected == nil && !p.Redirected {
			continue
		}
		pp := model.ProxyPod{Cluster: id, Namespace: p.Namespace, Name: p.Name, Node: p.NodeName, Ready: p.InEndpoints,
			Kind: model.ProxyAmbient, Injected: p.Injected}
		if p.IP.IsValid() {
			pp.IP = p.IP.String()
		}
		if p.Injected != nil {
			pp.Kind = p.Injected.Kind
		}
		pp.Network, _ = resolveNetwork(p.Labels[model.LabelNetwork], systemNetwork, ix, id, pp.IP)
		out = append(out, pp)
	}
	slices.SortFunc(out, func(a, b model.ProxyPod) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}
