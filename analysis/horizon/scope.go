package horizon

import (
	"github.com/meshscope/meshscope/model"
)

// Scope is what a proxy's sidecar scope holds for one hostname: the
// service istiod uses for it (the namespace chosen as for EDS, its ports)
// and the DestinationRule the proxy sees for it. A gateway's SNI filter
// chains and SNI-DNAT clusters iterate exactly this
// (proxy.SidecarScope.Services() and SidecarScope.DestinationRule, in
// builtAutoPassthroughFilterChains and buildOutboundSniDnatClusters).
type Scope struct {
	// Visible is false when the proxy's scope does not hold the hostname;
	// Hidden then says why (exportTo, discoverySelectors).
	Visible bool
	Hidden  string
	// Namespace is the namespace of the service istiod uses; Source what
	// it merges.
	Namespace string
	Source    model.ServiceSource
	// Ports are the service's ports (the first registry's Kubernetes
	// Service's, else its ServiceEntries').
	Ports []model.ServicePort
	// MeshExternal: a ServiceEntry with location MESH_EXTERNAL (and no
	// Kubernetes Service of the hostname in its namespace).
	MeshExternal bool
	// Resolution is a ServiceEntry's (NONE, STATIC, DNS, DNS_ROUND_ROBIN);
	// "" for a Kubernetes Service.
	Resolution string
	// Subsets are the subsets of the DestinationRule the proxy sees for
	// the hostname, in the rule's order; Rules names the rules merged
	// into it (namespace/name), none when it sees none.
	Subsets []string
	Rules   []string
}

// ScopeOf says what proxy's sidecar scope holds for hostname, from what
// the istiod of proxy.ConfigCluster reads: which namespace's service (as
// PredictSubset chooses it), its ports, and the DestinationRule the proxy
// sees. Found is false when no cluster or config cluster knows the
// hostname at all. It is meant for a router (proxy.Router): a sidecar's
// Sidecar resource imports per port, which PredictSubset follows.
func ScopeOf(snap *model.Snapshot, ix *Index, hostname string, proxy Proxy) (sc Scope, found bool) {
	svc := snap.Service(hostname)
	if svc == nil {
		return sc, false
	}
	var t target
	var c candidates
	var entries []*model.ServiceEntryHost
	t.cfg, c, entries = candidatesOf(snap, ix, svc, proxy)
	proxyNS := proxyNamespace(proxy)
	if !c.kubeFound && len(entries) == 0 {
		if len(svc.Clusters) == 0 {
			return sc, false
		}
		if c.anyKube {
			sc.Hidden = "its namespace " + svc.Namespace + " is outside the mesh config's discoverySelectors in every cluster"
			return sc, true
		}
		c.kubeNS, c.kubeFound = svc.Namespace, true // EndpointSlices without a Service
	}
	chosen, ok, kubeFound, hiddenWhy := c.chooseNamespace(entries, t.cfg, svc, 0, proxyNS, proxy.Labels, proxy.Router)
	if !ok {
		sc.Hidden = hiddenWhy
		return sc, true
	}
	t.setSource(&c, entries, chosen, kubeFound)
	sc.Visible, sc.Namespace, sc.Source, sc.Resolution = true, chosen, t.source, t.resolution
	if t.kube {
		sc.Ports = registryPorts(snap, svc, t.cfg.cluster)
	} else {
		for _, e := range t.entries {
			sc.Ports = appendPorts(sc.Ports, e.Ports)
		}
		sc.MeshExternal = t.entries[0].Location != "MESH_INTERNAL"
	}
	if r := forProxy(t.cfg.drs.lookup(hostname, chosen, proxyNS), proxyNS, proxy.Labels); r != nil {
		sc.Rules = r.from
		for _, ss := range r.rule.Subsets {
			sc.Subsets = append(sc.Subsets, ss.Name)
		}
	}
	return sc, true
}

// appendPorts adds the ports of another ServiceEntry of the namespace,
// by number, the first one winning.
func appendPorts(to, ps []model.ServicePort) []model.ServicePort {
	for _, p := range ps {
		dup := false
		for _, q := range to {
			dup = dup || q.Port == p.Port
		}
		if !dup {
			to = append(to, p)
		}
	}
	return to
}
