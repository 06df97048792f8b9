package horizon

import "github.com/meshscope/meshscope/collector"

// DestinationRuleFor is the DestinationRule the istiod of configCluster
// applies to host for a proxy in the service's own namespace ("" for every
// context cluster's rules): in the service's namespace, then the root
// namespace, the most specific host wins — the lookup the mTLS check uses,
// whatever the rule sets. nil when none matches.
func DestinationRuleFor(snap *collector.Snapshot, configCluster, host, svcNS string) *collector.DestinationRule {
	p := policiesFor(snap, configCluster)
	for _, ns := range [...]string{svcNS, RootNamespace} {
		if best := p.bestRule(host, ns); best != nil {
			return best
		}
	}
	return nil
}

// PeerAuthenticationsFor lists the PeerAuthentications of configCluster
// that can decide mTLS for the pods of a service in svcNS: those of its
// namespace and the mesh-wide ones of the root namespace.
func PeerAuthenticationsFor(snap *collector.Snapshot, configCluster, svcNS string) []collector.PeerAuthentication {
	var out []collector.PeerAuthentication
	for _, a := range policiesFor(snap, configCluster).pas {
		if a.Namespace == svcNS || (a.Namespace == RootNamespace && len(a.Selector) == 0) {
			out = append(out, a)
		}
	}
	return out
}
