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

// TestDiffSnapshotsGatewayName: a gateway DNS name's new answer shows as
// gateways gone and up, each naming the DNS name it came from.
func TestDiffSnapshotsGatewayName(t *testing.T) {
	g := func(addr string) Gateway {
		return Gateway{Network: "network2", Cluster: "cluster2", Address: addr, Port: 15443, Name: "gw2.example.test"}
	}
	prev := &Snapshot{Gateways: []Gateway{g("192.0.2.21"), g("192.0.2.22")}}
	next := &Snapshot{Gateways: []Gateway{g("192.0.2.23")}}
	var got []string
	for _, c := range DiffSnapshots(prev, next) {
		got = append(got, c.Summary())
	}
	want := []string{
		"gateway gone: network2 192.0.2.21:15443 (DNS name gw2.example.test)",
		"gateway gone: network2 192.0.2.22:15443 (DNS name gw2.example.test)",
		"gateway up: network2 192.0.2.23:15443 (DNS name gw2.example.test)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
