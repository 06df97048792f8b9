package explain

import (
	"github.com/meshscope/meshscope/analysis/fleet"
	"github.com/meshscope/meshscope/analysis/gatewayhop"
	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
)

// The second hop in explain: every gateway endpoint a proxy is sent is
// followed into its network's east-west gateway (analysis/gatewayhop),
// and a view whose EDS is as predicted is a match only when every such
// hop holds.

// Broken: what istiod sends the proxy is what meshscope predicts, but a
// gateway it sends requests to cannot carry them (the second hop breaks).
const Broken Verdict = "broken"

// NewHops is the checker of the second hops of the planes' snapshot: each
// gateway pod's config predicted from the mesh as the istiod serving it
// reads it (planes.Of its control plane, with istiod's own views), with the
// fleet's sync states when fl is not nil.
func NewHops(planes *plane.Set, fl *fleet.Fleet) *gatewayhop.Checker {
	return gatewayhop.NewChecker(planes.Snapshot(), func(cp string) (*model.Snapshot, *horizon.Index) {
		v := planes.Of(cp)
		return v.Snap, v.Index
	}, fl)
}

// secondHops follows each gateway endpoint of a view — what istiod sent
// when it arrived, else the prediction — into its gateway: one hop per
// gateway address, in the order they come.
func secondHops(k *gatewayhop.Checker, actual []Actual, pred []horizon.Endpoint, received bool, host string, port int32, subset string) []gatewayhop.Hop {
	var out []gatewayhop.Hop
	seen := map[string]bool{}
	add := func(kind horizon.Kind, network, addr string, p uint32) {
		key := model.HostPort(addr, p)
		if (kind != horizon.Gateway && kind != horizon.Forced) || seen[key] {
			return
		}
		seen[key] = true
		out = append(out, k.Check(network, addr, p, host, port, subset))
	}
	if received {
		for _, a := range actual {
			add(a.Kind, a.Network, a.Address, a.Port)
		}
	} else {
		for _, e := range pred {
			add(e.Kind, e.Network, e.Address, e.Port)
		}
	}
	return out
}

// hopsBreak says whether any hop breaks.
func hopsBreak(hops []gatewayhop.Hop) bool {
	for _, h := range hops {
		if h.State == gatewayhop.Breaks {
			return true
		}
	}
	return false
}
