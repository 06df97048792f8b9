package explain

import (
	"fmt"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// ambientGatewayNameProblems: an ambient east-west Gateway whose status
// address is a DNS name (type Hostname, as an AWS NLB gives). istiod does
// not resolve it in ambient mode: it sends ztunnels the name, and each
// ztunnel resolves it when it connects (istiod-rules.md G7, ambient.md).
// meshscope resolves it from where it runs, as the closest it can get to
// what ztunnels see: a name that gives no address is a warning (ztunnels of
// other networks reach the gateway's network only if it resolves where they
// run — a private zone may answer there), one that does is information.
func ambientGatewayNameProblems(snap *model.Snapshot) []model.Problem {
	var ps []model.Problem
	for _, a := range snap.Ambient {
		for _, g := range a.Gateways {
			if g.Class != model.ClassEastWest || g.Network == "" {
				continue
			}
			for _, ad := range g.Addresses {
				if ad.Type != model.AddressTypeHostname {
					continue
				}
				what := fmt.Sprintf("ambient east-west Gateway %s/%s of %s in %s has the DNS name %s, which istiod sends ztunnels unresolved (each ztunnel resolves it when it connects)",
					g.Namespace, g.Name, g.Network, a.Cluster, ad.Value)
				ans, asked := snap.GatewayName(ad.Value)
				switch {
				case !asked || ans.Pending:
					continue // not asked yet: the next snapshot says
				case len(ans.Addresses) == 0:
					why := "no A or AAAA record"
					if ans.Err != "" {
						why = ans.Err
					}
					ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemGatewayHostname, Cluster: a.Cluster,
						Sentence: fmt.Sprintf("%s; it does not resolve from where meshscope runs (%s): ztunnels of other networks reach %s's pods only if it resolves where they run", what, why, g.Network)})
				default:
					ps = append(ps, model.Problem{Severity: model.SeverityInfo, Kind: model.ProblemGatewayHostname, Cluster: a.Cluster,
						Sentence: fmt.Sprintf("%s; from where meshscope runs it resolves to %s (TTL %s)", what, strings.Join(ans.Addresses, ", "), ans.TTL)})
				}
			}
		}
	}
	return ps
}
