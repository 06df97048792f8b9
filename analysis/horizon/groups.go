package horizon

// groupSet collects one prediction's LbEndpoints into istiod's locality
// groups (endpoint_builder.go generate): direct endpoints, and gateway
// entries — one per (group, gateway) — standing for the endpoints
// EndpointsByNetworkFilter rewrites, assembled at the end in istiod's
// order. A mesh has thousands of services and each prediction builds its
// groups anew, so a prediction allocates a handful of slices whatever the
// number of localities.
type groupSet struct {
	// locs are the service's locality strings as istiod holds them; a
	// group is an index into it. of holds each endpoint's group, cluster
	// after cluster (from[i] is where cluster i starts).
	locs   []string
	of     []int32
	from   []int
	direct []Endpoint
	dgroup []int // group of each direct endpoint (several localities only)
	gws    []gwEntry
	// stands says which endpoint (an index into the prediction's refs)
	// each gateway entry stands for, in the order they came.
	stands []gwStand
	total  int
}

// gwEntry is a gateway LbEndpoint being built: what it becomes in
// assemble (Endpoint is large, and most of it follows from the key).
type gwEntry struct {
	group    int
	key      gwKey
	kind     Kind
	locality string
	weight   uint32
	stands   []Ref
}

type gwStand struct{ gw, ref int }

// init prepares the groups of the total endpoints of srcs (each cluster's
// EndpointSlices, each ServiceEntry's workloads, in the order the
// prediction takes them), collecting their localities into buf.
func (s *groupSet) init(srcs []source, total int, buf []string) {
	s.locs, s.total = buf, total
	s.of = make([]int32, 0, total)
	s.from = make([]int, 0, len(srcs))
	for si := range srcs {
		s.from = append(s.from, len(s.of))
		eps := srcs[si].endpoints
		last := -1
		for i := range eps {
			l := eps[i].Locality
			// Neighbours often share a locality: try the last one first.
			if last < 0 || s.locs[last] != l {
				last = 0
				for last < len(s.locs) && s.locs[last] != l {
					last++
				}
				if last == len(s.locs) {
					s.locs = append(s.locs, l)
				}
			}
			s.of = append(s.of, int32(last))
		}
	}
	if len(s.locs) == 1 {
		// One locality (the common case): the direct endpoints get room
		// for the gateways too, and become p.Endpoints without a copy.
		s.direct = make([]Endpoint, 0, total+4)
	}
}

// groupOf is the group of endpoint i of the ci-th source.
func (s *groupSet) groupOf(ci, i int) int { return int(s.of[s.from[ci]+i]) }

func (s *groupSet) addDirect(g int, e Endpoint) {
	if s.direct == nil {
		s.direct = make([]Endpoint, 0, s.total) // once, not by doubling
	}
	s.direct = append(s.direct, e)
	if len(s.locs) > 1 {
		s.dgroup = append(s.dgroup, g)
	}
}

// addToGateway adds ref (an index into the prediction's refs) and weight
// to the gateway entry of group g (locality loc) for gateway k, of kind
// Gateway or Forced.
func (s *groupSet) addToGateway(g int, loc string, k gwKey, kind Kind, ref int, weight uint32) {
	i := 0
	for i < len(s.gws) && (s.gws[i].group != g || s.gws[i].key != k) {
		i++
	}
	if i == len(s.gws) {
		if s.gws == nil { // about one entry per group
			s.gws = make([]gwEntry, 0, max(4, len(s.locs)))
		}
		s.gws = append(s.gws, gwEntry{group: g, key: k, kind: kind, locality: loc})
	}
	s.gws[i].weight += weight
	s.stands = append(s.stands, gwStand{gw: i, ref: ref})
}

