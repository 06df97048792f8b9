package horizon

import "github.com/meshscope/meshscope/model"

// DestinationRuleFor is the DestinationRule the istiod of configCluster
// applies to host for a proxy in the service's own namespace ("" for every
// context cluster's rules), looked up and merged as the prediction does
// (destinationrule.go) — whatever the rule sets. nil when none applies.
func DestinationRuleFor(snap *model.Snapshot, configCluster, host, svcNS string) *model.DestinationRule {
	v := (&configCache{}).get(snap, configCluster)
	r := forProxy(v.drs.lookup(host, svcNS, svcNS), svcNS, nil)
	if r == nil {
		return nil
	}
	d := r.rule
	return &d
}

// PeerAuthenticationsFor lists the PeerAuthentications of configCluster
// that can decide mTLS for the pods of a service in svcNS: those of its
// namespace and the mesh-wide ones of the root namespace.
func PeerAuthenticationsFor(snap *model.Snapshot, configCluster, svcNS string) []model.PeerAuthentication {
	v := (&configCache{}).get(snap, configCluster)
	var out []model.PeerAuthentication
	for _, a := range v.pas {
		if a.Namespace == svcNS || (a.Namespace == v.mc.RootNamespace && len(a.Selector) == 0) {
			out = append(out, a)
		}
	}
	return out
}
