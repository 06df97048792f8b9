package horizon

import "math"

// What Envoy does with the LbEndpoints istiod sends: which entries it keeps
// and the share of requests each gets. The rules follow Envoy's upstream
// code (docs/envoy-shares.md cites each one):
//
//   - EdsClusterImpl::BatchUpdateHelper::updateLocalityEndpoints
//     (source/extensions/clusters/eds/eds.cc) keeps only the first entry per
//     address:port in the whole ClusterLoadAssignment, whatever its
//     locality or priority ("only the first one will be retained");
//   - LoadBalancerBase::recalculatePerPriorityState: each priority's health
//     is min(100, 140 × healthy hosts / hosts) (the overprovisioning factor
//     1.4, by count, excluded hosts left out), and load goes to priorities
//     in order of that health;
//     recalculatePerPriorityPanic / isHostSetInPanic: below the panic
//     threshold a priority uses all its hosts, healthy or not;
//   - ZoneAwareLoadBalancerBase::hostSourceToUse: locality weights count
//     only with locality_weighted_lb_config on the cluster; each locality's
//     effective weight is its weight × min(1, 1.4 × healthy / hosts)
//     (HostSetImpl::effectiveLocalityWeight); otherwise requests go to the
//     priority's healthy hosts by endpoint weight (EdfLoadBalancerBase).

// Effect is what Envoy makes of one LbEndpoint.
type Effect struct {
	// Share is the fraction (0..1) of the cluster's requests Envoy sends
	// to this entry.
	Share float64 `json:"share"`
	// Intended is the fraction it would get if Envoy kept every entry
	// istiod sent — what istiod's weights mean.
	Intended float64 `json:"intendedShare"`
	// Shadowed: Envoy dropped this entry because an earlier one in the
	// same cluster has the same address and port.
	Shadowed bool `json:"shadowed,omitempty"`
}

// LBConfig is the part of an Envoy cluster (CDS) that decides how requests
// are spread over its endpoints.
type LBConfig struct {
	// Policy is the lb_policy (LEAST_REQUEST, ROUND_ROBIN, RANDOM,
	// RING_HASH, MAGLEV, ...); RANDOM ignores endpoint weights.
	Policy string `json:"policy,omitempty"`
	// LocalityWeighted is common_lb_config.locality_weighted_lb_config:
	// without it Envoy ignores locality weights.
	LocalityWeighted bool `json:"localityWeighted"`
	// PanicThreshold is common_lb_config.healthy_panic_threshold in
	// percent (Envoy's default is 50; istiod sets 0, panic off, while it
	// sends unhealthy endpoints).
	PanicThreshold float64 `json:"panicThreshold"`
}

// IstiodLB is the LBConfig istiod gives a sidecar's outbound cluster by
// default (pilot/pkg/networking/core applyLoadBalancer): LEAST_REQUEST,
// locality weights off (ENABLE_LOCALITY_WEIGHTED_LB_CONFIG is false and no
// DestinationRule asks for distribution or failover), and the panic
// threshold 0 because unhealthy endpoints are sent.
var IstiodLB = LBConfig{Policy: "LEAST_REQUEST", PanicThreshold: 0}

// LBEntry is one LbEndpoint in the order of its ClusterLoadAssignment, with
// the priority and load_balancing_weight of its LocalityLbEndpoints.
type LBEntry struct {
	Address        string
	Port           uint32
	Weight         uint32
	Health         Health
	Locality       string
	Priority       uint32
	LocalityWeight uint32
}

// Effects computes, for every entry, its share of requests as Envoy
// spreads them (duplicates shadowed) and as istiod meant them (every entry
// kept).
func Effects(entries []LBEntry, cfg LBConfig) []Effect {
	out := make([]Effect, len(entries))
	if len(entries) == 0 {
		return out
	}
	kept := firstPerAddress(len(entries), func(i int) (string, uint32) { return entries[i].Address, entries[i].Port })
	eff := spread(entries, kept, cfg)
	intended := eff
	if kept != nil {
		intended = spread(entries, nil, cfg)
	}
	for i := range out {
		out[i] = Effect{Share: round6(eff[i]), Intended: round6(intended[i]), Shadowed: kept != nil && !kept[i]}
	}
	return out
}

// firstPerAddress marks the entries Envoy keeps: the first per
// address:port. It returns nil when there is no duplicate (the common case).
func firstPerAddress(n int, at func(int) (string, uint32)) []bool {
	var kept []bool
	drop := func(i int) {
		if kept == nil {
			kept = make([]bool, n)
			for j := range kept {
				kept[j] = true
			}
		}
		kept[i] = false
	}
	if n <= 32 { // small clusters: no map
		for i := 1; i < n; i++ {
			ai, pi := at(i)
			for j := 0; j < i; j++ {
				if aj, pj := at(j); pj == pi && aj == ai {
					drop(i)
					break
				}
			}
		}
		return kept
	}
	type key struct {
		addr string
		port uint32
	}
	seen := make(map[key]struct{}, n)
	for i := 0; i < n; i++ {
		a, p := at(i)
		k := key{a, p}
		if _, dup := seen[k]; dup {
			drop(i)
			continue
		}
		seen[k] = struct{}{}
	}
	return kept
}

