package xdsclient

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestDiffEndpoints(t *testing.T) {
	local := Endpoint{Address: "10.44.0.13", Port: 5000, Weight: 1, Health: "HEALTHY"}
	gw := Endpoint{Address: "192.168.60.9", Port: 15443, Weight: 1, TLSMode: "istio", Workload: Workload{Cluster: "cluster2"}}
	old := LoadAssignment{Cluster: helloEDS, Endpoints: []Endpoint{local, gw}}

	gw3 := gw
	gw3.Weight = 3
	unhealthy := local
	unhealthy.Health = "UNHEALTHY"
	newEp := Endpoint{Address: "10.44.0.20", Port: 5000, Weight: 1}
	cur := LoadAssignment{Cluster: helloEDS, Endpoints: []Endpoint{unhealthy, gw3, newEp}}

	got := diffEndpoints(old, cur)
	want := []string{
		"changed 10.44.0.13:5000 w1",
		"weight 192.168.60.9:15443 w3 (was 1) cluster2",
		"added 10.44.0.20:5000 w1",
	}
	if s := changesString(got); s != strings.Join(want, "\n") {
		t.Errorf("diff:\n%s\nwant:\n%s", s, strings.Join(want, "\n"))
	}
	// Removal comes first; an identical state is no change.
	got = diffEndpoints(cur, LoadAssignment{Cluster: helloEDS, Endpoints: []Endpoint{gw3}})
	if s := changesString(got); s != "removed 10.44.0.13:5000 w1\nremoved 10.44.0.20:5000 w1" {
		t.Errorf("removal diff:\n%s", s)
	}
	if got := diffEndpoints(cur, cur); len(got) != 0 {
		t.Errorf("identical: %v", got)
	}
}

// A gateway sent once per locality: the nth copy in one push matches the
// nth in the next, even when the order changes.
func TestDiffEndpointsDuplicateAddress(t *testing.T) {
	local := Endpoint{Address: "10.44.0.13", Port: 5000, Weight: 1}
	gwA := Endpoint{Address: "192.168.60.9", Port: 15443, Weight: 1, Locality: Locality{Zone: "a"}, Workload: Workload{Cluster: "cluster2"}}
	gwB := gwA
	gwB.Locality.Zone, gwB.Weight = "b", 2
	old := LoadAssignment{Cluster: helloEDS, Endpoints: []Endpoint{local, gwA, gwB}}
	gwB3 := gwB
	gwB3.Weight = 3
	cur := LoadAssignment{Cluster: helloEDS, Endpoints: []Endpoint{gwA, gwB3}}
	if s := changesString(diffEndpoints(old, cur)); s != "removed 10.44.0.13:5000 w1\nweight 192.168.60.9:15443 w3 (was 2) cluster2" {
		t.Errorf("diff:\n%s", s)
	}
	if got := diffEndpoints(cur, LoadAssignment{Cluster: helloEDS, Endpoints: []Endpoint{local, gwA, gwB3}}); len(got) != 1 || got[0].Change != EndpointAdded {
		t.Errorf("re-added local: %+v", got)
	}
}

func changesString(cs []EndpointChange) string {
	var lines []string
	for _, c := range cs {
		s := fmt.Sprintf("%s %s:%d w%d", c.Change, c.Address, c.Port, c.Weight)
		if c.OldWeight != 0 {
			s += fmt.Sprintf(" (was %d)", c.OldWeight)
		}
		if c.WorkloadCluster != "" {
			s += " " + c.WorkloadCluster
		}
		lines = append(lines, s)
	}
	return strings.Join(lines, "\n")
}

