package explain

import (
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// dnsCaptureKey is the proxy metadata that turns on the sidecar's DNS proxy,
// which answers for every service istiod knows, in any cluster.
const dnsCaptureKey = "ISTIO_META_DNS_CAPTURE"

// missingServiceProblems reports a service that exists in one cluster but
// not in another cluster where pods with sidecars run in its namespace
// (istio/istio#39843, #31787): the name resolves through the cluster's own
// DNS, which knows only Services of that cluster, so the lookup fails there
// even though istiod would route the traffic — unless DNS proxying is on in
// every control plane's mesh config.
func missingServiceProblems(snap *model.Snapshot) []model.Problem {
	if dnsProxyEverywhere(snap) {
		return nil
	}
	// Pods with sidecars, per cluster and namespace (an example name).
	sidecars := map[string]map[string]string{}
	for _, svc := range snap.Services {
		for cid, sic := range svc.Clusters {
			for _, e := range sic.Endpoints {
				if e.TLSMode != "istio" || e.Pod == "" {
					continue
				}
				if sidecars[cid] == nil {
					sidecars[cid] = map[string]string{}
				}
				if _, ok := sidecars[cid][svc.Namespace]; !ok {
					sidecars[cid][svc.Namespace] = e.Pod
				}
			}
		}
	}
	var ps []model.Problem
	for _, svc := range snap.Services {
		if IsGatewayService(svc) || svc.Namespace == "kube-system" || svc.Hostname == model.Hostname("kubernetes", "default") {
			continue
		}
		var have []string
		for _, cid := range sortedKeys(svc.Clusters) {
			if !svc.Clusters[cid].NoService {
				have = append(have, cid)
			}
		}
		if len(have) == 0 {
			continue
		}
		for _, c := range snap.Clusters {
			if c.State != model.StateSynced {
				continue // its Services are not (all) known
			}
			if sic := svc.Clusters[c.ID]; sic != nil && !sic.NoService {
				continue
			}
			pod, ok := sidecars[c.ID][svc.Namespace]
			if !ok {
				continue
			}
			ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemMissingService, Cluster: c.ID, Service: svc.Hostname,
				Objects: []model.ObjectRef{{Cluster: c.ID, Kind: "Service", Namespace: svc.Namespace, Name: svc.Name}},
				Sentence: fmt.Sprintf("%s exists in %s but not in %s, where pods with sidecars run in namespace %s (e.g. %s): their DNS lookups of %s fail there (no Service, no ClusterIP), although istiod would route the traffic — create the Service in %s too (its selector may match nothing), or turn on DNS proxying (%s=true)",
					model.ShortHost(svc.Hostname), strings.Join(have, ", "), c.ID, svc.Namespace, pod, svc.Hostname, c.ID, dnsCaptureKey),
				Group: &model.ProblemGroup{Key: "missing|" + c.ID + "|" + svc.Namespace, Subject: model.ShortHost(svc.Hostname),
					Format: fmt.Sprintf("{n} services of namespace %s exist in other clusters but not in %s, where pods with sidecars run in %s (e.g. %s): their DNS lookups fail there ({examples}) — create the Services in %s too, or turn on DNS proxying (%s=true)", svc.Namespace, c.ID, svc.Namespace, pod, c.ID, dnsCaptureKey)}})
		}
	}
	return ps
}

// dnsProxyEverywhere: every control plane's mesh config turns DNS proxying on.
func dnsProxyEverywhere(snap *model.Snapshot) bool {
	if len(snap.MeshConfigs) == 0 {
		return false
	}
	for _, mc := range snap.MeshConfigs {
		if mc.DefaultConfig.ProxyMetadata[dnsCaptureKey] != "true" {
			return false
		}
	}
	return true
}

