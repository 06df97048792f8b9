package gatewaydns

import (
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// fakeServer is a DNS server on loopback answering from a function.
func fakeServer(t *testing.T, answer func(q dns.Question) (rcode int, rrs []dns.RR, ns []dns.RR)) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, req *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(req)
		m.Rcode, m.Answer, m.Ns = answer(req.Question[0])
		_ = w.WriteMsg(m)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return pc.LocalAddr().String()
}

func rr(t *testing.T, s string) dns.RR {
	t.Helper()
	r, err := dns.NewRR(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// zone answers like a small authoritative server.
func zone(t *testing.T, records ...string) func(q dns.Question) (int, []dns.RR, []dns.RR) {
	var rrs []dns.RR
	for _, s := range records {
		rrs = append(rrs, rr(t, s))
	}
	return func(q dns.Question) (int, []dns.RR, []dns.RR) {
		var out []dns.RR
		known := false
		for _, r := range rrs {
			if strings.EqualFold(r.Header().Name, q.Name) {
				known = true
				if r.Header().Rrtype == q.Qtype || r.Header().Rrtype == dns.TypeCNAME {
					out = append(out, r)
				}
			}
		}
		// A CNAME's target records come with it, as a recursive server
		// gives them.
		for _, r := range out {
			if c, ok := r.(*dns.CNAME); ok {
				for _, r2 := range rrs {
					if strings.EqualFold(r2.Header().Name, c.Target) && r2.Header().Rrtype == q.Qtype {
						out = append(out, r2)
					}
				}
			}
		}
		if !known {
			return dns.RcodeNameError, nil, []dns.RR{rr(t, "example.test. 45 IN SOA ns.example.test. admin.example.test. 1 60 30 600 45")}
		}
		return dns.RcodeSuccess, out, nil
	}
}

func servfail(dns.Question) (int, []dns.RR, []dns.RR) { return dns.RcodeServerFailure, nil, nil }

func TestResolve(t *testing.T) {
	full := zone(t,
		"gw.example.test. 300 IN A 192.0.2.2",
		"gw.example.test. 60 IN A 192.0.2.1",
		"gw.example.test. 120 IN AAAA 2001:db8::1",
		"short.example.test. 5 IN A 192.0.2.9",
		"long.example.test. 86400 IN A 192.0.2.10",
		"long.example.test. 7200 IN AAAA 2001:db8::10",
		"aonly.example.test. 300 IN A 192.0.2.11",
		"alias.example.test. 100 IN CNAME gw.example.test.",
	)
	for _, tc := range []struct {
		name    string
		servers []func(dns.Question) (int, []dns.RR, []dns.RR)
		host    string
		want    []string
		ttl     time.Duration
		err     bool
	}{
		{"A and AAAA, sorted, smallest TTL", [](func(dns.Question) (int, []dns.RR, []dns.RR)){full}, "gw.example.test", []string{"192.0.2.1", "192.0.2.2", "2001:db8::1"}, 60 * time.Second, false},
		{"a TTL under 30 s is kept 30 s", [](func(dns.Question) (int, []dns.RR, []dns.RR)){full}, "short.example.test", []string{"192.0.2.9"}, MinTTL, false},
		{"a TTL over 1 h is kept 1 h", [](func(dns.Question) (int, []dns.RR, []dns.RR)){full}, "long.example.test", []string{"192.0.2.10", "2001:db8::10"}, maxTTL, false},
		// The empty AAAA answer (no SOA with it) counts as the fail-safe
		// 30 s, as in istiod's minimalTTL.
		{"an A-only name without SOA is kept 30 s", [](func(dns.Question) (int, []dns.RR, []dns.RR)){full}, "aonly.example.test", []string{"192.0.2.11"}, MinTTL, false},
		{"a CNAME's target addresses count", [](func(dns.Question) (int, []dns.RR, []dns.RR)){full}, "alias.example.test", []string{"192.0.2.1", "192.0.2.2", "2001:db8::1"}, 60 * time.Second, false},
		{"NXDOMAIN: no address, no error, the SOA's TTL", [](func(dns.Question) (int, []dns.RR, []dns.RR)){full}, "none.example.test", nil, 45 * time.Second, false},
		{"a failing server is skipped", [](func(dns.Question) (int, []dns.RR, []dns.RR)){servfail, full}, "gw.example.test", []string{"192.0.2.1", "192.0.2.2", "2001:db8::1"}, 60 * time.Second, false},
		{"NXDOMAIN from the first server: the next is asked", [](func(dns.Question) (int, []dns.RR, []dns.RR)){zone(t), full}, "gw.example.test", []string{"192.0.2.1", "192.0.2.2", "2001:db8::1"}, 60 * time.Second, false},
		{"every server fails: an error", [](func(dns.Question) (int, []dns.RR, []dns.RR)){servfail, servfail}, "gw.example.test", nil, MinTTL, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var servers []string
			for _, s := range tc.servers {
				servers = append(servers, fakeServer(t, s))
			}
			got := Client{Servers: servers, Timeout: time.Second}.Resolve(tc.host)
			if !slices.Equal(got.Addresses, tc.want) || got.TTL != tc.ttl || (got.Err != nil) != tc.err {
				t.Errorf("Resolve(%s) = %v TTL %s err %v, want %v TTL %s err %t", tc.host, got.Addresses, got.TTL, got.Err, tc.want, tc.ttl, tc.err)
			}
		})
	}
}

func TestResolvConf(t *testing.T) {
	p := t.TempDir() + "/resolv.conf"
	if err := writeFile(p, "search example.test\nnameserver 127.0.0.53\nnameserver ::1\noptions ndots:5\n"); err != nil {
		t.Fatal(err)
	}
	got, err := ResolvConf(p)
	if err != nil || !slices.Equal(got, []string{"127.0.0.53:53", "[::1]:53"}) {
		t.Errorf("ResolvConf = %v, %v", got, err)
	}
}
