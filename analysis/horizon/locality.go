package horizon

import (
	"math"
	"strings"
)

// envoyLocality is the locality Envoy receives for istiod's locality
// string, written region/zone/subzone without trailing slashes: istiod
// splits its string on "/" into at most three parts (ConvertLocality in
// pkg/model/proxy.go, SplitLocalityLabel in
// pilot/pkg/serviceregistry/util/label), so "us-east-1/us-east-1a/" (a
// node's) and "us-east-1/us-east-1a" (a pod label's) both become region
// us-east-1, zone us-east-1a, though istiod keeps them in two groups.
func envoyLocality(label string) string {
	// Up to the third slash, without trailing slashes; no allocation.
	n := 0
	for i := 0; i < len(label); i++ {
		if label[i] == '/' {
			if n++; n == 3 {
				label = label[:i]
				break
			}
		}
	}
	return strings.TrimRight(label, "/")
}

// gatewaySentences caches the reason of gateway entries within one
// prediction: with localities there is an entry per group, and entries of
// one network standing for as many endpoints share their sentence (of one
// address too, when it came from a DNS name: the sentence names both).
type gatewaySentences struct {
	cache []gatewaySentence
	// names are the gateway index's DNS names by gateway (nil: none).
	names map[gwKey]string
}

type gatewaySentence struct {
	kind    Kind
	network string
	n       int
	named   string // "NAME ADDR" of a gateway from a DNS name, else ""
	why     string
}

func (c *gatewaySentences) why(e *Endpoint, k gwKey, proxy Proxy) string {
	name := c.names[k]
	named := ""
	if name != "" {
		named = name + " " + e.Address
	}
	for _, s := range c.cache {
		if s.kind == e.Kind && s.n == len(e.StandsFor) && s.network == e.Network && s.named == named {
			return s.why
		}
	}
	w := gatewayWhy(e, proxy, name)
	c.cache = append(c.cache, gatewaySentence{e.Kind, e.Network, len(e.StandsFor), named, w})
	return w
}

// finishGroups gives every endpoint of the prediction its locality as
// Envoy sees it, its group's load_balancing_weight and priority, as
// istiod's generate and LocalityEndpoints.refreshWeight set them: the
// group weight is the sum of its endpoints' weights (after the gateway
// rewrite), clipped at MaxUint32; every group is priority 0 until
// locality load balancing (localitylb.go) says otherwise. ends are the
// indexes where each group of p.Endpoints ends.
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
		loc := envoyLocality(g[0].Locality)
		for i := range g {
			g[i].Locality, g[i].LocalityWeight, g[i].Priority = loc, lw, 0
		}
	}
	if p.Endpoints == nil {
		p.Endpoints = []Endpoint{}
	}
	p.LB = IstiodLB
}

// applyEffects sets each predicted endpoint's share from p.LB.
func (p *Prediction) applyEffects() {
	eps := p.Endpoints
	if p.byWeightOnly() {
		// One priority, all healthy, no locality weighting: a kept
		// entry's share is its weight over the kept ones' (Envoy), and
		// over all entries' (istiod's intent).
		kept := firstPerAddress(len(eps), func(i int) (string, uint32) { return eps[i].Address, eps[i].Port })
		var all, sum float64
		for i := range eps {
			w := weightOf(LBEntry{Weight: eps[i].Weight}, p.LB)
			all += w
			if kept == nil || kept[i] {
				sum += w
			}
		}
		for i := range eps {
			w := weightOf(LBEntry{Weight: eps[i].Weight}, p.LB)
			ef := Effect{Intended: round6(w / all)}
			if kept == nil || kept[i] {
				ef.Share = round6(w / sum)
			} else {
				ef.Shadowed = true
			}
			eps[i].Effect = ef
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

// byWeightOnly reports whether Envoy's spreading reduces to endpoint
// weights over the entries it keeps (the common case): one priority,
// every endpoint healthy, no locality weighting.
func (p *Prediction) byWeightOnly() bool {
	eps := p.Endpoints
	if p.LB.LocalityWeighted || len(eps) == 0 {
		return false
	}
	for i := range eps {
		if eps[i].Priority != 0 || stateOf(eps[i].Health) != healthy {
			return false
		}
	}
	return true
}