// inconsistentServiceProblems compares the copies of one service in the
// clusters meshscope reads (istioctl analyze IST0170, over every cluster,
// not one kubeconfig): istiod merges them into one service, so a port,
// protocol, type or headless difference means proxies treat it one way
// while one cluster's copy says another; a selector difference that leaves
// one cluster without endpoints while another has them is usually a typo.
func inconsistentServiceProblems(snap *model.Snapshot) []model.Problem {
	var ps []model.Problem
	for _, svc := range snap.Services {
		if IsGatewayService(svc) {
			continue
		}
		var ids []string
		for _, cid := range sortedKeys(svc.Clusters) {
			if !svc.Clusters[cid].NoService {
				ids = append(ids, cid)
			}
		}
		if len(ids) < 2 {
			continue
		}
		ref := svc.Clusters[ids[0]]
		for _, cid := range ids[1:] {
			o := svc.Clusters[cid]
			diffs := serviceDiffs(ref, o)
			if len(diffs) == 0 {
				continue
			}
			ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemInconsistentService, Cluster: cid, Service: svc.Hostname,
				Sentence: fmt.Sprintf("%s differs between %s and %s: %s — istiod merges the copies into one service, so make them the same in every cluster",
					model.ShortHost(svc.Hostname), ref.Cluster, cid, strings.Join(diffs, "; "))})
		}
	}
	return ps
}

func serviceDiffs(a, b *model.ServiceInCluster) []string {
	var out []string
	pa, pb := portsByNumber(a), portsByNumber(b)
	var onlyA, onlyB []string
	for _, n := range sortedPorts(pa) {
		x := pa[n]
		y, ok := pb[n]
		if !ok {
			onlyA = append(onlyA, fmt.Sprint(n))
			continue
		}
		if x.Name != y.Name || x.Protocol != y.Protocol || x.AppProtocol != y.AppProtocol {
			out = append(out, fmt.Sprintf("port %d is %s in %s but %s in %s (name and protocol decide how istiod treats the traffic)", n, portText(x), a.Cluster, portText(y), b.Cluster))
		}
	}
	for _, n := range sortedPorts(pb) {
		if _, ok := pa[n]; !ok {
			onlyB = append(onlyB, fmt.Sprint(n))
		}
	}
	if len(onlyA) > 0 {
		out = append(out, fmt.Sprintf("port(s) %s only in %s", strings.Join(onlyA, ", "), a.Cluster))
	}
	if len(onlyB) > 0 {
		out = append(out, fmt.Sprintf("port(s) %s only in %s", strings.Join(onlyB, ", "), b.Cluster))
	}
	if a.Type != b.Type {
		out = append(out, fmt.Sprintf("type %s in %s but %s in %s", orText(a.Type, "ClusterIP"), a.Cluster, orText(b.Type, "ClusterIP"), b.Cluster))
	}
	if a.Headless != b.Headless {
		h := func(x bool) string {
			if x {
				return "headless"
			}
			return "not headless"
		}
		out = append(out, fmt.Sprintf("%s in %s but %s in %s (headless services get per-pod DNS and no ClusterIP)", h(a.Headless), a.Cluster, h(b.Headless), b.Cluster))
	}
	if !maps.Equal(a.Selector, b.Selector) && (len(a.Endpoints) == 0) != (len(b.Endpoints) == 0) {
		empty, full := a, b
		if len(b.Endpoints) == 0 {
			empty, full = b, a
		}
		out = append(out, fmt.Sprintf("selector %s in %s selects no endpoint, while %s in %s selects %d", selectorText(empty.Selector), empty.Cluster, selectorText(full.Selector), full.Cluster, len(full.Endpoints)))
	}
	return out
}

func portsByNumber(s *model.ServiceInCluster) map[int32]model.ServicePort {
	m := make(map[int32]model.ServicePort, len(s.Ports))
	for _, p := range s.Ports {
		m[p.Port] = p
	}
	return m
}

func sortedPorts(m map[int32]model.ServicePort) []int32 {
	out := make([]int32, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func portText(p model.ServicePort) string {
	s := fmt.Sprintf("%q/%s", p.Name, orText(p.Protocol, "TCP"))
	if p.AppProtocol != "" {
		s += " appProtocol " + p.AppProtocol
	}
	return s
}

func selectorText(sel map[string]string) string {
	if len(sel) == 0 {
		return "(none)"
	}
	keys := sortedKeys(sel)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + sel[k]
	}
	return strings.Join(parts, ",")
}
