package build

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshscope/meshscope/model"
)

// Ambient mode. istiod's ambient index (pilot/pkg/serviceregistry/ambient)
// reads more than the endpoints of a service: which namespaces and pods are
// enrolled, every label of a Service (the mesh config's serviceScopeConfigs
// select global services by any label of the Service and its namespace),
// Gateway API Gateways (the east-west gateways of ambient multi-network),
// and pods' service accounts (the identities a global service is reached
// with). AmbientCluster carries those facts for one cluster; the prediction
// of what each istiod sends a ztunnel (analysis/ambient) reads them.

// buildAmbient gathers a cluster's ambient facts from its caches
// (serviceLabels, by hostname, from BuildPart's pass over the Services).
func buildAmbient(v Caches, id string, serviceLabels map[string]map[string]string) *model.AmbientCluster {
	a := &model.AmbientCluster{Cluster: id, GatewayAPI: v.GatewayAPI, ServiceLabels: serviceLabels}
	var nss []*corev1.Namespace
	if v.Namespaces != nil {
		nss = v.Namespaces()
	}
	if len(nss) > 0 {
		a.Namespaces = make(map[string]map[string]string, len(nss))
		for _, ns := range nss {
			a.Namespaces[ns.Name] = ns.Labels
		}
	}
	for _, g := range v.Gateways {
		gw := g.K8sGateway
		gw.Cluster = id
		a.Gateways = append(a.Gateways, gw)
	}
	slices.SortFunc(a.Gateways, func(x, y model.K8sGateway) int { return strings.Compare(x.Source(), y.Source()) })
	if v.Pods != nil {
		for _, p := range v.Pods() {
			if (p.ServiceAccount == "" || p.ServiceAccount == "default") && !p.Redirected {
				continue
			}
			if a.Pods == nil {
				a.Pods = map[string]model.AmbientPod{}
			}
			a.Pods[p.Namespace+"/"+p.Name] = model.AmbientPod{ServiceAccount: p.ServiceAccount, Redirected: p.Redirected}
		}
	}
	return a
}
