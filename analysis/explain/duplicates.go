package explain

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/model"
)

// duplicateProblems finds the entries of one predicted EDS that Envoy drops
// because an earlier entry has the same address and port, and says how
// that changes each network's share of the proxy's requests. The common
// cause (istio/istio#56355): istiod rewrites endpoints into their network's
// gateway inside each locality group, so a remote network whose endpoints
// span several localities gets its gateway once per locality, each with
// that locality's weight, and Envoy keeps only the first.
func duplicateProblems(host, ns string, port int32, v horizon.Proxy, p horizon.Prediction) []model.Problem {
	type dup struct {
		addr    string
		port    uint32
		network string
		gateway bool
		entries int
		locs    []string
		pods    []model.ObjectRef
	}
	var dups []*dup
	for _, e := range p.Endpoints {
		if !e.Shadowed {
			continue
		}
		var d *dup
		for _, x := range dups {
			if x.addr == e.Address && x.port == e.Port {
				d = x
			}
		}
		if d == nil {
			d = &dup{addr: e.Address, port: e.Port, network: e.Network, gateway: e.Kind == horizon.Gateway || e.Kind == horizon.Forced}
			for _, f := range p.Endpoints {
				if f.Address == e.Address && f.Port == e.Port {
					d.entries++
					d.locs = append(d.locs, orNoLocality(f.Locality))
					for _, r := range f.StandsFor {
						d.pods = model.AddObjects(d.pods, workloadRefs(r.Cluster, ns, r.Pod, r.Workload)...)
					}
				}
			}
			dups = append(dups, d)
		}
	}
	if len(dups) == 0 {
		return nil
	}
	nets, effs := make([]string, len(p.Endpoints)), make([]horizon.Effect, len(p.Endpoints))
	for i, e := range p.Endpoints {
		nets[i], effs[i] = e.Network, e.Effect
	}
	shares := horizon.SharesByNetwork(nets, effs)
	sort.Slice(shares, func(i, j int) bool { return shares[i].Network < shares[j].Network })
	var ps []model.Problem
	for _, d := range dups {
		var got, want float64
		var others []string
		for _, s := range shares {
			if s.Network == d.network {
				got, want = s.Share, s.Intended
			} else if pct(s.Share) != pct(s.Intended) {
				others = append(others, fmt.Sprintf("%s %d %% instead of %d %%", orNoNetwork(s.Network), pct(s.Share), pct(s.Intended)))
			}
		}
		if pct(got) == pct(want) {
			continue // the duplicate does not change the split (e.g. equal shares)
		}
		also := ""
		if len(others) > 0 {
			also = " (and " + strings.Join(others, ", ") + ")"
		}
		what, behind := "entries", "at that address"
		if d.gateway {
			what, behind = "gateway entries", "behind that gateway"
		}
		proxy := "a proxy without NETWORK"
		if v.Network != "" {
			proxy = "a " + v.Network + " proxy"
		}
		ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemDuplicateGateway, Service: host, Objects: d.pods,
			Sentence: fmt.Sprintf("%s port %d: %s gets %d %% of %s's requests instead of %d %%%s: Envoy keeps only the first of %d %s for %s:%d (one per locality: %s) — istio#56355. "+
				"Workaround until istiod sends one entry per gateway (istio/istio#60835): give the pods of %s %s one locality (the same topology.istio.io/locality label on all of them)",
				model.ShortHost(host), port, orNoNetwork(d.network), pct(got), proxy, pct(want), also, d.entries, what, d.addr, d.port, strings.Join(d.locs, ", "),
				model.ShortHost(host), behind)})
	}
	return ps
}

// pct is a share in whole percent, rounded.
func pct(share float64) int { return int(math.Round(100 * share)) }

func orNoNetwork(n string) string {
	if n == "" {
		return "(no network)"
	}
	return n
}
