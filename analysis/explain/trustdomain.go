package explain

import (
	"fmt"
	"slices"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// trustDomainProblems: in a mesh of several control planes, a proxy of
// one accepts a workload of another only when that workload's certificate
// names a trust domain it accepts — its istiod's trustDomain or one of its
// trustDomainAliases. istiod expands the SANs a sidecar expects of a
// service with its aliases (push_context.go addServiceAccounts,
// spiffe.ExpandWithTrustDomains), and a workload's inbound accepts the
// same set (authn TrustDomainsForValidation); a workload's certificate
// carries the trust domain of the istiod that signed it, the one serving
// its cluster. A pair that does not accept each other cannot talk across
// clusters (istio#52356; ambient: #61608).
func trustDomainProblems(snap *model.Snapshot) []model.Problem {
	cps := snap.ControlPlanes()
	var ps []model.Problem
	for _, a := range cps {
		ma := snap.MeshConfigFor(a)
		accepted := append([]string{ma.TrustDomain}, ma.TrustDomainAliases...)
		for _, b := range cps {
			if a == b {
				continue
			}
			tb := snap.MeshConfigFor(b).TrustDomain
			if slices.Contains(accepted, tb) {
				continue
			}
			ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemTrustDomain, Cluster: a, ControlPlane: a,
				Sentence: fmt.Sprintf("the proxies istiod %s serves accept the trust domains %s, not %s — the trust domain of istiod %s's workloads: their certificates (spiffe://%s/ns/…/sa/…) fail the SAN check, so requests between the two fail; add %s to %s's meshConfig trustDomainAliases (or use one trust domain)",
					a, strings.Join(accepted, ", "), tb, b, tb, tb, a)})
		}
	}
	return ps
}
