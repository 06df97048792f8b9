package ambient

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/test/e2e/e2eutil"
)

// gw2Name is cluster2's ambient east-west gateway's DNS name in this test.
const gw2Name = "gw2." + lab.LabDNSDomain

// TestAmbientGatewayDNSName (issue 23): cluster2's east-west Gateway's
// status address is a DNS name (type Hostname, as an AWS NLB gives) that
// the lab's DNS answers, and the istiods run with the lab's DNS as their
// resolver, as in the sidecar test. In ambient mode istiod does not resolve
// the name: whether it has two A records, one, or none, istiod for cluster1
// sends its ztunnels the split-horizon workload behind
// istio-system/gw2.lab.test:15008 and the gateway workload with the name as
// its hostname and no address; meshscope's prediction equals what each
// istiod sends, and a change of the DNS answer pushes nothing. It restarts
// the istiods twice (to and from the lab's DNS), so it runs last.
func TestAmbientGatewayDNSName(t *testing.T) {
	ctx := context.Background()
	e2eutil.LabDNS(t, theLab)
	if err := theLab.SetDNS(gw2Name, &lab.DNSRecord{A: []string{"192.168.60.21", "192.168.60.22"}, TTL: 30}); err != nil {
		t.Fatal(err)
	}
	gwIP := lab.AmbientGatewayIP("cluster2")
	t.Cleanup(func() { _ = theLab.SetAmbientGatewayAddresses(ctx, "cluster2", gwIP) })
	if err := theLab.SetAmbientGatewayAddresses(ctx, "cluster2", gw2Name); err != nil {
		t.Fatal(err)
	}
	m := startMesh(t, func(o *collector.Options) { o.GatewayDNSServers = []string{theLab.DNSServer()} })

	shUID := "network2/SplitHorizonWorkload/istio-system/" + lab.AmbientGateway + "/" + gw2Name + "/" + helloKey
	gwUID := "NetworkGateway/network2/" + gw2Name + "/0"
	want := map[string]struct{ sh, gw, gwWorkload string }{
		// cluster1's istiod: network2's gateway by name, unresolved.
		"cluster1": {shUID, "istio-system/" + gw2Name + ":15008", gwUID + " host=" + gw2Name + " addrs="},
		// cluster2's istiod: network1's gateway, an IP, as before.
		"cluster2": {"network1/SplitHorizonWorkload/istio-system/" + lab.AmbientGateway + "/" + lab.AmbientGatewayIP("cluster1") + "/" + helloKey,
			lab.AmbientGatewayIP("cluster1") + ":15008",
			"NetworkGateway/network1/" + lab.AmbientGatewayIP("cluster1") + "/0 host= addrs=" + lab.AmbientGatewayIP("cluster1")},
	}
	// views checks every ztunnel view against istiod's /debug/ambientz and
	// the prediction, and the split-horizon and gateway workloads against
	// want.
	views := func(what string, timeout time.Duration) {
		t.Helper()
		for _, z := range m.ztunnels {
			eventually(t, timeout, func() string {
				for _, key := range []string{helloKey, sleepKey} {
					if why, _ := m.agree(z, key); why != "" {
						return what + ": " + why
					}
				}
				_, p := m.agree(z, helloKey)
				sh := splitHorizons(p)
				w := want[z.cp]
				if len(sh) != 1 || sh[0].UID != w.sh || sh[0].Gateway != w.gw {
					return fmt.Sprintf("%s: %s: split-horizon workloads predicted %+v, want %s behind %s", what, z.cp, sh, w.sh, w.gw)
				}
				return m.gatewayWorkloadsAgree(z, w.gwWorkload)
			})
			t.Logf("%s: %s: meshscope's ztunnel, istiod's /debug/ambientz and the prediction agree: %s behind %s; %s", what, z.cp, want[z.cp].sh, want[z.cp].gw, want[z.cp].gwWorkload)
		}
	}
	views("two A records", 60*time.Second)
	if ps := ambientProblems(m.reg.Snapshot()); len(ps) != 0 {
		t.Errorf("the ambient lab with a gateway named by DNS has problems: %+v", ps)
	}
	// doctor says what the name resolves to from where meshscope runs
	// (ztunnels resolve it themselves), and warns once it does not.
	nameProblem := func(sev model.Severity, text string) {
		t.Helper()
		eventually(t, 60*time.Second, func() string {
			var seen []string
			for _, p := range explain.Diagnose(m.reg.Snapshot(), explain.Inputs{}) {
				if p.Kind != model.ProblemGatewayHostname {
					continue
				}
				if p.Severity == sev && strings.Contains(p.Sentence, gw2Name) && strings.Contains(p.Sentence, text) {
					t.Logf("doctor: %s: %s", p.Severity, p.Sentence)
					return ""
				}
				seen = append(seen, string(p.Severity)+": "+p.Sentence)
			}
			return fmt.Sprintf("no %s gateway-hostname saying %q; have %q", sev, text, seen)
		})
	}
	nameProblem(model.SeverityInfo, "resolves to 192.168.60.21, 192.168.60.22")

	// One A record, then a name that does not resolve: istiod keeps
	// sending the name. Past the TTL (istiod keeps an answer at least
	// 30 s) a resolving istiod would have moved; this one pushes nothing
	// about the gateway.
	steps := []struct {
		what string
		rec  *lab.DNSRecord
	}{
		{"one A record", &lab.DNSRecord{A: []string{"192.168.60.23"}, TTL: 30}},
		{"a name that does not resolve", nil},
	}
	for _, st := range steps {
		counts := map[string]int{}
		for _, z := range m.ztunnels {
			counts[z.cp] = z.count()
		}
		if err := theLab.SetDNS(gw2Name, st.rec); err != nil {
			t.Fatal(err)
		}
		time.Sleep(40 * time.Second)
		views(st.what, 30*time.Second)
		if st.rec == nil {
			nameProblem(model.SeverityWarning, "it does not resolve from where meshscope runs")
		}
		for _, z := range m.ztunnels {
			for _, e := range z.eventsSince(counts[z.cp]) {
				for _, a := range e.Addresses {
					if a.Name == shUID || a.Name == gwUID {
						t.Errorf("%s: %s pushed a change of %s: %+v", st.what, z.cp, a.Name, a)
					}
				}
			}
		}
	}
}

