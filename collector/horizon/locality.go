package horizon

import (
	"math"
	"strings"
)

// EnvoyLocality is the locality Envoy receives for istiod's locality
// string, written region/zone/subzone without trailing slashes: istiod
// splits its string on "/" into at most three parts (pkg/model
// ConvertLocality, SplitLocalityLabel), so "us-east-1/us-east-1a/" (a
// node's) and "us-east-1/us-east-1a" (a pod label's) both become region
// us-east-1, zone us-east-1a, though istiod keeps them in two groups.
func EnvoyLocality(label string) string {
	if label == "" {
		return ""
	}
	parts := strings.SplitN(label, "/", 4)
	if len(parts) > 3 {
		parts = parts[:3]
	}
	return strings.TrimRight(strings.Join(parts, "/"), "/")
}

// finishGroups gives every endpoint of the prediction its locality as
// Envoy sees it, its group's load_balancing_weight and priority, as
// istiod's generate and LocalityEndpoints.refreshWeight set them: the
// group weight is the sum of its endpoints' weights (after the gateway
// rewrite), clipped at MaxUint32; every group is priority 0 (istiod sets
// other priorities only for locality failover, which needs a
// DestinationRule with outlier detection). ends are the indexes where each
// group of p.Endpoints ends. Then it computes what Envoy makes of them.
func (p *Prediction) finishGroups(ends []int) {
	start := 0
	for _, end := range ends {
		g := p.Endpoints[start:end]
		start = end
		if len(g) == 0 {
			continue
		}
		var w uint64
		for _, e := range g {
			w += uint64(e.Weight)
		}
		lw := uint32(min(w, math.MaxUint32))
		loc := EnvoyLocality(g[0].Locality)
		for i := range g {
			g[i].Locality, g[i].LocalityWeight, g[i].Priority = loc, lw, 0
		}
	}
	p.LB = IstiodLB
	p.applyEffects()
}

// applyEffects sets each predicted endpoint's share from p.LB.
func (p *Prediction) applyEffects() {
	eps := p.Endpoints
	if p.plainShares() {
		var sum float64
		for i := range eps {
			sum += weightOf(LBEntry{Weight: eps[i].Weight}, p.LB)
		}
		for i := range eps {
			s := round6(weightOf(LBEntry{Weight: eps[i].Weight}, p.LB) / sum)
			eps[i].Effect = Effect{Share: s, Intended: s}
		}
		return
	}
	entries := make([]LBEntry, len(eps))
	for i, e := range eps {
		entries[i] = LBEntry{Address: e.Address, Port: e.Port, Weight: e.Weight, Health: e.Health,
			Locality: e.Locality, Priority: e.Priority, LocalityWeight: e.LocalityWeight}
	}
	for i, ef := range Effects(entries, p.LB) {
		eps[i].Effect = ef
	}
}

// plainShares reports whether Envoy's spreading reduces to endpoint
// weights over all endpoints (the common case, decided without
// allocating for small services): one priority, every endpoint healthy,
// no duplicate address, no locality weighting.
func (p *Prediction) plainShares() bool {
	eps := p.Endpoints
	if p.LB.LocalityWeighted || len(eps) == 0 {
		return false
	}
	for i := range eps {
		if eps[i].Priority != 0 || stateOf(eps[i].Health) != healthy {
			return false
		}
	}
	if len(eps) <= 16 {
		for i := range eps {
			for j := i + 1; j < len(eps); j++ {
				if eps[i].Port == eps[j].Port && eps[i].Address == eps[j].Address {
					return false
				}
			}
		}
		return true
	}
	type key struct {
		addr string
		port uint32
	}
	seen := make(map[key]struct{}, len(eps))
	for i := range eps {
		k := key{eps[i].Address, eps[i].Port}
		if _, dup := seen[k]; dup {
			return false
		}
		seen[k] = struct{}{}
	}
	return true
}
