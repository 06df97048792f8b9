package lab

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/miekg/dns"
)

// The lab's DNS: gateway names (an AWS NLB's hostname in a real mesh) are
// answered by a small server of the lab's own (lab-dns, serveDNS below),
// on port 53 of a loopback address of its own — resolv.conf names no port
// — and istiod asks it because it runs in a mount namespace whose
// /etc/resolv.conf names that address (dnsns.go). Names and answers are a
// JSON file the server reads on every query, so a mutation is a file
// write and needs no reload.

// DNSRecord is what the lab's DNS answers for one name.
type DNSRecord struct {
	A    []string `json:"a,omitempty"`
	AAAA []string `json:"aaaa,omitempty"`
	// TTL in seconds (istiod keeps an answer at least 30 s).
	TTL uint32 `json:"ttl"`
	// ServFail answers SERVFAIL: a DNS server that cannot answer.
	ServFail bool `json:"servfail,omitempty"`
}

// DNSRecords are the lab DNS's names (without the trailing dot).
type DNSRecords map[string]DNSRecord

// LabDNSDomain is the zone the lab's names live in: names outside it are
// refused, so nothing is ever forwarded off the machine.
const LabDNSDomain = "lab.test"

// dnsIP is the loopback address of a lab's DNS server: one per port
// offset, so labs side by side each have their own port 53.
func dnsIP(offset int) string {
	return fmt.Sprintf("127.53.%d.%d", offset/250, offset%250+1)
}

func (l *Lab) dnsRecordsPath() string { return filepath.Join(l.cfg.Dir, "dns", "records.json") }

// DNSServer is the lab DNS's address (host:53), for meshscope's
// --gateway-dns-server.
func (l *Lab) DNSServer() string { return net.JoinHostPort(l.cfg.DNSIP, "53") }

// SetDNS makes the lab's DNS answer name with these records (nil: the
// name no longer exists, NXDOMAIN). istiod sees the change when its
// cached answer's TTL runs out.
func (l *Lab) SetDNS(name string, rec *DNSRecord) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	recs, err := readDNSRecords(l.dnsRecordsPath())
	if err != nil {
		return err
	}
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	if rec == nil {
		delete(recs, name)
	} else {
		recs[name] = *rec
	}
	return writeDNSRecords(l.dnsRecordsPath(), recs)
}

func readDNSRecords(path string) (DNSRecords, error) {
	recs := DNSRecords{}
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return recs, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &recs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return recs, nil
}

// writeDNSRecords replaces the file at once (rename), so the server never
// reads half of it.
func writeDNSRecords(path string, recs DNSRecords) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(recs, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// DNSHandler answers from the records file: A and AAAA of a known name;
// NXDOMAIN (with an SOA, as a real zone gives) for an unknown name of
// the lab's zone; REFUSED outside it.
func DNSHandler(recordsPath string) dns.HandlerFunc {
	return func(w dns.ResponseWriter, req *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(req)
		m.Authoritative = true
		if len(req.Question) != 1 {
			m.Rcode = dns.RcodeFormatError
			_ = w.WriteMsg(m)
			return
		}
		q := req.Question[0]
		name := strings.TrimSuffix(strings.ToLower(q.Name), ".")
		if name != LabDNSDomain && !strings.HasSuffix(name, "."+LabDNSDomain) {
			m.Rcode = dns.RcodeRefused
			_ = w.WriteMsg(m)
			return
		}
		recs, err := readDNSRecords(recordsPath)
		rec, ok := recs[name]
		switch {
		case err != nil || ok && rec.ServFail:
			m.Rcode = dns.RcodeServerFailure
		case !ok:
			m.Rcode = dns.RcodeNameError
			m.Ns = append(m.Ns, &dns.SOA{Hdr: dns.RR_Header{Name: LabDNSDomain + ".", Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 30},
				Ns: "ns." + LabDNSDomain + ".", Mbox: "admin." + LabDNSDomain + ".", Serial: 1, Refresh: 60, Retry: 30, Expire: 600, Minttl: 30})
		default:
			hdr := dns.RR_Header{Name: q.Name, Class: dns.ClassINET, Ttl: rec.TTL}
			switch q.Qtype {
			case dns.TypeA:
				for _, a := range rec.A {
					h := hdr
					h.Rrtype = dns.TypeA
					m.Answer = append(m.Answer, &dns.A{Hdr: h, A: net.ParseIP(a).To4()})
				}
			case dns.TypeAAAA:
				for _, a := range rec.AAAA {
					h := hdr
					h.Rrtype = dns.TypeAAAA
					m.Answer = append(m.Answer, &dns.AAAA{Hdr: h, AAAA: net.ParseIP(a)})
				}
			}
		}
		_ = w.WriteMsg(m)
	}
}
