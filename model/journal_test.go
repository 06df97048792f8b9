package model

import (
	"strings"
	"testing"
	"time"
)

func TestDiffSnapshots(t *testing.T) {
	ep := func(a string, ready bool) Endpoint { return Endpoint{Address: a, Ready: ready} }
	mk := func(eps []Endpoint, gws ...Gateway) *Snapshot {
		return &Snapshot{Time: time.Unix(100, 0), Gateways: gws, Services: []*Service{{Hostname: "helloworld.sample.svc.cluster.local",
			Clusters: map[string]*ServiceInCluster{"cluster2": {Cluster: "cluster2", Endpoints: eps}}}}}
	}
	g9 := Gateway{Network: "network2", Cluster: "cluster2", Address: "192.168.60.9", Port: 15443}
	prev := mk([]Endpoint{ep("10.144.0.15", true), ep("10.144.0.16", true)}, g9)
	next := mk([]Endpoint{ep("10.144.0.15", false), ep("10.144.0.20", true), ep("10.144.0.21", true)})
	cs := DiffSnapshots(prev, next)
	if len(cs) != 2 {
		t.Fatalf("changes %+v, want an endpoint change and a gateway gone", cs)
	}
	var sums []string
	for _, c := range cs {
		sums = append(sums, c.Summary())
	}
	got := strings.Join(sums, " | ")
	for _, want := range []string{"helloworld.sample: +10.144.0.20 +10.144.0.21, -10.144.0.16, unready 10.144.0.15", "gateway gone: network2 192.168.60.9:15443"} {
		if !strings.Contains(got, want) {
			t.Errorf("summaries %q lack %q", got, want)
		}
	}
	if DiffSnapshots(next, next) != nil {
		t.Error("no change should give no changes")
	}
	if DiffSnapshots(nil, next) != nil {
		t.Error("no previous snapshot: nothing to compare")
	}
}

// TestDiffSnapshotsGatewayName: a gateway DNS name's new answer is one
// change naming the name, its network and both answers — not one per
// address; a name that stops resolving (a hostname gateway, which istiod
// drops) and one that goes away say so.
func TestDiffSnapshotsGatewayName(t *testing.T) {
	g := func(addr string) Gateway {
		return Gateway{Network: "network2", Cluster: "cluster2", Address: addr, Port: 15443, Name: "gw2.example.test"}
	}
	unresolved := Gateway{Network: "network2", Cluster: "cluster2", Address: "gw2.example.test", Port: 15443, Hostname: true}
	ip := Gateway{Network: "network1", Cluster: "cluster1", Address: "192.0.2.113", Port: 15443}
	steps := []struct {
		prev, next []Gateway
		want       string
	}{
		{[]Gateway{ip}, []Gateway{ip, g("192.0.2.21"), g("192.0.2.22")}, "gateway name gw2.example.test of network2: 192.0.2.21, 192.0.2.22 (new)"},
		{[]Gateway{ip, g("192.0.2.21"), g("192.0.2.22")}, []Gateway{ip, g("192.0.2.23")}, "gateway name gw2.example.test of network2: 192.0.2.23 (was 192.0.2.21, 192.0.2.22)"},
		{[]Gateway{ip, g("192.0.2.23")}, []Gateway{ip, unresolved}, "gateway name gw2.example.test of network2: does not resolve (was 192.0.2.23)"},
		{[]Gateway{ip, unresolved}, []Gateway{ip}, "gateway name gw2.example.test of network2: no gateway has it any more"},
		{[]Gateway{ip, unresolved}, []Gateway{ip, g("192.0.2.24")}, "gateway name gw2.example.test of network2: 192.0.2.24 (did not resolve before)"},
		{[]Gateway{ip, g("192.0.2.23")}, []Gateway{ip, g("192.0.2.23")}, ""},
	}
	for _, st := range steps {
		var got []string
		for _, c := range DiffSnapshots(&Snapshot{Gateways: st.prev}, &Snapshot{Gateways: st.next}) {
			got = append(got, c.Summary())
			if !c.IsDNS() || c.Source() != "gw2.example.test" || c.Cluster != "cluster2" {
				t.Errorf("%s: %+v", c.Summary(), c)
			}
		}
		if strings.Join(got, "\n") != st.want {
			t.Errorf("got %q, want %q", got, st.want)
		}
	}
}
