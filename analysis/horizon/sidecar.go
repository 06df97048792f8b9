package horizon

import (
	"fmt"
	"slices"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// Sidecar resources narrow the services a proxy gets: istiod builds the
// proxy's SidecarScope from the Sidecar that applies to it
// (PushContext.getSidecarScope) and answers EDS only for the services its
// egress listeners import (SidecarScope.servicesByHostname;
// NewEndpointBuilder, BuildClusterLoadAssignment: no service, no
// endpoints). The destinations of the VirtualServices its listeners select
// are imported too (vsImports).

// indexSidecars keeps the Sidecars of the config cluster, per namespace,
// those with a workloadSelector first, then oldest first
// (sortConfigBySelectorAndCreationTime).
func (v *configView) indexSidecars(all []model.Sidecar, ours func(cluster, ns string) bool) {
	for i := range all {
		s := &all[i]
		if !ours(s.Cluster, s.Namespace) {
			continue
		}
		if v.sidecars == nil {
			v.sidecars = map[string][]*model.Sidecar{}
		}
		v.sidecars[s.Namespace] = append(v.sidecars[s.Namespace], s)
	}
	for _, list := range v.sidecars {
		slices.SortStableFunc(list, func(a, b *model.Sidecar) int {
			if (a.WorkloadSelector != nil) != (b.WorkloadSelector != nil) {
				if a.WorkloadSelector != nil {
					return -1
				}
				return 1
			}
			if c := a.Created.Compare(b.Created); c != 0 {
				return c
			}
			return strings.Compare(a.Name, b.Name)
		})
	}
}

// sidecarFor mirrors getSidecarScope for a sidecar proxy: the first
// Sidecar of its namespace whose selector its labels match (or that has
// none), else the root namespace's Sidecar without selector; nil: none
// applies (every service is imported).
func (v *configView) sidecarFor(ns string, labels map[string]string) *sidecarScope {
	for _, s := range v.sidecars[ns] {
		if s.WorkloadSelector == nil || subsetOf(s.WorkloadSelector, labels) {
			return &sidecarScope{s}
		}
	}
	for _, s := range v.sidecars[v.mc.RootNamespace] {
		if s.WorkloadSelector == nil {
			return &sidecarScope{s}
		}
	}
	return nil
}

// sidecarScope is the Sidecar that applies to a proxy.
type sidecarScope struct{ s *model.Sidecar }

// imports mirrors convertIstioListenerToWrapper and selectServices: a
// listener imports the service of namespace ns under hostname for the
// port when its port is none (or an HTTP_PROXY port) or that port, no
// "~" host of ns or "*" excludes it, and a host of ns ("." is the proxy's
// namespace) or of "*" matches it. No egress at all is "*/*".
func (sc *sidecarScope) imports(ns, hostname string, port int32, proxyNS string) bool {
	egress := sc.s.Egress
	if len(egress) == 0 {
		return true
	}
	for _, l := range egress {
		if l.Port != 0 && !strings.EqualFold(l.Protocol, "HTTP_PROXY") && l.Port != uint32(port) {
			continue
		}
		nsMatch, wildMatch, excluded := false, false, false
		for _, h := range l.Hosts {
			hns, name, exclude, ok := egressHost(h, proxyNS)
			if !ok || (hns != ns && hns != "*") {
				continue
			}
			if !hostMatches(name, hostname) {
				continue
			}
			switch {
			case exclude:
				excluded = true
			case hns == ns:
				nsMatch = true
			default:
				wildMatch = true
			}
		}
		if !excluded && (nsMatch || wildMatch) {
			return true
		}
	}
	return false
}

// egressHost reads an egress host "namespace/dnsName" as
// convertIstioListenerToWrapper does: "~" before the namespace excludes
// (alone, every namespace), "." is the proxy's namespace; ok is false for
// a host not of that form (istiod logs "Illegal host in sidecar resource").
func egressHost(h, proxyNS string) (ns, name string, exclude, ok bool) {
	if strings.Count(h, "/") != 1 {
		return "", "", false, false
	}
	ns, name, _ = strings.Cut(h, "/")
	if rest, found := strings.CutPrefix(ns, "~"); found {
		exclude, ns = true, rest
		if ns == "" {
			ns = "*"
		}
	}
	if ns == "." {
		ns = proxyNS
	}
	return ns, name, exclude, true
}

// hostMatches mirrors host.Name.Matches for a concrete hostname: "*" and
// "*.suffix" patterns, else equality.
func hostMatches(pattern, hostname string) bool {
	if pattern == "*" {
		return true
	}
	if suffix, ok := strings.CutPrefix(pattern, "*"); ok {
		return strings.HasSuffix(hostname, suffix)
	}
	return pattern == hostname
}

func (sc *sidecarScope) sentence(hostname, ns string, port int32) string {
	var hosts []string
	for _, l := range sc.s.Egress {
		h := strings.Join(l.Hosts, ", ")
		if l.Port != 0 {
			h = fmt.Sprintf("port %d: %s", l.Port, h)
		}
		hosts = append(hosts, h)
	}
	return fmt.Sprintf("the proxy's Sidecar %s/%s (config cluster %s) does not import %s (namespace %s) for port %d (its egress hosts: %s; %s/%s, or a VirtualService of the proxy's namespace routing to it, would import it)",
		sc.s.Namespace, sc.s.Name, sc.s.Cluster, hostname, ns, port, strings.Join(hosts, "; "), ns, hostname)
}

// vsImports mirrors the VirtualService pass of collectImportedServices:
// a listener selects the VirtualServices visible to the proxy's namespace
// and bound to the sidecars ("mesh") whose hosts match its hosts of the
// VirtualService's namespace or of "*" (SelectVirtualServices), and
// imports the hosts their routes send to (short names completed in the
// VirtualService's namespace; an http route naming source namespaces
// serves those only) — for the port when the listener has one, else for
// the destination's port (every port when a destination names none).
func (sc *sidecarScope) vsImports(v *configView, hostname string, port int32, proxyNS string) bool {
	egress := sc.s.Egress
	if len(egress) == 0 {
		egress = []model.SidecarEgress{{Hosts: []string{"*/*"}}}
	}
	for _, l := range egress {
		matchPort := l.Port != 0 && !strings.EqualFold(l.Protocol, "HTTP_PROXY")
		if matchPort && l.Port != uint32(port) {
			continue
		}
		for i := range v.vss {
			vs := &v.vss[i]
			if !boundToMesh(vs.Gateways) || !visible(vs.ExportTo, v.mc.DefaultVirtualServiceExportTo, vs.Namespace, proxyNS) || !sc.selects(l, vs, proxyNS) {
				continue
			}
			for _, d := range vs.Destinations {
				if len(d.SourceNamespaces) > 0 && !slices.Contains(d.SourceNamespaces, proxyNS) {
					continue
				}
				if model.FQDN(d.Host, vs.Namespace) != hostname {
					continue
				}
				if matchPort || d.Port == 0 || d.Port == uint32(port) {
					return true
				}
			}
		}
	}
	return false
}

// selects says whether listener l selects vs (a host of vs matches one of
// l's hosts of vs's namespace or of "*", and is not excluded).
func (sc *sidecarScope) selects(l model.SidecarEgress, vs *model.VirtualService, proxyNS string) bool {
	for _, vh := range vs.Hosts {
		h := model.FQDN(vh, vs.Namespace)
		matched, excluded := false, false
		for _, eh := range l.Hosts {
			hns, name, exclude, ok := egressHost(eh, proxyNS)
			if !ok || (hns != vs.Namespace && hns != "*") {
				continue
			}
			switch {
			case exclude && hostMatches(name, h):
				excluded = true
			case !exclude && hostsMatch(name, h):
				matched = true
			}
		}
		if matched && !excluded {
			return true
		}
	}
	return false
}

// hostsMatch mirrors host.Name.Matches both ways: either may be a wildcard.
func hostsMatch(a, b string) bool { return hostMatches(a, b) || hostMatches(b, a) }

func boundToMesh(gateways []string) bool {
	return len(gateways) == 0 || slices.Contains(gateways, "mesh")
}