// endpoint is the gateway LbEndpoint istiod sends for e: at the gateway's
// address, with no health, standing for e's endpoints.
func (e *gwEntry) endpoint(why *gatewaySentences, proxy Proxy) Endpoint {
	w := e.weight
	if w == 0 { // istiod: "gateway weight must be greater than 0"
		w = 1
	}
	ep := Endpoint{Address: e.key.Addr, Port: e.key.Port, Weight: w, Health: Unknown, Kind: e.kind,
		Locality: e.locality, Cluster: e.key.Cluster, Network: e.key.Network, StandsFor: e.stands}
	ep.Why = why.why(&ep, e.key, proxy)
	return ep
}

// assemble writes the groups into p.Endpoints in istiod's order — groups
// by their locality string, in each its direct endpoints in the order
// they came, then its gateway entries sorted as istiod sorts gateways —
// and returns where each group ends. why gives gateway entries their
// reason.
func (s *groupSet) assemble(p *Prediction, refs []Ref, why *gatewaySentences, proxy Proxy) []int {
	// Each gateway entry's StandsFor: one backing array, in arrival order.
	if len(s.stands) > 0 {
		var cbuf [16]int
		counts := cbuf[:0]
		if len(s.gws) > len(cbuf) {
			counts = make([]int, 0, len(s.gws))
		}
		counts = counts[:len(s.gws)]
		for _, st := range s.stands {
			counts[st.gw]++
		}
		backing := make([]Ref, len(s.stands))
		off := 0
		for i := range s.gws {
			s.gws[i].stands = backing[off : off : off+counts[i]]
			off += counts[i]
		}
		for _, st := range s.stands {
			e := &s.gws[st.gw]
			e.stands = append(e.stands, refs[st.ref])
		}
	}
	// istiod sorts its groups by its locality string (generate), and the
	// gateways of a group with SortGateways.
	n := len(s.locs)
	var obuf, rbuf [16]int
	order, rank := obuf[:0], rbuf[:0]
	if n > len(obuf) {
		order, rank = make([]int, 0, n), make([]int, 0, n)
	}
	order, rank = order[:n], rank[:n]
	for i := range order {
		order[i] = i
	}
	for i := 1; i < n; i++ { // insertion sort: a handful of groups
		for j := i; j > 0 && s.locs[order[j]] < s.locs[order[j-1]]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	for r, g := range order {
		rank[g] = r
	}
	for i := 1; i < len(s.gws); i++ {
		for j := i; j > 0 && gwBefore(s.gws[j], s.gws[j-1], rank); j-- {
			s.gws[j], s.gws[j-1] = s.gws[j-1], s.gws[j]
		}
	}

	ends := make([]int, 0, n)
	if n <= 1 {
		p.Endpoints = s.direct
		for i := range s.gws {
			p.Endpoints = append(p.Endpoints, s.gws[i].endpoint(why, proxy))
		}
		return append(ends, len(p.Endpoints))
	}
	// Several groups: place each endpoint at its group's offset.
	var sbuf [16]int
	start := sbuf[:0]
	if n+1 > len(sbuf) {
		start = make([]int, 0, n+1)
	}
	start = start[:n+1]
	for _, g := range s.dgroup {
		start[rank[g]+1]++
	}
	for i := range s.gws {
		start[rank[s.gws[i].group]+1]++
	}
	for r := 1; r <= n; r++ {
		start[r] += start[r-1]
		ends = append(ends, start[r])
	}
	p.Endpoints = make([]Endpoint, len(s.direct)+len(s.gws))
	next := start[:n] // each group's next free slot
	for i := range s.direct {
		r := rank[s.dgroup[i]]
		p.Endpoints[next[r]] = s.direct[i]
		next[r]++
	}
	for i := range s.gws { // sorted: after each group's direct endpoints
		r := rank[s.gws[i].group]
		p.Endpoints[next[r]] = s.gws[i].endpoint(why, proxy)
		next[r]++
	}
	return ends
}

// gwBefore orders gateway entries by their group's rank, then as istiod
// sorts gateways.
func gwBefore(a, b gwEntry, rank []int) bool {
	if rank[a.group] != rank[b.group] {
		return rank[a.group] < rank[b.group]
	}
	return gwLess(a.key, b.key)
}