type hostState int

const (
	healthy hostState = iota
	degraded
	unhealthy
	excluded
)

// stateOf maps EDS health as Envoy does (HostImplBase::setEdsHealthFlag):
// UNKNOWN and HEALTHY are healthy, DEGRADED is degraded, UNHEALTHY and
// TIMEOUT are not, and DRAINING is excluded — left out of the health
// counts as well (envoy.reloadable_features.exclude_host_in_eds_status_draining).
func stateOf(h Health) hostState {
	switch h {
	case "", Healthy, Unknown:
		return healthy
	case "DEGRADED":
		return degraded
	case "DRAINING":
		return excluded
	}
	return unhealthy
}

// overprovisioning is Envoy's default overprovisioning factor (percent).
const overprovisioning = 140

// spread returns each entry's share; kept == nil keeps every entry. Like
// Envoy: hosts by priority, each priority's health, the load each takes
// (total panic: by host count), then each priority's load spread over its
// hosts (by locality when locality-weighted, by weight otherwise).
func spread(entries []LBEntry, kept []bool, cfg LBConfig) []float64 {
	share := make([]float64, len(entries))
	prios := byPriority(entries, kept)
	n := len(prios)
	state := make([]uint64, 4*n)
	health, degr, load, dload := state[:n], state[n:2*n], state[2*n:3*n], state[3*n:]
	avail := priorityHealth(entries, prios, health, degr)
	if avail == 0 && cfg.PanicThreshold == 0 {
		// Nothing healthy and panic off: Envoy finds no host, requests fail.
		return share
	}
	if avail > 0 {
		rest := distribute(load, health, 100, avail)
		rest = distribute(dload, degr, rest, avail)
		if rest > 0 {
			if p := firstNonZero(health); p >= 0 {
				load[p] += rest
			} else if p := firstNonZero(degr); p >= 0 {
				dload[p] += rest
			}
		}
	}
	panicked := make([]bool, n)
	totalPanic := true
	for p, idx := range prios {
		if avail < 100 {
			panicked[p] = inPanic(entries, idx, cfg.PanicThreshold)
		}
		totalPanic = totalPanic && panicked[p]
	}
	if totalPanic {
		loadInTotalPanic(prios, load, dload)
	}
	for p, idx := range prios {
		if panicked[p] {
			byWeight(share, entries, idx, nil, float64(load[p]+dload[p])/100, cfg)
			continue
		}
		for _, st := range []hostState{healthy, degraded} {
			l := load[p]
			if st == degraded {
				l = dload[p]
			}
			if l == 0 {
				continue
			}
			f := float64(l) / 100
			want := func(i int) bool { return stateOf(entries[i].Health) == st }
			if cfg.LocalityWeighted && byLocality(share, entries, idx, want, f, cfg) {
				continue
			}
			byWeight(share, entries, idx, want, f, cfg)
		}
	}
	return share
}

// byPriority lists the kept entries of each priority, up to the highest
// (Envoy creates empty host sets for gaps), in one backing array.
func byPriority(entries []LBEntry, kept []bool) [][]int {
	maxP := uint32(0)
	for i, e := range entries {
		if (kept == nil || kept[i]) && e.Priority > maxP {
			maxP = e.Priority
		}
	}
	n := int(maxP) + 1
	prios := make([][]int, n)
	if n == 1 {
		all := make([]int, 0, len(entries))
		for i := range entries {
			if kept == nil || kept[i] {
				all = append(all, i)
			}
		}
		prios[0] = all
		return prios
	}
	counts := make([]int, n+1)
	for i, e := range entries {
		if kept == nil || kept[i] {
			counts[e.Priority+1]++
		}
	}
	for p := 1; p <= n; p++ {
		counts[p] += counts[p-1]
	}
	backing := make([]int, counts[n])
	for p := range prios {
		prios[p] = backing[counts[p]:counts[p]:counts[p+1]]
	}
	for i, e := range entries {
		if kept == nil || kept[i] {
			prios[e.Priority] = append(prios[e.Priority], i)
		}
	}
	return prios
}

// priorityHealth fills each priority's healthy and degraded availability
// (overprovisioned percent of its hosts, excluded ones left out) and
// returns the total, at most 100.
func priorityHealth(entries []LBEntry, prios [][]int, health, degr []uint64) uint64 {
	var avail uint64
	for p, idx := range prios {
		if len(idx) == 0 {
			continue
		}
		var h, d, total uint64
		for _, i := range idx {
			switch stateOf(entries[i].Health) {
			case healthy:
				h++
			case degraded:
				d++
			case excluded:
				continue
			}
			total++
		}
		if total == 0 {
			continue
		}
		health[p] = min(100, overprovisioning*h/total)
		degr[p] = min(100, overprovisioning*d/total)
		avail += health[p] + degr[p]
	}
	return min(100, avail)
}

