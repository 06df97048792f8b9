package horizon

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// Locality load balancing: what istiod does to the locality groups of one
// EDS cluster for one proxy after the split-horizon rewrite
// (pilot/pkg/xds/endpoints endpoint_builder.go BuildClusterLoadAssignment,
// pilot/pkg/networking/core/loadbalancer loadbalancer.go). The setting is
// the DestinationRule's localityLbSetting for the port and subset, else
// the Service's trafficDistribution, else the mesh config's
// (GetEffectiveLbSetting); with it istiod weights localities (distribute)
// or, when the rule sets outlierDetection (or trafficDistribution forces
// it), gives each group a priority relative to the proxy's locality
// (failoverPriority labels, then region/zone/subzone and failover).
// A zoneAwareLbSetting (the rule's, else the mesh's, after
// trafficDistribution) wins over localityLbSetting: failoverPriority, then
// the proxy's region at priority 0, its failover region next, the others
// last.

// localityLB is the effective setting of one prediction.
type localityLB struct {
	setting  *model.LocalityLbSetting
	failover bool   // outlier detection, or forced by trafficDistribution
	from     string // what gives the setting, for sentences
	// zone is a zoneAwareLbSetting, which wins over setting.
	zone *model.ZoneAwareLbSetting
}

// effectiveLocalityLB mirrors getOutlierDetectionAndLoadBalancerSettings
// and GetEffectiveLbSetting. ok is false when no setting applies
// (locality load balancing off).
func (t *target) effectiveLocalityLB() (l localityLB, ok bool) {
	pol, ruleName := t.lb, ruleNames(t.rule)
	l.failover = pol.OutlierDetection
	switch {
	case pol.ZoneAware != nil:
		l.zone, l.from = pol.ZoneAware, ruleName
	case pol.LocalityLb != nil:
		if pol.LocalityLb.Enabled != nil && !*pol.LocalityLb.Enabled {
			return l, false
		}
		l.setting, l.from = pol.LocalityLb, ruleName
	case t.trafficDistribution != "":
		prio := []string{model.LabelNetwork, model.LabelRegion, model.LabelZone}
		if t.trafficDistribution == "PreferSameNode" {
			prio = append(prio, model.LabelSubzone, model.LabelHostname)
		}
		enabled := true
		l.setting = &model.LocalityLbSetting{Enabled: &enabled, FailoverPriority: prio}
		l.failover, l.from = true, "trafficDistribution "+t.trafficDistribution
	case t.cfg.mc.ZoneAwareLbSetting != nil:
		l.zone, l.from = t.cfg.mc.ZoneAwareLbSetting, "the mesh config's zoneAwareLbSetting"
	default:
		mesh := t.cfg.mc.LocalityLbSetting
		if mesh == nil || (mesh.Enabled != nil && !*mesh.Enabled) {
			return l, false
		}
		l.setting, l.from = mesh, "the mesh config's localityLbSetting"
	}
	return l, true
}

// weighted says whether istiod sets locality_weighted_lb_config on the
// cluster (LocalityLBSettings.ApplyToCluster).
func (l localityLB) weighted() bool {
	if l.zone != nil || l.setting == nil {
		return false
	}
	s := l.setting
	return (l.failover && (len(s.Failover) > 0 || len(s.FailoverPriority) > 0)) || len(s.Distribute) > 0
}

// lbGroup is one LocalityLbEndpoints of the prediction: p.Endpoints[start:end].
type lbGroup struct {
	start, end int
	locality   [3]string
	weight     uint32
	priority   uint32
	dropped    bool
}

// splitLocality reads an Envoy locality (region/zone/subzone).
func splitLocality(s string) [3]string {
	var l [3]string
	parts := strings.SplitN(s, "/", 3)
	copy(l[:], parts)
	return l
}

// localityMatch mirrors util.LocalityMatch: a rule locality
// ("region/zone/subzone", "*" wildcards, missing parts match anything)
// against a locality.
func localityMatch(l [3]string, rule string) bool {
	r := splitLocality(rule)
	return (r[0] == "*" || l[0] == r[0]) &&
		(r[1] == "*" || r[1] == "" || l[1] == r[1]) &&
		(r[2] == "*" || r[2] == "" || l[2] == r[2])
}

// lbPriority mirrors util.LbPriority.
func lbPriority(proxy, ep [3]string) int {
	switch {
	case proxy[0] != ep[0]:
		return 3
	case proxy[1] != ep[1]:
		return 2
	case proxy[2] != ep[2]:
		return 1
	}
	return 0
}

