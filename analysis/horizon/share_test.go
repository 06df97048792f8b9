package horizon

import (
	"fmt"
	"strings"
	"testing"

	"github.com/meshscope/meshscope/model"
)

// groups renders a prediction as istiod's LocalityLbEndpoints: one
// "[locality lw=N p=N: address:port w=N share%, ...]" per group, in order.
func groups(p Prediction) string {
	var out []string
	for i := 0; i < len(p.Endpoints); {
		g := p.Endpoints[i]
		var eps []string
		j := i
		for ; j < len(p.Endpoints) && p.Endpoints[j].Locality == g.Locality && p.Endpoints[j].LocalityWeight == g.LocalityWeight; j++ {
			e := p.Endpoints[j]
			s := fmt.Sprintf("%s:%d w=%d %.0f%%", e.Address, e.Port, e.Weight, 100*e.Share)
			if e.Shadowed {
				s += " shadowed"
			}
			eps = append(eps, s)
		}
		out = append(out, fmt.Sprintf("[%s lw=%d p=%d: %s]", g.Locality, g.LocalityWeight, g.Priority, strings.Join(eps, ", ")))
		i = j
	}
	return strings.Join(out, " ")
}

// The remote cluster's pods in two zones: istiod sends
// network2's gateway once per zone, each with that zone's weight, and
// Envoy keeps only the first — network2 gets 1 of 2 instead of 2 of 3.
func TestPredictTwoLocalitiesDuplicateGateway(t *testing.T) {
	eps := []ep{
		{cluster: "cluster1", network: "network1", ip: "10.44.0.13", pod: "helloworld-v1", locality: "region1/zone-a/"},
		{cluster: "cluster2", network: "network2", ip: "10.144.0.15", pod: "helloworld-v2", locality: "region2/zone-b/"},
		{cluster: "cluster2", network: "network2", ip: "10.144.0.16", pod: "helloworld-v2-c", locality: "region2/zone-c/"},
	}
	s := mesh(seedGateways, eps)
	for _, c := range []struct {
		proxy Proxy
		want  string
		net   map[string][2]int // network → share %, intended %
	}{
		{Proxy{Cluster: "cluster1", Network: "network1"},
			"[region1/zone-a lw=1 p=0: 10.44.0.13:5000 w=1 50%] [region2/zone-b lw=1 p=0: 192.168.60.9:15443 w=1 50%] [region2/zone-c lw=1 p=0: 192.168.60.9:15443 w=1 0% shadowed]",
			map[string][2]int{"network1": {50, 33}, "network2": {50, 67}}},
		{Proxy{Cluster: "cluster2", Network: "network2"},
			"[region1/zone-a lw=1 p=0: 192.168.60.113:15443 w=1 33%] [region2/zone-b lw=1 p=0: 10.144.0.15:5000 w=1 33%] [region2/zone-c lw=1 p=0: 10.144.0.16:5000 w=1 33%]",
			map[string][2]int{"network1": {33, 33}, "network2": {67, 67}}},
		{Proxy{Cluster: "cluster1"},
			"[region1/zone-a lw=1 p=0: 192.168.60.113:15443 w=1 50%] [region2/zone-b lw=1 p=0: 192.168.60.9:15443 w=1 50%] [region2/zone-c lw=1 p=0: 192.168.60.9:15443 w=1 0% shadowed]",
			map[string][2]int{"network1": {50, 33}, "network2": {50, 67}}},
	} {
		p := Predict(s, hello, 5000, c.proxy)
		if got := groups(p); got != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.proxy, got, c.want)
		}
		nets := make([]string, len(p.Endpoints))
		effs := make([]Effect, len(p.Endpoints))
		for i, e := range p.Endpoints {
			nets[i], effs[i] = e.Network, e.Effect
		}
		for _, ns := range SharesByNetwork(nets, effs) {
			if w := c.net[ns.Network]; int(100*ns.Share+0.5) != w[0] || int(100*ns.Intended+0.5) != w[1] {
				t.Errorf("%+v: %s gets %.2f (intended %.2f), want %v", c.proxy, ns.Network, ns.Share, ns.Intended, w)
			}
		}
	}
}