// gatewayWorkloadsAgree holds istiod's gateway workload of a ztunnel's view
// (want: "UID host=NAME addrs=IPS") against what meshscope's ztunnel holds,
// istiod's /debug/ambientz and the prediction ("" when all agree).
func (m *mesh) gatewayWorkloadsAgree(z *ztunnel, want string) string {
	uid, _, _ := strings.Cut(want, " ")
	line := func(uid, host string, addrs []string) string {
		return fmt.Sprintf("%s host=%s addrs=%s", uid, host, strings.Join(addrs, ","))
	}
	got := map[string]string{}
	if a, ok := z.c.Address(uid); ok && a.Workload != nil {
		got["meshscope's ztunnel"] = line(uid, a.Workload.Hostname, a.Workload.Addresses)
	}
	az, err := fetchAmbientz(z.is)
	if err != nil {
		return err.Error()
	}
	for _, w := range az.Workloads {
		if w.UID == uid {
			var addrs []string
			for _, a := range w.Addresses {
				addrs = append(addrs, debugIP(a))
			}
			got["istiod's /debug/ambientz"] = line(uid, w.Hostname, addrs)
		}
	}
	for _, w := range plane.NewSet(m.reg.Snapshot(), nil).Of(z.cp).Ambient().GatewayWorkloads() {
		if w.UID == uid {
			got["the prediction"] = line(uid, w.Hostname, w.Addresses)
		}
	}
	var bad []string
	for _, who := range []string{"meshscope's ztunnel", "istiod's /debug/ambientz", "the prediction"} {
		if got[who] != want {
			bad = append(bad, fmt.Sprintf("%s has %q", who, got[who]))
		}
	}
	if len(bad) > 0 {
		return fmt.Sprintf("%s: gateway workload, want %q: %s", z.cp, want, strings.Join(bad, "; "))
	}
	return ""
}