// proxyTopology is the locality and the labels istiod gives the proxy
// (setTopologyLabels): the pod its registry finds at the proxy's IP in
// its cluster gives its labels and locality; else the proxy's own labels
// (region, zone, subzone labels, else topology.istio.io/locality or
// istio-locality); meshscope's probe
// sends no node locality. The labels are augmented as AugmentLabels does.
func proxyTopology(ix *gatewayIndex, snap *model.Snapshot, proxy Proxy) (loc [3]string, self model.Endpoint) {
	self = model.Endpoint{Cluster: proxy.Cluster, Network: proxy.Network, Labels: proxy.Labels}
	if pod := ix.podAt(snap, proxy.Cluster, proxy.IP); pod != nil {
		self.Labels, self.Locality, self.Node = pod.Labels, pod.Locality, pod.Node
		return splitLocality(envoyLocality(pod.Locality)), self
	}
	r, hr := proxy.Labels[model.LabelRegion]
	z, hz := proxy.Labels[model.LabelZone]
	sz, hs := proxy.Labels[model.LabelSubzone]
	switch {
	case hr || hz || hs:
		loc = [3]string{r, z, sz}
	default:
		// GetLocalityLabel, then ConvertLocality: no dots turned into
		// slashes here, unlike for a pod's endpoints.
		if v, ok := proxy.Labels[model.LabelLocality]; ok {
			loc = splitLocality(v)
		} else if v, ok := proxy.Labels[model.LabelLocalityLegacy]; ok {
			loc = splitLocality(v)
		}
	}
	self.Locality = strings.Join(loc[:], "/")
	if loc == [3]string{} {
		self.Locality = ""
	}
	return loc, self
}

// podAt finds the pod endpoint with address ip in cluster, if any. The
// index is built once per snapshot: locality failover asks for every
// service the proxy's pod.
func (ix *gatewayIndex) podAt(snap *model.Snapshot, cluster, ip string) *model.Endpoint {
	if ip == "" || snap == nil {
		return nil
	}
	ix.podsMu.Lock()
	defer ix.podsMu.Unlock()
	if ix.pods == nil || ix.podsSnap != snap {
		ix.pods, ix.podsSnap = map[[2]string]*model.Endpoint{}, snap
		for _, svc := range snap.Services {
			for cid, sc := range svc.Clusters {
				for i := range sc.Endpoints {
					if e := &sc.Endpoints[i]; e.Pod != "" {
						if _, dup := ix.pods[[2]string{cid, e.Address}]; !dup {
							ix.pods[[2]string{cid, e.Address}] = e
						}
					}
				}
			}
		}
	}
	return ix.pods[[2]string{cluster, ip}]
}

// applyLocalityLB gives the groups (p.Endpoints split at ends) the
// weights and priorities istiod's setting gives them for the proxy, and
// sets the cluster's locality weighting. srcOf finds the real endpoint of
// a direct entry (failoverPriority matches its labels).
func (p *Prediction) applyLocalityLB(l localityLB, ends []int, ix *gatewayIndex, snap *model.Snapshot, proxy Proxy, srcOf func(e *Endpoint) *model.Endpoint) {
	p.LB.LocalityWeighted = l.weighted()
	if l.zone != nil {
		p.applyZoneAware(l.zone, ends, ix, snap, proxy, srcOf)
		return
	}
	s := l.setting
	if s == nil || len(p.Endpoints) == 0 || (len(s.Distribute) == 0 && !l.failover) {
		// Nothing to do (the common case: the mesh's default setting
		// without outlier detection): every group stays priority 0.
		return
	}
	loc, self := proxyTopology(ix, snap, proxy)
	groups := p.lbGroups(ends)
	switch {
	case len(s.Distribute) > 0:
		p.distribute(groups, loc, s, l.from)
	case l.failover:
		if len(s.FailoverPriority) > 0 {
			groups = p.failoverPriority(groups, &self, s.FailoverPriority, srcOf)
			if len(s.Failover) > 0 {
				localityFailover(groups, loc, s)
			}
		} else {
			localityFailover(groups, loc, s)
		}
	}
	p.setGroups(groups, func(e *Endpoint) string {
		return fmt.Sprintf("%s distributes the proxy's traffic (from %s) to localities that do not include %s: istiod sends the group without endpoints", l.from, orNone(strings.Join(loc[:], "/")), orNone(e.Locality))
	})
}

