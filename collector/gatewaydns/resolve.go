package gatewaydns

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// istiod's bounds on how long an answer is kept (MinGatewayTTL,
// MaxGatewayTTL): a shorter TTL would push too often; the upper bound is
// CoreDNS's.
const (
	MinTTL = 30 * time.Second
	maxTTL = time.Hour
)

// Client asks DNS servers the way istiod's dnsClient does.
type Client struct {
	// Servers are host:port, asked in order.
	Servers []string
	// Timeout bounds each dial, read and write (istiod: 5 s).
	Timeout time.Duration
}

// ResolvConf are the servers of a resolv.conf file, as istiod reads
// /etc/resolv.conf (dns.ClientConfigFromFile, port 53 unless stated).
func ResolvConf(path string) ([]string, error) {
	cfg, err := dns.ClientConfigFromFile(path)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(cfg.Servers))
	for _, s := range cfg.Servers {
		out = append(out, net.JoinHostPort(s, cfg.Port))
	}
	return out, nil
}

// answer is what one resolution gives.
type answer struct {
	Addresses []string
	TTL       time.Duration
	// Err: both queries failed; Addresses is then empty and TTL MinTTL.
	Err error
}

// Resolve asks for the A and AAAA records of name at once and merges the
// answers (network.go resolve): every A and AAAA record of the answer
// section counts, whatever its owner name (a CNAME chain's target
// included); the TTL is the smallest of both answers, bounded by
// MinTTL..MaxTTL; it fails only when both queries fail.
func (c Client) Resolve(name string) answer {
	ttl := maxTTL
	var out []string
	var errs []error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, qt := range []uint16{dns.TypeA, dns.TypeAAAA} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := c.query(new(dns.Msg).SetQuestion(dns.Fqdn(name), qt))
			mu.Lock()
			defer mu.Unlock()
			if res.Rcode == dns.RcodeServerFailure {
				errs = append(errs, fmt.Errorf("no DNS server answered the %s query for %s", dns.TypeToString[qt], name))
				return
			}
			for _, rr := range res.Answer {
				switch r := rr.(type) {
				case *dns.A:
					out = append(out, r.A.String())
				case *dns.AAAA:
					out = append(out, r.AAAA.String())
				}
			}
			ttl = min(ttl, minimalTTL(res))
		}()
	}
	wg.Wait()
	sort.Strings(out)
	if len(errs) == 2 {
		return answer{Addresses: out, TTL: MinTTL, Err: errors.Join(errs...)}
	}
	return answer{Addresses: out, TTL: max(ttl, MinTTL)}
}

// query tries each server in order (dnsClient.Query): a server failure or
// no answer moves to the next server; another error code (NXDOMAIN) is
// kept but the next server is still asked; success stops. No answer at all
// is a server failure.
func (c Client) query(req *dns.Msg) *dns.Msg {
	t := c.Timeout
	if t == 0 {
		t = 5 * time.Second
	}
	cl := &dns.Client{DialTimeout: t, ReadTimeout: t, WriteTimeout: t}
	var response *dns.Msg
	for _, server := range c.Servers {
		res, _, err := cl.Exchange(req, server)
		rcode := dns.RcodeServerFailure
		if err == nil && res != nil {
			rcode = res.Rcode
		}
		if rcode == dns.RcodeServerFailure {
			continue
		}
		response = res
		if rcode == dns.RcodeSuccess {
			break
		}
	}
	if response == nil {
		response = new(dns.Msg)
		response.SetReply(req)
		response.Rcode = dns.RcodeServerFailure
	}
	return response
}

// minimalTTL is the smallest TTL of a response's records, OPT aside
// (CoreDNS's dnsutil.MinimalTTL, which istiod copies); MinTTL for an
// empty response, as a fail-safe.
func minimalTTL(m *dns.Msg) time.Duration {
	if len(m.Answer)+len(m.Ns) == 0 &&
		(len(m.Extra) == 0 || (len(m.Extra) == 1 && m.Extra[0].Header().Rrtype == dns.TypeOPT)) {
		return MinTTL
	}
	ttl := maxTTL
	for _, sec := range [][]dns.RR{m.Answer, m.Ns, m.Extra} {
		for _, r := range sec {
			if r.Header().Rrtype == dns.TypeOPT {
				continue // its TTL field holds flags
			}
			ttl = min(ttl, time.Duration(r.Header().Ttl)*time.Second)
		}
	}
	return ttl
}
