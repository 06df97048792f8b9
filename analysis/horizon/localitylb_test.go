package horizon

import (
	"fmt"
	"strings"
	"testing"

	"github.com/meshscope/meshscope/model"
)

// groupsOf renders groups as "locality:weight/priority" (x: dropped).
func groupsOf(gs []lbGroup) string {
	var out []string
	for _, g := range gs {
		s := fmt.Sprintf("%s:%d/%d", strings.Join(g.locality[:], "/"), g.weight, g.priority)
		if g.dropped {
			s += "x"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func testGroups(locs ...string) []lbGroup {
	gs := make([]lbGroup, len(locs))
	for i, l := range locs {
		gs[i] = lbGroup{start: i, end: i + 1, locality: splitLocality(l), weight: 2}
	}
	return gs
}

// applyLocalityFailover's priorities: shared region/zone/subzone with the
// proxy, a failover rule's region before the others, made contiguous.
func TestLocalityFailover(t *testing.T) {
	proxy := splitLocality("r1/z1/s1")
	gs := testGroups("r1/z1/s1", "r1/z1/s2", "r1/z2", "r2/z9", "r3/z9", "")
	localityFailover(gs, proxy, &model.LocalityLbSetting{})
	if got := groupsOf(gs); got != "r1/z1/s1:2/0 r1/z1/s2:2/1 r1/z2/:2/2 r2/z9/:2/3 r3/z9/:2/3 //:2/3" {
		t.Fatalf("default failover: %s", got)
	}
	gs = testGroups("r1/z1/s1", "r2/z9", "r3/z9")
	s := &model.LocalityLbSetting{}
	s.Failover = append(s.Failover, struct {
		From string `json:"from"`
		To   string `json:"to"`
	}{From: "r1", To: "r3"})
	localityFailover(gs, proxy, s)
	if got := groupsOf(gs); got != "r1/z1/s1:2/0 r2/z9/:2/2 r3/z9/:2/1" {
		t.Fatalf("failover r1→r3: %s", got)
	}
}

// applyLocalityWeights: the first rule from the proxy's locality shares
// each destination's weight over the groups it takes (rounded up); the
// groups no destination takes lose their endpoints.
func TestDistribute(t *testing.T) {
	s := &model.LocalityLbSetting{}
	s.Distribute = append(s.Distribute, struct {
		From string            `json:"from"`
		To   map[string]uint32 `json:"to"`
	}{From: "r9/*", To: map[string]uint32{"r1/*": 100}}, struct {
		From string            `json:"from"`
		To   map[string]uint32 `json:"to"`
	}{From: "r1/z1/*", To: map[string]uint32{"r1/z1/*": 75, "r1/z2/*": 25}})
	gs := testGroups("r1/z1/s1", "r1/z1/s2", "r1/z2", "r2")
	gs[0].weight = 1
	var p Prediction
	p.distribute(gs, splitLocality("r1/z1/s1"), s, "test")
	// z1: 1 and 2 of 75 → ceil(25), ceil(50); z2: all 25; r2 dropped.
	if got := groupsOf(gs); got != "r1/z1/s1:25/0 r1/z1/s2:50/0 r1/z2/:25/0 r2//:2/0x" {
		t.Fatalf("distribute: %s", got)
	}
}

// applyFailoverPriorities: entries split by how many priority labels
// they share with the proxy; a differing network (first label) pushes an
// entry below all others; a gateway entry has only cluster and network.
func TestFailoverPriority(t *testing.T) {
	mk := func(addr, cluster, network, loc string, kind Kind) Endpoint {
		return Endpoint{Address: addr, Cluster: cluster, Network: network, Locality: loc, Weight: 1, Kind: kind}
	}
	p := Prediction{Endpoints: []Endpoint{
		mk("10.0.0.1", "c1", "n1", "r1/z1", Local),
		mk("10.0.0.2", "c1", "n1", "r1/z2", Local),
		mk("192.168.0.1", "c2", "n2", "r1/z1", Gateway),
		mk("10.0.0.3", "c1", "n1", "r2/z1", Local),
	}}
	srcs := map[string]*model.Endpoint{}
	for _, e := range p.Endpoints {
		if e.Kind == Local {
			srcs[e.Address] = &model.Endpoint{Address: e.Address, Cluster: e.Cluster, Network: e.Network, Locality: e.Locality}
		}
	}
	self := &model.Endpoint{Cluster: "c1", Network: "n1", Locality: "r1/z1"}
	gs := []lbGroup{{start: 0, end: 4, weight: 4}}
	out := p.failoverPriority(gs, self, []string{model.LabelNetwork, "topology.kubernetes.io/region", "topology.kubernetes.io/zone"},
		func(e *Endpoint) *model.Endpoint { return srcs[e.Address] })
	var got []string
	for _, g := range out {
		var addrs []string
		for _, e := range p.Endpoints[g.start:g.end] {
			addrs = append(addrs, e.Address)
		}
		got = append(got, fmt.Sprintf("p%d w%d %s", g.priority, g.weight, strings.Join(addrs, ",")))
	}
	// 10.0.0.1 all match (0); 10.0.0.2 zone differs (1); 10.0.0.3
	// region differs (2); the gateway: network differs (+3) and region
	// "" differs (2) → 5. Compacted: 0, 1, 2, 3.
	if want := "p0 w1 10.0.0.1|p1 w1 10.0.0.2|p2 w1 10.0.0.3|p3 w1 192.168.0.1"; strings.Join(got, "|") != want {
		t.Fatalf("failoverPriority:\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
}

func TestLocalityMatch(t *testing.T) {
	l := splitLocality("r1/z1/s1")
	for rule, want := range map[string]bool{"r1": true, "r1/*": true, "r1/z1/*": true, "r1/z2": false, "*": true, "r2/*": false, "r1/z1/s2": false} {
		if got := localityMatch(l, rule); got != want {
			t.Errorf("localityMatch(r1/z1/s1, %q) = %v", rule, got)
		}
	}
}

// applyZoneAwareRegionalFailover: the proxy's region first, the region its
// failover rule names next, every other region last; off when disabled.
func TestZoneAware(t *testing.T) {
	mk := func() Prediction {
		var p Prediction
		for _, l := range []string{"r1/z1", "r1/z2", "r2/z1", "r3/z1"} {
			p.Endpoints = append(p.Endpoints, Endpoint{Address: l, Locality: l, LocalityWeight: 1, Weight: 1})
		}
		return p
	}
	ends := []int{1, 2, 3, 4}
	z := &model.ZoneAwareLbSetting{}
	z.Failover = append(z.Failover, struct {
		From string `json:"from"`
		To   string `json:"to"`
	}{From: "r1", To: "r3"})
	proxy := Proxy{Labels: map[string]string{"topology.kubernetes.io/region": "r1", "topology.kubernetes.io/zone": "z1"}}
	p := mk()
	ix := newGatewayIndex(nil)
	p.applyZoneAware(z, ends, ix, nil, proxy, nil)
	var got []string
	for _, e := range p.Endpoints {
		got = append(got, fmt.Sprintf("%s:%d", e.Locality, e.Priority))
	}
	if s := strings.Join(got, " "); s != "r1/z1:0 r1/z2:0 r2/z1:2 r3/z1:1" {
		t.Fatalf("zone-aware priorities: %s", s)
	}
	off := false
	p = mk()
	p.applyZoneAware(&model.ZoneAwareLbSetting{Enabled: &off}, ends, ix, nil, proxy, nil)
	for _, e := range p.Endpoints {
		if e.Priority != 0 {
			t.Fatalf("disabled zone-aware routing changed priorities: %+v", p.Endpoints)
		}
	}
}