// lbGroups splits p.Endpoints at ends into groups.
func (p *Prediction) lbGroups(ends []int) []lbGroup {
	groups := make([]lbGroup, 0, len(ends))
	start := 0
	for _, end := range ends {
		if end > start {
			e := p.Endpoints[start]
			groups = append(groups, lbGroup{start: start, end: end, locality: splitLocality(e.Locality), weight: e.LocalityWeight})
		}
		start = end
	}
	return groups
}

// setGroups writes the groups' weights and priorities into p.Endpoints,
// leaving out (as dropped, for why) the endpoints of dropped groups.
func (p *Prediction) setGroups(groups []lbGroup, why func(e *Endpoint) string) {
	out := make([]Endpoint, 0, len(p.Endpoints))
	for _, g := range groups {
		for i := g.start; i < g.end; i++ {
			e := p.Endpoints[i]
			if g.dropped {
				for _, r := range e.StandsFor {
					p.Dropped = append(p.Dropped, Dropped{Ref: r, Reason: DropDistribute, Why: why(&e)})
				}
				continue
			}
			e.LocalityWeight, e.Priority = g.weight, g.priority
			out = append(out, e)
		}
	}
	p.Endpoints = out
}

// applyZoneAware mirrors ZoneAwareLBSettings.ApplyToLoadAssignment
// (ApplyZoneAwareLoadBalancer): nothing when routing is off; else
// failoverPriority, then applyZoneAwareRegionalFailover — 0 for the
// proxy's region, 1 for the region its failover rule names, 2 for the
// others, on top of the failoverPriority ranks, made contiguous.
func (p *Prediction) applyZoneAware(z *model.ZoneAwareLbSetting, ends []int, ix *gatewayIndex, snap *model.Snapshot, proxy Proxy, srcOf func(e *Endpoint) *model.Endpoint) {
	if (z.Enabled != nil && !*z.Enabled) || len(p.Endpoints) == 0 {
		return
	}
	loc, self := proxyTopology(ix, snap, proxy)
	groups := p.lbGroups(ends)
	if len(z.FailoverPriority) > 0 {
		groups = p.failoverPriority(groups, &self, z.FailoverPriority, srcOf)
	}
	for i := range groups {
		pr := uint32(0)
		if groups[i].locality[0] != loc[0] {
			pr = 2
			for _, f := range z.Failover {
				if f.From == loc[0] {
					if groups[i].locality[0] == f.To {
						pr = 1
					}
					break
				}
			}
		}
		groups[i].priority = groups[i].priority*3 + pr
	}
	compactPriorities(groups)
	p.setGroups(groups, nil)
}

// distribute mirrors applyLocalityWeights: the first rule whose from
// matches the proxy; each of its destinations takes the groups it matches
// (not taken yet) and shares its weight between them by their weights
// (rounded up; a share of 0 keeps the group's weight); groups no
// destination takes lose their endpoints. istiod walks the destinations
// in map order: with overlapping wildcards the outcome varies, meshscope
// takes them sorted.
func (p *Prediction) distribute(groups []lbGroup, loc [3]string, s *model.LocalityLbSetting, from string) {
	for _, d := range s.Distribute {
		if !localityMatch(loc, d.From) {
			continue
		}
		taken := make([]bool, len(groups))
		dests := make([]string, 0, len(d.To))
		for to := range d.To {
			dests = append(dests, to)
		}
		sort.Strings(dests)
		for _, to := range dests {
			w := d.To[to]
			var idx []int
			var total uint32
			for i := range groups {
				if !taken[i] && localityMatch(groups[i].locality, to) {
					taken[i] = true
					idx = append(idx, i)
					total += groups[i].weight
				}
			}
			for _, i := range idx {
				dest := float64(groups[i].weight*w) / float64(total)
				if dest > 0 {
					groups[i].weight = uint32(math.Ceil(dest))
				}
			}
		}
		for i := range groups {
			groups[i].dropped = !taken[i]
		}
		return
	}
}

// localityFailover mirrors applyLocalityFailover: priority by how much of
// the proxy's locality a group shares (0 all, 1 region and zone, 2 region,
// 3 none; 4 for a region the proxy's failover rule does not name), on top
// of any failoverPriority ranks, then made contiguous.
func localityFailover(groups []lbGroup, loc [3]string, s *model.LocalityLbSetting) {
	for i := range groups {
		pr := lbPriority(loc, groups[i].locality)
		if pr == 3 {
			for _, f := range s.Failover {
				if f.From == loc[0] {
					if groups[i].locality[0] != f.To {
						pr = 4
					}
					break
				}
			}
		}
		groups[i].priority = groups[i].priority*5 + uint32(pr)
	}
	compactPriorities(groups)
}

