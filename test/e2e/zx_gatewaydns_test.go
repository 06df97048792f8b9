package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/istiod"
	"github.com/meshscope/meshscope/test/e2e/e2eutil"
)

// gw2Name is cluster2's east-west gateway's DNS name in this test (its
// load balancer has a hostname, as an AWS NLB's has).
const gw2Name = "gw2." + lab.LabDNSDomain

// TestGatewayDNSName (issue 23): cluster2's east-west gateway Service gets
// a load-balancer hostname instead of an IP. The real istiods resolve it
// with the lab's DNS (they run in a mount namespace whose resolv.conf names
// it) and meshscope resolves it with the same server; from every viewpoint
// explain's prediction equals what istiod sends, and doctor shows the
// name and its addresses (istiod's, from /debug/networkz). Then the DNS
// answer changes to one address, and then the name stops resolving: after
// the TTL istiod and meshscope both move, and doctor reports the leak the
// unresolvable name causes. explain's WHY names the gateway's name next to
// each address; the UI, running through both changes, shows each new
// answer as a dns entry on its timeline and the EDS push of cluster1's
// istiod at the name's addresses with that answer as its cause. It
// restarts the istiods twice (to and from the lab's DNS), so it runs with
// the doctor tests.
func TestGatewayDNSName(t *testing.T) {
	ctx := context.Background()
	e2eutil.LabDNS(t, theLab)
	two := &lab.DNSRecord{A: []string{"192.168.60.21", "192.168.60.22"}, TTL: 30}
	if err := theLab.SetDNS(gw2Name, two); err != nil {
		t.Fatal(err)
	}
	gw2IP := theLab.Cluster("cluster2").GatewayIP
	withChange(t,
		func() error {
			return theLab.SetGatewayHostname(ctx, "cluster2", lab.SystemNamespace, lab.GatewayService, gw2Name)
		},
		func() error {
			return theLab.SetGatewayIngress(ctx, "cluster2", lab.SystemNamespace, lab.GatewayService, gw2IP)
		})

	reg, err := collector.NewRegistry(collector.Options{Kubeconfig: theLab.Kubeconfig, Contexts: []string{"cluster1"}, SyncTimeout: 20 * time.Second,
		GatewayDNSServers: []string{theLab.DNSServer()}})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = reg.Run(rctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	vps, probes := threeViewProbes(t)

	// matches waits until istiod sends want from each viewpoint and the
	// prediction of meshscope's snapshot equals it, and returns the time
	// it took and that snapshot.
	matches := func(what string, want [3]string, timeout time.Duration) (time.Duration, *model.Snapshot) {
		t.Helper()
		start := time.Now()
		var snap *model.Snapshot
		eventually(t, timeout, func() string {
			snap = reg.Snapshot()
			for i, vp := range vps {
				la, ok := probes[i].c.LoadAssignment(helloworldEDS)
				if !ok {
					return vp.String() + ": no EDS yet"
				}
				if got := strings.Join(probes[i].eds(helloworldEDS), ","); got != want[i] {
					return fmt.Sprintf("%s: %s: istiod sends %s, want %s", what, vp, got, want[i])
				}
				v := explain.Explain(snap, "helloworld.sample.svc.cluster.local", 5000, vp, "cluster1", &la)
				if v.Verdict != explain.Match {
					return fmt.Sprintf("%s: %s: verdict %s: %+v", what, vp, v.Verdict, v.Differences)
				}
			}
			return ""
		})
		took := time.Since(start)
		t.Logf("%s: istiod and meshscope agree after %s", what, took.Round(100*time.Millisecond))
		return took, snap
	}
	views := func() []istiod.View {
		var out []istiod.View
		for _, is := range theLab.Istiods() {
			v, err := is.View(ctx)
			if err != nil {
				t.Fatalf("istiod %s: %v", is.Cluster, err)
			}
			out = append(out, v)
		}
		return out
	}

	// Two A records: one gateway entry per address. With two gateways for
	// network2 istiod scales every weight by 2 (the LCM of gateway counts).
	_, snap := matches("two A records", [3]string{
		"10.44.0.13:5000 w=2,192.168.60.21:15443 w=1,192.168.60.22:15443 w=1",
		"10.144.0.15:5000 w=2,192.168.60.113:15443 w=2",
		"192.168.60.113:15443 w=2,192.168.60.21:15443 w=1,192.168.60.22:15443 w=1",
	}, 60*time.Second)
	ps := explain.Diagnose(snap, explain.Inputs{Istiod: views()})
	if explain.HasErrors(ps) {
		t.Errorf("doctor finds errors with a resolving gateway name: %+v", ps)
	}
	if why := absent(ps, "leak"); why != "" {
		t.Error(why)
	}
	for _, cp := range []string{"cluster1", "cluster2"} {
		if _, why := problemOf(ps, string(model.ProblemGatewayHostname), model.SeverityInfo,
			"istiod ("+cp+") resolves gateway "+gw2Name+" of network2", "192.168.60.21, 192.168.60.22", "/debug/networkz", "meshscope's own answer is the same"); why != "" {
			t.Error(why)
		}
	}
	// The binary, as a user runs it: doctor reads istiod's view by
	// port-forward and says what istiod resolved; explain matches.
	args := []string{"--context", "cluster1", "--gateway-dns-server", theLab.DNSServer()}
	eventually(t, 60*time.Second, func() string {
		ps, code := doctorJSON(t, args...)
		if code != 0 {
			return fmt.Sprintf("doctor exit %d: %+v", code, ps)
		}
		_, why := problemOf(ps, string(model.ProblemGatewayHostname), model.SeverityInfo, gw2Name, "192.168.60.21, 192.168.60.22")
		return why
	})
	out, _ := runMeshscope(t, append([]string{"snapshot"}, args...)...)
	for _, x := range []string{gw2Name + " → 192.168.60.21:15443", gw2Name + " → 192.168.60.22:15443", "gateway name " + gw2Name + ": 192.168.60.21, 192.168.60.22 (resolved from where meshscope runs, TTL 30s)"} {
		if !strings.Contains(out, x) {
			t.Errorf("snapshot lacks %q:\n%s", x, out)
		}
	}
	out, code := runMeshscope(t, append([]string{"explain", "helloworld.sample", "--all-views", "--xds-address", xdsAll(), "--istiod-debug-address", debugAll()}, args...)...)
	t.Logf("explain:\n%s", out)
	if code != 0 || strings.Count(out, ": MATCH") < 3 {
		t.Errorf("explain exit %d, want every view to match", code)
	}
	if !strings.Contains(out, "gateway "+gw2Name+" of network2: predicted with 192.168.60.21, 192.168.60.22, as istiod resolves it (its /debug/networkz)") {
		t.Errorf("explain does not say whose addresses it predicted with")
	}
	// Its WHY names the gateway's name next to each address.
	for _, a := range []string{"192.168.60.21", "192.168.60.22"} {
		if !strings.Contains(out, "go through gateway "+gw2Name+" ("+a+") of network2: network2 is not the proxy's network network1") ||
			!strings.Contains(out, "go through gateway "+gw2Name+" ("+a+") of network2 (istiod forceGateway)") {
			t.Errorf("explain's WHY does not name %s (%s)", gw2Name, a)
		}
	}

	// meshscope asks a DNS server that answers otherwise (resolvers that
	// differ): where istiod's view is read, explain and doctor predict
	// with the addresses istiod resolved, and doctor says the two differ.
	other := otherDNS(t, lab.DNSRecords{gw2Name: {A: []string{"192.168.60.29"}, TTL: 30}})
	argsOther := []string{"--context", "cluster1", "--gateway-dns-server", other, "--istiod-debug-address", debugAll(), "--xds-address", xdsAll()}
	out, code = runMeshscope(t, append([]string{"explain", "helloworld.sample", "--all-views"}, argsOther...)...)
	if code != 0 || strings.Count(out, ": MATCH") < 3 ||
		!strings.Contains(out, "predicted with istiod's addresses (its /debug/networkz) 192.168.60.21, 192.168.60.22 — meshscope resolved 192.168.60.29 from where it runs") {
		t.Errorf("explain with another resolver: exit %d:\n%s", code, out)
	}
	ps, _ = doctorJSON(t, argsOther...)
	if _, why := problemOf(ps, string(model.ProblemGatewayHostname), model.SeverityWarning,
		"istiod (cluster1) resolves gateway "+gw2Name, "to 192.168.60.21, 192.168.60.22 (its /debug/networkz), but meshscope resolved it from where it runs to 192.168.60.29"); why != "" {
		t.Error(why)
	}
	for _, kind := range []model.ProblemKind{model.ProblemXDSDiffers, model.ProblemLeak, model.ProblemIstiodDisagrees} {
		if why := absent(ps, string(kind)); why != "" {
			t.Errorf("with another resolver: %s", why)
		}
	}

	// istiod cluster1 with RESOLVE_HOSTNAME_GATEWAYS=false (its pod's env,
	// where meshscope reads it): it drops the named gateway, network2's
	// pod IP leaks to its network1 proxies, and meshscope predicts so.
	if err := theLab.SetIstiodEnv(ctx, 0, []string{model.SettingResolveHostnameGateways + "=false"}); err != nil {
		t.Fatal(err)
	}
	_, snap = matches("istiod cluster1 does not resolve names", [3]string{"10.144.0.15:5000 w=1,10.44.0.13:5000 w=1", seedEDSNetwork2, seedEDSNetwork2}, 60*time.Second)
	ps = explain.Diagnose(snap, explain.Inputs{})
	if _, why := problemOf(ps, string(model.ProblemGatewayHostname), model.SeverityWarning,
		"istiod (cluster1) does not resolve gateway names (RESOLVE_HOSTNAME_GATEWAYS=false, istiod pod)", "it drops gateway "+gw2Name); why != "" {
		t.Error(why)
	}
	if err := theLab.SetIstiodEnv(ctx, 0, nil); err != nil {
		t.Fatal(err)
	}
	matches("istiod cluster1 resolves names again", [3]string{
		"10.44.0.13:5000 w=2,192.168.60.21:15443 w=1,192.168.60.22:15443 w=1",
		"10.144.0.15:5000 w=2,192.168.60.113:15443 w=2",
		"192.168.60.113:15443 w=2,192.168.60.21:15443 w=1,192.168.60.22:15443 w=1",
	}, 60*time.Second)

	// The UI, started before the DNS changes, records each change of the
	// answer and the pushes it causes (below).
	ts := startTUI(t, "meshscope-e2e-dns", 200, "--kubeconfig", theLab.Kubeconfig, "--context", "cluster1", "--gateway-dns-server", theLab.DNSServer())
	ts.WaitScreen("both clusters synced and both streams up", 60*time.Second, func(s string) bool {
		return strings.Contains(s, "2 of 2 synced") && strings.Contains(s, "xds 2/2 up")
	})
	ts.Keys(":events", "Enter")
	ts.Keys("/")
	ts.Keys(gw2Name, "Enter")
	// pushCaused waits until the events view, filtered to the name, shows
	// the name's new answer as a dns entry and more EDS pushes from
	// cluster1's istiod linked to a DNS answer ("← gw2.lab.test ±Nms")
	// than before; with the newest entry selected (g), the detail pane says
	// the whole answer — the dns entry's own, or the cause of its push.
	linked := 0
	pushCaused := func(what, row, answer string) {
		t.Helper()
		count := func(s string) int {
			n := 0
			for _, l := range strings.Split(s, "\n") {
				if strings.Contains(l, " eds ") && strings.Contains(l, "← "+gw2Name+" ") && strings.Contains(l, "cluster1") {
					n++
				}
			}
			return n
		}
		var s string
		for deadline := time.Now().Add(90 * time.Second); ; {
			ts.Keys("g")
			s = ts.Screen()
			if strings.Contains(s, " dns ") && strings.Contains(s, row) && strings.Contains(s, answer) && count(s) > linked {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the UI's timeline should show the DNS answer and the push it caused; the screen is:\n%s", what, s)
			}
		}
		linked = count(s)
		t.Logf("%s: the UI's events view:\n%s", what, s)
	}

	// One A record: after the TTL (istiod keeps an answer at least 30 s)
	// istiod pushes one gateway entry, and meshscope follows.
	if err := theLab.SetDNS(gw2Name, &lab.DNSRecord{A: []string{"192.168.60.23"}, TTL: 30}); err != nil {
		t.Fatal(err)
	}
	took, snap := matches("one A record", [3]string{seedEDSNetwork1Via("192.168.60.23"), seedEDSNetwork2, "192.168.60.113:15443 w=1,192.168.60.23:15443 w=1"}, 90*time.Second)
	pushCaused("one A record", gw2Name+": 192.168.60.23 (was 192.168.60.21", "gateway name "+gw2Name+" of network2: 192.168.60.23 (was 192.168.60.21, 192.168.60.22)")
	if took > 75*time.Second {
		t.Errorf("the change took %s: more than two TTLs", took)
	}
	if _, why := problemOf(explain.Diagnose(snap, explain.Inputs{}), string(model.ProblemGatewayHostname), model.SeverityInfo,
		"gateway name "+gw2Name+" changed", "from 192.168.60.21, 192.168.60.22 to 192.168.60.23"); why != "" {
		t.Error(why)
	}

	// No such name: istiod drops the gateway, network2's pod IP leaks to
	// network1; meshscope predicts it and doctor says why.
	if err := theLab.SetDNS(gw2Name, nil); err != nil {
		t.Fatal(err)
	}
	_, snap = matches("a name that does not resolve", [3]string{"10.144.0.15:5000 w=1,10.44.0.13:5000 w=1", seedEDSNetwork2, seedEDSNetwork2}, 90*time.Second)
	pushCaused("a name that does not resolve", gw2Name+": does not resolve (was 192.168.60.23)", "gateway name "+gw2Name+" of network2: does not resolve (was 192.168.60.23)")
	ts.Quit()
	ps = explain.Diagnose(snap, explain.Inputs{Istiod: views()})
	if _, why := problemOf(ps, string(model.ProblemGatewayHostname), model.SeverityError,
		"istiod (cluster1) has no address for gateway "+gw2Name, "does not resolve for istiod", "it does not resolve from where meshscope runs"); why != "" {
		t.Error(why)
	}
	if _, why := problemOf(ps, "leak", model.SeverityError); why != "" {
		t.Logf("leak not reported as an error: %s", why)
	}
}

// otherDNS is a DNS server on loopback, apart from the lab's, answering
// recs; it returns its address.
func otherDNS(t *testing.T, recs lab.DNSRecords) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "records.json")
	b, err := json.Marshal(recs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: lab.DNSHandler(path)}
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return pc.LocalAddr().String()
}

// seedEDSNetwork1Via is network1's seed EDS with network2's gateway at gw.
func seedEDSNetwork1Via(gw string) string { return "10.44.0.13:5000 w=1," + gw + ":15443 w=1" }
