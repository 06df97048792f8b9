package lab

import (
	"net"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/meshscope/meshscope/collector/gatewaydns"
)

// TestDNSHandler: the lab's DNS answers from its records file, read on
// every query, and gives istiod's resolver (meshscope's copy of it) what a
// real zone would.
func TestDNSHandler(t *testing.T) {
	path := filepath.Join(t.TempDir(), "records.json")
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: DNSHandler(path)}
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	c := gatewaydns.Client{Servers: []string{pc.LocalAddr().String()}, Timeout: time.Second}

	set := func(recs DNSRecords) {
		if err := writeDNSRecords(path, recs); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		recs  DNSRecords
		host  string
		want  []string
		ttl   time.Duration
		fails bool
	}{
		{"two A records", DNSRecords{"gw2.lab.test": {A: []string{"192.168.60.22", "192.168.60.21"}, TTL: 30}}, "gw2.lab.test", []string{"192.168.60.21", "192.168.60.22"}, 30 * time.Second, false},
		{"A and AAAA, a long TTL", DNSRecords{"gw2.lab.test": {A: []string{"192.168.60.21"}, AAAA: []string{"fd00::21"}, TTL: 120}}, "GW2.lab.test.", []string{"192.168.60.21", "fd00::21"}, 120 * time.Second, false},
		{"a changed file is read at once", DNSRecords{"gw2.lab.test": {A: []string{"192.168.60.23"}, TTL: 30}}, "gw2.lab.test", []string{"192.168.60.23"}, 30 * time.Second, false},
		{"an unknown name: NXDOMAIN", DNSRecords{}, "gw2.lab.test", nil, 30 * time.Second, false},
		{"outside the lab's zone: refused, never forwarded", DNSRecords{}, "example.com", nil, gatewaydns.MinTTL, false},
		{"SERVFAIL", DNSRecords{"gw2.lab.test": {ServFail: true}}, "gw2.lab.test", nil, gatewaydns.MinTTL, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set(tc.recs)
			got := c.Resolve(tc.host)
			if !slices.Equal(got.Addresses, tc.want) || got.TTL != tc.ttl || (got.Err != nil) != tc.fails {
				t.Errorf("Resolve(%s) = %v TTL %s err %v; want %v TTL %s fails %t", tc.host, got.Addresses, got.TTL, got.Err, tc.want, tc.ttl, tc.fails)
			}
		})
	}
}

func TestDNSIP(t *testing.T) {
	seen := map[string]int{}
	for _, off := range []int{0, 100, 300, 500, 700, 900, 1100, 5000} {
		ip := net.ParseIP(dnsIP(off))
		if ip == nil || !ip.IsLoopback() {
			t.Errorf("offset %d: %s is no loopback address", off, dnsIP(off))
		}
		if o, dup := seen[dnsIP(off)]; dup {
			t.Errorf("offsets %d and %d share %s", o, off, dnsIP(off))
		}
		seen[dnsIP(off)] = off
	}
}