func TestParseWorkload(t *testing.T) {
	cases := map[string]Workload{
		"helloworld-v1-abc;sample;helloworld;v1;cluster1": {Name: "helloworld-v1-abc", Namespace: "sample", Service: "helloworld", Revision: "v1", Cluster: "cluster1"},
		";;;;cluster2": {Cluster: "cluster2"},
		"pod;ns":       {Name: "pod", Namespace: "ns"},
		"":             {},
	}
	for in, want := range cases {
		if got := parseWorkload(in); got != want {
			t.Errorf("%q: %+v", in, got)
		}
	}
	if !(Endpoint{Workload: Workload{Cluster: "c"}}).Gateway() || (Endpoint{Workload: Workload{Name: "p", Cluster: "c"}}).Gateway() {
		t.Error("Gateway()")
	}
}

func TestJournal(t *testing.T) {
	j := newJournal[int](3)
	for i := 1; i <= 2; i++ {
		j.add(i)
	}
	if got := fmt.Sprint(j.items()); got != "[1 2]" || j.droppedCount() != 0 {
		t.Errorf("items = %s dropped %d", got, j.droppedCount())
	}
	for i := 3; i <= 7; i++ {
		j.add(i)
	}
	if got := fmt.Sprint(j.items()); got != "[5 6 7]" || j.len() != 3 || j.totalAdded() != 7 || j.droppedCount() != 4 {
		t.Errorf("items = %s len %d total %d dropped %d", got, j.len(), j.totalAdded(), j.droppedCount())
	}
}

func TestBackoff(t *testing.T) {
	b := Backoff{Initial: 100 * time.Millisecond, Max: time.Second}
	for n := 1; n <= 10; n++ {
		base := min(100*time.Millisecond<<(n-1), time.Second)
		for i := 0; i < 50; i++ {
			d := b.Delay(n)
			if d < base/2 || d > base {
				t.Fatalf("attempt %d: delay %s outside [%s, %s]", n, d, base/2, base)
			}
		}
	}
	// Jitter: not always the same value.
	seen := map[time.Duration]bool{}
	for i := 0; i < 20; i++ {
		seen[b.Delay(5)] = true
	}
	if len(seen) < 2 {
		t.Error("no jitter")
	}
}

func TestDescribe(t *testing.T) {
	addr := "127.0.0.1:15010"
	cases := map[string]error{
		"connection refused":     status.Error(codes.Unavailable, "connection error: desc = \"transport: Error while dialing: dial tcp 127.0.0.1:15010: connect: connection refused\""),
		"not ready yet":          status.Error(codes.Unavailable, "server is not ready to serve discovery information"),
		"rejected this identity": status.Error(codes.Unauthenticated, "authentication failure"),
		"no answer":              errDialTimeout,
		"TLS":                    errors.New("transport: authentication handshake failed: x509: certificate signed by unknown authority"),
		"ADS variant":            status.Error(codes.Unimplemented, "unknown service"),
	}
	for want, err := range cases {
		if got := describe(err, addr, time.Second); !strings.Contains(got, want) {
			t.Errorf("%v: %q lacks %q", err, got, want)
		}
	}
}

// TestDiffEndpointsReordered: same endpoints in another order are no change;
// a same-length list with one endpoint swapped is a removal and an addition.
func TestDiffEndpointsReordered(t *testing.T) {
	a := Endpoint{Address: "10.0.0.1", Port: 80, Weight: 1}
	b := Endpoint{Address: "10.0.0.2", Port: 80, Weight: 1}
	c := Endpoint{Address: "10.0.0.3", Port: 80, Weight: 2}
	if got := diffEndpoints(LoadAssignment{Endpoints: []Endpoint{a, b}}, LoadAssignment{Endpoints: []Endpoint{b, a}}); len(got) != 0 {
		t.Errorf("reordered: %v", got)
	}
	got := diffEndpoints(LoadAssignment{Cluster: "x", Endpoints: []Endpoint{a, b}}, LoadAssignment{Cluster: "x", Endpoints: []Endpoint{c, a}})
	if s := changesString(got); s != "removed 10.0.0.2:80 w1\nadded 10.0.0.3:80 w2" {
		t.Errorf("swap:\n%s", s)
	}
}