// loadInTotalPanic mirrors Envoy's recalculateLoadInTotalPanic: load by
// host counts, all hosts.
func loadInTotalPanic(prios [][]int, load, dload []uint64) {
	hosts := 0
	for _, idx := range prios {
		hosts += len(idx)
	}
	rest, first := uint64(100), -1
	for p, idx := range prios {
		load[p], dload[p] = uint64(100*len(idx)/hosts), 0
		rest -= load[p]
		if first < 0 && len(idx) > 0 {
			first = p
		}
	}
	load[first] += rest
}

// distribute mirrors Envoy's distributeLoad: each priority takes as much
// of the load as its availability allows, in order.
func distribute(load, avail []uint64, total, norm uint64) uint64 {
	for p := range avail {
		load[p] = min(total, avail[p]*100/norm)
		total -= load[p]
	}
	return total
}

func firstNonZero(v []uint64) int {
	for i, x := range v {
		if x > 0 {
			return i
		}
	}
	return -1
}

// inPanic mirrors isHostSetInPanic: healthy and degraded hosts below the
// panic threshold (percent of the priority's hosts).
func inPanic(entries []LBEntry, idx []int, threshold float64) bool {
	ok, hosts := 0, 0
	for _, i := range idx {
		switch stateOf(entries[i].Health) {
		case healthy, degraded:
			ok++
		case excluded:
			continue
		}
		hosts++
	}
	if hosts == 0 {
		return 0 < threshold
	}
	return 100*float64(ok)/float64(hosts) < threshold
}

// byWeight spreads load f over the entries of idx that want selects (all
// when nil), by endpoint weight (equally under RANDOM).
func byWeight(share []float64, entries []LBEntry, idx []int, want func(int) bool, f float64, cfg LBConfig) {
	var sum float64
	for _, i := range idx {
		if want == nil || want(i) {
			sum += weightOf(entries[i], cfg)
		}
	}
	if sum == 0 {
		return
	}
	for _, i := range idx {
		if want == nil || want(i) {
			share[i] += f * weightOf(entries[i], cfg) / sum
		}
	}
}

// byLocality spreads load f over the localities of one priority by their
// effective weight, then within each by endpoint weight. It reports false
// when no locality has an effective weight (Envoy then ignores localities).
func byLocality(share []float64, entries []LBEntry, idx []int, want func(int) bool, f float64, cfg LBConfig) bool {
	type loc struct {
		name          string
		weight        uint32
		hosts, usable int
		members       []int
	}
	var locs []*loc
	find := func(name string) *loc {
		for _, l := range locs {
			if l.name == name {
				return l
			}
		}
		l := &loc{name: name}
		locs = append(locs, l)
		return l
	}
	for _, i := range idx {
		l := find(entries[i].Locality)
		// Envoy keeps one weight per locality and priority: the last
		// LocalityLbEndpoints for it wins (PriorityStateManager).
		l.weight = entries[i].LocalityWeight
		if stateOf(entries[i].Health) != excluded {
			l.hosts++
		}
		if want(i) {
			l.usable++
		}
		l.members = append(l.members, i)
	}
	eff := make([]float64, len(locs))
	var sum float64
	for j, l := range locs {
		if l.hosts == 0 {
			continue
		}
		eff[j] = float64(l.weight) * math.Min(1, overprovisioning/100.0*float64(l.usable)/float64(l.hosts))
		sum += eff[j]
	}
	if sum == 0 {
		return false
	}
	for j, l := range locs {
		if eff[j] > 0 {
			byWeight(share, entries, l.members, want, f*eff[j]/sum, cfg)
		}
	}
	return true
}

func weightOf(e LBEntry, cfg LBConfig) float64 {
	if cfg.Policy == "RANDOM" || e.Weight == 0 {
		return 1
	}
	return float64(e.Weight)
}

// round6 and round4 keep JSON free of float noise (0.333333, not
// 0.33333333333333331); sums are rounded after adding.
func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }
func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// NetworkShare is the share of one network's endpoints (and gateway) in
// one proxy's cluster.
type NetworkShare struct {
	Network  string  `json:"network"`
	Share    float64 `json:"share"`
	Intended float64 `json:"intendedShare"`
}

// SharesByNetwork sums the effects per network, in order of first
// appearance; entries without a network are summed under "".
func SharesByNetwork(networks []string, effects []Effect) []NetworkShare {
	var out []NetworkShare
	for i, n := range networks {
		j := 0
		for j < len(out) && out[j].Network != n {
			j++
		}
		if j == len(out) {
			out = append(out, NetworkShare{Network: n})
		}
		out[j].Share += effects[i].Share
		out[j].Intended += effects[i].Intended
	}
	for i := range out {
		out[i].Share, out[i].Intended = round4(out[i].Share), round4(out[i].Intended)
	}
	return out
}