// compactPriorities renumbers priorities 0..N without gaps, keeping their order.
func compactPriorities(groups []lbGroup) {
	var ps []uint32
	for _, g := range groups {
		if !slices.Contains(ps, g.priority) {
			ps = append(ps, g.priority)
		}
	}
	slices.Sort(ps)
	for i := range groups {
		groups[i].priority = uint32(slices.Index(ps, groups[i].priority))
	}
}

// failoverPriority mirrors applyFailoverPriorities: each group splits into
// one group per priority — how many of the labels (in order) its entries
// share with the proxy ("label=value" compares with that value instead) —
// with the weights of its entries; a first label topology.istio.io/network
// that differs only pushes the entry below all others. A gateway entry
// has only its cluster and network labels. It reorders p.Endpoints group by
// group, by priority, and returns the new groups.
func (p *Prediction) failoverPriority(groups []lbGroup, self *model.Endpoint, labels []string, srcOf func(e *Endpoint) *model.Endpoint) []lbGroup {
	keys := make([]string, len(labels))
	overrides := map[string]string{}
	for i, l := range labels {
		parts := strings.Split(l, "=")
		keys[i] = parts[0]
		if len(parts) == 2 {
			overrides[parts[0]] = parts[1]
		}
	}
	includesNetwork := labels[0] == model.LabelNetwork
	value := func(e *model.Endpoint, k string) string {
		v, _ := model.LabelValue(e, k)
		return v
	}
	prioOf := func(e *Endpoint) int {
		src := srcOf(e)
		if e.Kind != Local || src == nil {
			src = &model.Endpoint{Cluster: e.Cluster, Network: e.Network}
		}
		prio, adjust := 0, 0
		for j, k := range keys {
			want, ok := overrides[k]
			if !ok {
				want = value(self, k)
			}
			if want != value(src, k) {
				if j == 0 && includesNetwork {
					adjust = len(labels)
					continue
				}
				prio = len(labels) - j
				break
			}
		}
		return prio + adjust
	}
	out := make([]Endpoint, 0, len(p.Endpoints))
	var split []lbGroup
	for _, g := range groups {
		prios := make([]int, g.end-g.start)
		var distinct []int
		for i := g.start; i < g.end; i++ {
			prios[i-g.start] = prioOf(&p.Endpoints[i])
			if !slices.Contains(distinct, prios[i-g.start]) {
				distinct = append(distinct, prios[i-g.start])
			}
		}
		slices.Sort(distinct)
		for _, pr := range distinct {
			ng := lbGroup{start: len(out), locality: g.locality, priority: uint32(pr)}
			for i := g.start; i < g.end; i++ {
				if prios[i-g.start] == pr {
					out = append(out, p.Endpoints[i])
					ng.weight += p.Endpoints[i].Weight
				}
			}
			ng.end = len(out)
			split = append(split, ng)
		}
	}
	p.Endpoints = out
	compactPriorities(split)
	return split
}

// sendsUnhealthy mirrors supportsUnhealthyEndpoints (with
// PILOT_SEND_UNHEALTHY_ENDPOINTS on, istiod's default): unhealthy
// endpoints are sent unless the rule's outlier detection for the port and
// subset sets minHealthPercent above 0 — and always for a Service with a
// trafficDistribution (ForcesSupportUnhealthyEndpoints).
func (t *target) sendsUnhealthy() (send bool, minHealth int32) {
	if t.trafficDistribution == "" && t.lb.OutlierDetection && t.lb.MinHealthPercent > 0 {
		return false, t.lb.MinHealthPercent
	}
	return true, 0
}

// panicThreshold mirrors applyOutlierDetection: with outlier detection
// the cluster's healthy_panic_threshold is its minHealthPercent (0 for a
// Service with a trafficDistribution); without, istiod's default 0.
func (t *target) panicThreshold() float64 {
	if t.trafficDistribution != "" || !t.lb.OutlierDetection {
		return 0
	}
	return float64(t.lb.MinHealthPercent)
}

// ruleNames names a merged DestinationRule.
func ruleNames(r *mergedRule) string {
	if r == nil {
		return "no DestinationRule"
	}
	return "DestinationRule " + strings.Join(r.from, "+")
}
