package horizon

import (
	"slices"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// SubsetNames lists the subsets that the DestinationRules of any config
// cluster declare for hostname — a rule's short host resolved in the rule's
// namespace, as istiod resolves it, or a wildcard host that matches — each
// name once, in the order of the rules and their subsets. Which rule a
// given proxy uses is PredictSubset's business (an unknown subset gets
// every endpoint, as in istiod); this only says which subsets exist to look
// at.
func SubsetNames(snap *model.Snapshot, hostname string) []string {
	var out []string
	for _, d := range snap.DestinationRules {
		h := model.FQDN(d.Host, d.Namespace)
		if h != hostname && !(strings.HasPrefix(h, "*") && strings.HasSuffix(hostname, h[1:])) {
			continue
		}
		for _, ss := range d.Subsets {
			if !slices.Contains(out, ss.Name) {
				out = append(out, ss.Name)
			}
		}
	}
	return out
}