// Two pods in the same zone share one gateway entry, weight 2; a pod with
// a locality label "region.zone" lands in another istiod group than its
// neighbour on a node of the same zone ("region/zone/"), with the same
// locality for Envoy.
func TestPredictLocalityGroupsByIstiodString(t *testing.T) {
	eps := []ep{
		{cluster: "cluster1", network: "network1", ip: "10.44.0.13", pod: "a", locality: "r1/z1/"},
		{cluster: "cluster2", network: "network2", ip: "10.144.0.15", pod: "b", locality: "r2/z2/"},
		{cluster: "cluster2", network: "network2", ip: "10.144.0.16", pod: "c", locality: "r2/z2/"},
		{cluster: "cluster1", network: "network1", ip: "10.44.0.14", pod: "d", locality: "r1/z1"},
	}
	p := Predict(mesh(seedGateways, eps), hello, 5000, Proxy{Cluster: "cluster1", Network: "network1"})
	want := "[r1/z1 lw=1 p=0: 10.44.0.14:5000 w=1 25%] [r1/z1 lw=1 p=0: 10.44.0.13:5000 w=1 25%] [r2/z2 lw=2 p=0: 192.168.60.9:15443 w=2 50%]"
	// The two r1/z1 groups have equal weights, so groups() joins them; check the boundary by order.
	if got := groups(p); got != strings.Replace(want, "25%] [r1/z1 lw=1 p=0: ", "25%, ", 1) {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if p.Endpoints[0].Address != "10.44.0.14" || p.Endpoints[1].Address != "10.44.0.13" {
		t.Errorf("istiod orders groups by its string: \"r1/z1\" before \"r1/z1/\": %+v", p.Endpoints)
	}
}

func TestEffects(t *testing.T) {
	e := func(addr string, w uint32, h Health, loc string, prio, lw uint32) LBEntry {
		return LBEntry{Address: addr, Port: 80, Weight: w, Health: h, Locality: loc, Priority: prio, LocalityWeight: lw}
	}
	pct := func(effs []Effect) string {
		var out []string
		for _, f := range effs {
			s := fmt.Sprintf("%.1f", 100*f.Share)
			if f.Intended != f.Share {
				s += fmt.Sprintf("(%.1f)", 100*f.Intended)
			}
			if f.Shadowed {
				s += "x"
			}
			out = append(out, s)
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		name    string
		entries []LBEntry
		cfg     LBConfig
		want    string
	}{
		{"weights", []LBEntry{e("a", 1, Healthy, "", 0, 4), e("b", 3, Unknown, "", 0, 4)}, IstiodLB, "25.0 75.0"},
		{"RANDOM ignores weights", []LBEntry{e("a", 1, Healthy, "", 0, 4), e("b", 3, Healthy, "", 0, 4)}, LBConfig{Policy: "RANDOM"}, "50.0 50.0"},
		{"unhealthy gets nothing (panic off)", []LBEntry{e("a", 1, Healthy, "", 0, 2), e("b", 1, Unhealthy, "", 0, 2)}, IstiodLB, "100.0 0.0"},
		{"all unhealthy, panic off: nothing", []LBEntry{e("a", 1, Unhealthy, "", 0, 1)}, IstiodLB, "0.0"},
		{"all unhealthy, Envoy's default panic: all hosts", []LBEntry{e("a", 1, Unhealthy, "", 0, 2), e("b", 1, Unhealthy, "", 0, 2)}, LBConfig{PanicThreshold: 50}, "50.0 50.0"},
		// 1 healthy of 3: health min(100, 140/3=46) < 100; below the 50 % threshold → panic, all hosts.
		{"panic below threshold", []LBEntry{e("a", 1, Healthy, "", 0, 3), e("b", 1, Unhealthy, "", 0, 3), e("c", 1, Unhealthy, "", 0, 3)}, LBConfig{PanicThreshold: 50}, "33.3 33.3 33.3"},
		// P0: 1 of 2 healthy → health 70: P0 takes 70 %, P1 the rest.
		{"priority spill", []LBEntry{e("a", 1, Healthy, "", 0, 2), e("b", 1, Unhealthy, "", 0, 2), e("c", 1, Healthy, "", 1, 1)}, IstiodLB, "70.0 0.0 30.0"},
		{"priority 1 idle while 0 is healthy", []LBEntry{e("a", 1, Healthy, "", 0, 1), e("c", 1, Healthy, "", 1, 1)}, IstiodLB, "100.0 0.0"},
		{"locality weights ignored without locality_weighted_lb_config",
			[]LBEntry{e("a", 1, Healthy, "z1", 0, 1), e("b", 1, Healthy, "z2", 0, 9)}, IstiodLB, "50.0 50.0"},
		{"locality weights with locality_weighted_lb_config",
			[]LBEntry{e("a", 1, Healthy, "z1", 0, 1), e("b", 1, Healthy, "z2", 0, 3), e("c", 1, Healthy, "z2", 0, 3)}, LBConfig{LocalityWeighted: true}, "25.0 37.5 37.5"},
		// z2: 1 of 3 healthy → effective weight 4 × min(1, 1.4/3) = 1.87 against z1's 4.
		{"locality health scales its weight",
			[]LBEntry{e("a", 1, Healthy, "z1", 0, 4), e("b", 1, Healthy, "z2", 0, 4), e("c", 1, Unhealthy, "z2", 0, 4), e("d", 1, Unhealthy, "z2", 0, 4)}, LBConfig{LocalityWeighted: true}, "68.2 31.8 0.0 0.0"},
		// DRAINING is excluded: the priority is 1 of 1 healthy, not 1 of 2.
		{"draining excluded from the counts", []LBEntry{e("a", 1, Healthy, "", 0, 2), e("b", 1, "DRAINING", "", 0, 2), e("c", 1, Healthy, "", 1, 1)}, IstiodLB, "100.0 0.0 0.0"},
		{"duplicate: first kept, whatever its priority",
			[]LBEntry{e("gw", 1, Unknown, "z1", 1, 1), e("a", 1, Healthy, "z0", 0, 1), e("gw", 5, Unknown, "z2", 0, 5)}, IstiodLB, "0.0 100.0(16.7) 0.0(83.3)x"},
		{"duplicate with locality weighting: the emptied locality gets nothing",
			[]LBEntry{e("a", 1, Healthy, "z1", 0, 2), e("gw", 1, Unknown, "z1", 0, 2), e("gw", 2, Unknown, "z2", 0, 2)}, LBConfig{LocalityWeighted: true}, "50.0(25.0) 50.0(25.0) 0.0(50.0)x"},
	} {
		if got := pct(Effects(c.entries, c.cfg)); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

func TestEnvoyLocality(t *testing.T) {
	for in, want := range map[string]string{"": "", "r/z/": "r/z", "r/z": "r/z", "r/z/s": "r/z/s", "/z/": "/z", "r//s": "r//s", "a/b/c/d": "a/b/c", "r": "r"} {
		if got := envoyLocality(in); got != want {
			t.Errorf("EnvoyLocality(%q) = %q, want %q", in, got, want)
		}
	}
}

// Two gateways for network2 and its pods in two zones: each zone's group
// holds both gateways (sorted as istiod sorts them), each with half the
// zone's weight (scaled by the LCM of gateway counts, 2).
func TestPredictLocalitiesSeveralGateways(t *testing.T) {
	gws := append(append([]model.Gateway{}, seedGateways...), gw("network2", "cluster2", "192.168.60.8", 15443))
	eps := []ep{
		{cluster: "cluster1", network: "network1", ip: "10.44.0.13", pod: "a", locality: "r1/z1/"},
		{cluster: "cluster2", network: "network2", ip: "10.144.0.15", pod: "b", locality: "r2/zb/"},
		{cluster: "cluster2", network: "network2", ip: "10.144.0.16", pod: "c", locality: "r2/zc/"},
		{cluster: "cluster2", network: "network2", ip: "10.144.0.17", pod: "d", locality: "r2/zc/"},
	}
	p := Predict(mesh(gws, eps), hello, 5000, Proxy{Cluster: "cluster1", Network: "network1"})
	want := "[r1/z1 lw=2 p=0: 10.44.0.13:5000 w=2 50%] [r2/zb lw=2 p=0: 192.168.60.8:15443 w=1 25%, 192.168.60.9:15443 w=1 25%] " +
		"[r2/zc lw=4 p=0: 192.168.60.8:15443 w=2 0% shadowed, 192.168.60.9:15443 w=2 0% shadowed]"
	if got := groups(p); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if n := len(p.Endpoints[4].StandsFor); n != 2 || p.Endpoints[4].StandsFor[1].Pod != "d" {
		t.Errorf("the zc gateway entry stands for c and d: %+v", p.Endpoints[4].StandsFor)
	}
}
