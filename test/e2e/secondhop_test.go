package e2e

// The second hop against the lab's real istiods (multi-primary): for each
// failure the lab can express, the config each istiod really sends every
// east-west gateway pod (impersonated as a router with the pod's identity:
// LDS with the SNI chains, CDS, EDS) equals meshscope's prediction, and the
// hop of helloworld into network2 holds or breaks where meshscope says.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/live"
	"github.com/meshscope/meshscope/xdsclient"
)

const helloworldHost = "helloworld.sample.svc.cluster.local"

// gatewayDoc is cross-network-gateway with another selector, server port
// or hosts.
func gatewayDoc(selector string, port int, hosts string) string {
	return fmt.Sprintf(`apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: cross-network-gateway, namespace: istio-system}
spec:
  selector: {istio: %s}
  servers:
  - port: {number: %d, name: tls, protocol: TLS}
    tls: {mode: AUTO_PASSTHROUGH}
    hosts: [%q]
`, selector, port, hosts)
}

// subsetsRule declares helloworld's v1 and v2 subsets, exported to
// exportTo ("" for the default).
func subsetsRule(exportTo string) string {
	doc := `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: helloworld-versions, namespace: sample}
spec:
  host: helloworld
  subsets:
  - {name: v1, labels: {version: v1}}
  - {name: v2, labels: {version: v2}}
`
	if exportTo != "" {
		doc += fmt.Sprintf("  exportTo: [%q]\n", exportTo)
	}
	return doc
}

// hopCase is one second-hop scenario: a change of the lab (undone after)
// and the hops of helloworld:5000 (by subset) into network2 it makes.
type hopCase struct {
	name  string
	apply func(ctx context.Context) (undo func(context.Context) error, err error)
	hops  map[string]string // subset → "state[/step]"
	// kind is the problem doctor reports for it (severity "error" unless
	// warn), "" for none.
	kind model.ProblemKind
	warn bool
}

// inPrimaries applies an Istio config change to both primaries' config.
func inPrimaries(apply, undo func(ctx context.Context, cluster string) error) func(context.Context) (func(context.Context) error, error) {
	return func(ctx context.Context) (func(context.Context) error, error) {
		for _, c := range []string{"cluster1", "cluster2"} {
			if err := apply(ctx, c); err != nil {
				return nil, err
			}
		}
		return func(ctx context.Context) error {
			for _, c := range []string{"cluster1", "cluster2"} {
				if err := undo(ctx, c); err != nil {
					return err
				}
			}
			return nil
		}, nil
	}
}

// replaceGateway swaps cross-network-gateway for doc in both primaries.
func replaceGateway(doc string) func(context.Context) (func(context.Context) error, error) {
	return inPrimaries(func(ctx context.Context, c string) error {
		if err := theLab.DeleteIstioConfig(ctx, c, lab.CrossNetworkGateway); err != nil {
			return err
		}
		if doc == "" {
			return nil
		}
		return theLab.ApplyIstioConfig(ctx, c, doc)
	}, func(ctx context.Context, c string) error {
		if doc != "" {
			if err := theLab.DeleteIstioConfig(ctx, c, doc); err != nil {
				return err
			}
		}
		return theLab.ApplyIstioConfig(ctx, c, lab.CrossNetworkGateway)
	})
}

func applyDoc(doc string) func(context.Context) (func(context.Context) error, error) {
	return inPrimaries(func(ctx context.Context, c string) error { return theLab.ApplyIstioConfig(ctx, c, doc) },
		func(ctx context.Context, c string) error { return theLab.DeleteIstioConfig(ctx, c, doc) })
}

// gatewayPod replaces cluster2's gateway pod as edit makes it.
func gatewayPod(edit func(*lab.PodSpec)) func(context.Context) (func(context.Context) error, error) {
	return func(ctx context.Context) (func(context.Context) error, error) {
		return theLab.ReplaceGatewayPod(ctx, "cluster2", edit)
	}
}

func secondHopCases() []hopCase {
	dot := "."
	return []hopCase{
		{name: "healthy", hops: map[string]string{"": "holds"}},
		{name: "no auto-passthrough Gateway", apply: replaceGateway(""), hops: map[string]string{"": "breaks/listener"}, kind: model.ProblemHopNoListener},
		{name: "selector misses", apply: replaceGateway(gatewayDoc("ingressgateway", 15443, "*.local")), hops: map[string]string{"": "breaks/listener"}, kind: model.ProblemHopNoListener},
		{name: "hosts do not match", apply: replaceGateway(gatewayDoc("eastwestgateway", 15443, "*.istio-system.svc.cluster.local")), hops: map[string]string{"": "breaks/chain"}, kind: model.ProblemHopNoSNI},
		{name: "a second AUTO_PASSTHROUGH server on the port", apply: applyDoc(vmGateway), hops: map[string]string{"": "holds"}},
		{name: "namespace prefix restricts nothing", apply: replaceGateway(gatewayDoc("eastwestgateway", 15443, "other/*.local")), hops: map[string]string{"": "holds"}},
		{name: "subset hidden by exportTo", apply: applyDoc(subsetsRule(".")), hops: map[string]string{"": "holds", "v2": "breaks/chain"}, kind: model.ProblemHopNoSNI},
		{name: "subset visible", apply: applyDoc(subsetsRule("")), hops: map[string]string{"": "holds", "v2": "holds"}},
		{name: "service exportTo .", apply: inPrimaries(func(ctx context.Context, c string) error {
			return theLab.SetAnnotation(ctx, c, lab.KindService, lab.SampleNamespace, "helloworld", "networking.istio.io/exportTo", &dot)
		}, func(ctx context.Context, c string) error {
			return theLab.SetAnnotation(ctx, c, lab.KindService, lab.SampleNamespace, "helloworld", "networking.istio.io/exportTo", nil)
		}), hops: map[string]string{"": "breaks/chain"}, kind: model.ProblemHopNoSNI},
		{name: "server port misses", apply: replaceGateway(gatewayDoc("eastwestgateway", 15444, "*.local")), hops: map[string]string{"": "breaks/listener"}, kind: model.ProblemHopPort},
		{name: "targetPort followed", apply: func(ctx context.Context) (func(context.Context) error, error) {
			return func(ctx context.Context) error { return theLab.SetGatewayTargetPort(ctx, "cluster2", 15443) },
				theLab.SetGatewayTargetPort(ctx, "cluster2", 15444)
		}, hops: map[string]string{"": "holds"}},
		{name: "gateway pod without network label", apply: gatewayPod(func(p *lab.PodSpec) {
			delete(p.Labels, lab.NetworkLabel)
			delete(p.Env, "ISTIO_META_NETWORK") // the injector takes it from the label
		}), hops: map[string]string{"": "breaks/endpoint"}, kind: model.ProblemHopNetwork},
		{name: "no network view", apply: gatewayPod(func(p *lab.PodSpec) { delete(p.Env, "ISTIO_META_REQUESTED_NETWORK_VIEW") }), hops: map[string]string{"": "doubtful"}, kind: model.ProblemHopNetwork, warn: true},
		{name: "another network view", apply: gatewayPod(func(p *lab.PodSpec) { p.Env["ISTIO_META_REQUESTED_NETWORK_VIEW"] = "network1" }), hops: map[string]string{"": "breaks/endpoint"}, kind: model.ProblemHopNetwork},
	}
}

// TestSecondHop runs every scenario against both istiods.
func TestSecondHop(t *testing.T) {
	ctx := context.Background()
	sess := openLabSession(t)
	for _, tc := range secondHopCases() {
		t.Run(tc.name, func(t *testing.T) {
			if tc.apply != nil {
				undo, err := tc.apply(ctx)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					if err := undo(ctx); err != nil {
						t.Errorf("undo: %v", err)
					}
				})
			}
			var seen string
			eventually(t, 60*time.Second, func() string {
				var bad string
				seen, bad = secondHopMismatch(ctx, sess, tc.hops)
				return bad
			})
			t.Log(seen)
			// The commands say where the path breaks.
			eventually(t, 60*time.Second, func() string { return explainSecondHop(t, tc.hops) })
			eventually(t, 90*time.Second, func() string { return doctorSecondHop(t, tc.kind, tc.warn) })
		})
	}
}

// openLabSession is a session over both lab clusters with both istiods
// as control planes, settled.
func openLabSession(t *testing.T) *live.Session {
	t.Helper()
	var targets []live.Target
	for _, is := range theLab.Istiods() {
		targets = append(targets, live.Target{Cluster: is.Cluster, Address: is.XDSAddress()})
	}
	ctx := context.Background()
	sess, err := live.Open(ctx, live.Options{ControlPlanes: targets, Collector: collector.Options{
		Kubeconfig: theLab.Kubeconfig, Contexts: []string{"cluster1", "cluster2"}, SyncTimeout: 20 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sess.Close)
	if _, err := sess.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	return sess
}

// secondHopMismatch says what differs: between what each istiod sends each
// gateway pod and the prediction, or between the hops and want ("" when
// nothing does).
func secondHopMismatch(ctx context.Context, sess *live.Session, want map[string]string) (seen, mismatch string) {
	snap := sess.Registry().Snapshot()
	sents := explain.GatewayViewpoints(snap, []string{"cluster1", "cluster2"})
	if len(sents) != 4 {
		return "", fmt.Sprintf("%d gateway viewpoints, want 4 (2 pods × 2 istiods)", len(sents))
	}
	var vps []xdsclient.Viewpoint
	for _, s := range sents {
		vps = append(vps, s.Viewpoint())
	}
	planes := plane.NewSet(snap, nil)
	var bad []string
	for i, r := range sess.FetchGateways(ctx, vps, xdsclient.ModeDelta, 10*time.Second) {
		s := sents[i]
		s.Listeners, s.Clusters, s.EDS, s.Error = r.Listeners, r.Clusters, r.EDS, r.Why
		if r.Why != "" {
			bad = append(bad, s.Gateway+" via "+s.ControlPlane+": "+r.Why)
		}
		seen += fmt.Sprintf("%s via %s: %s; ", s.Gateway, s.ControlPlane, sentSummary(r))
		for _, d := range explain.CompareGateway(planes.Of(s.ControlPlane), s) {
			bad = append(bad, s.Gateway+" via "+s.ControlPlane+": "+d.Sentence)
		}
	}
	k := explain.NewHops(planes, nil)
	for subset, w := range want {
		h := k.Check("network2", "192.168.60.9", 15443, helloworldHost, 5000, subset)
		got := string(h.State)
		if h.Step != "" {
			got += "/" + string(h.Step)
		}
		if got != w {
			bad = append(bad, fmt.Sprintf("hop of subset %q: %s, want %s: %s", subset, got, w, h.Path()))
		}
		seen += fmt.Sprintf("\nhop %q: %s", subset, h.Path())
	}
	return seen, strings.Join(bad, "\n")
}

// sentSummary is what istiod sent a gateway in a few words: its SNI
// listeners with their chain count, its SNI-DNAT clusters and the
// endpoints in helloworld's.
func sentSummary(r live.GatewayResult) string {
	var parts []string
	for _, l := range r.Listeners {
		parts = append(parts, fmt.Sprintf("%s %d chains", l.Name, len(l.SNIChains)))
	}
	n := 0
	for _, c := range r.Clusters {
		if strings.HasPrefix(c.Name, "outbound_.") {
			n++
		}
	}
	parts = append(parts, fmt.Sprintf("%d SNI clusters", n))
	if la, ok := r.EDS[model.SNIName(helloworldHost, "", 5000)]; ok {
		var eps []string
		for _, e := range la.Endpoints {
			eps = append(eps, e.Key())
		}
		parts = append(parts, "helloworld "+strings.Join(eps, ","))
	}
	return strings.Join(parts, ", ")
}

// gatewayStandIns connects, until the test ends, a stand-in for each lab
// gateway pod's proxy: a router ADS stream with the pod's identity to its
// own cluster's istiod, acknowledging every push and connecting again
// after an istiod restart, as the gateway's running Envoy would. The lab's gateway pods are data (nothing runs behind them),
// so without it istiod lists them nowhere and the fleet calls them
// disconnected; tests that hold the fleet to "every proxy connected" start
// these, as a real install's gateways would be.
func gatewayStandIns(ctx context.Context, t *testing.T) {
	t.Helper()
	istiods := labIstiodsXDS()
	for _, c := range []string{"cluster1", "cluster2"} {
		spec, err := theLab.GatewayPodSpec(c)
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		t.Cleanup(cancel)
		startFakeNode(cctx, t, "router", "1.31.0", istiods[c], spec.Name, spec.Namespace, c, spec.Env["ISTIO_META_NETWORK"], spec.IP, ackAll, true)
	}
}

// explainSecondHop runs `meshscope explain helloworld.sample` (and with
// --subset for each subset wanted, as a sidecar of sample) against both
// istiods and says what differs from want: a view of network1 sends the
// request into network2's gateway, whose hop must be as wanted; the
// verdict is broken, and the exit status 1, exactly when it breaks.
func explainSecondHop(t *testing.T, want map[string]string) string {
	var bad []string
	for subset, w := range want {
		args := []string{"explain", "helloworld.sample", "-o", "json", "--context", "cluster1,cluster2", "--xds-address", xdsAll(), "--namespace", "sample"}
		if subset != "" {
			args = append(args, "--subset", subset)
		}
		out, code := runMeshscope(t, args...)
		var res struct {
			Views []explain.View `json:"views"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			return fmt.Sprintf("explain %v: %v\n%s", args, err, out)
		}
		broken := strings.HasPrefix(w, "breaks")
		found := false
		for _, v := range res.Views {
			for _, h := range v.SecondHop {
				if h.Address != "192.168.60.9" {
					continue
				}
				found = true
				got := string(h.State)
				if h.Step != "" {
					got += "/" + string(h.Step)
				}
				if got != w || (v.Verdict == explain.Broken) != broken {
					bad = append(bad, fmt.Sprintf("subset %q from %s: hop %s verdict %s, want %s: %s", subset, v.Viewpoint.Name, got, v.Verdict, w, h.Path()))
				}
			}
		}
		if !found {
			bad = append(bad, fmt.Sprintf("subset %q: no view goes through network2's gateway", subset))
		}
		if (code == 1) != broken && code != 3 {
			bad = append(bad, fmt.Sprintf("subset %q: exit %d", subset, code))
		}
	}
	return strings.Join(bad, "\n")
}

// doctorSecondHop runs doctor against both istiods (without their debug
// views: no fleet) and says what differs: the second-hop problem of kind
// (none when kind is ""), and never a gateway-xds-differs — what each
// istiod sends each gateway pod equals the prediction.
func doctorSecondHop(t *testing.T, kind model.ProblemKind, warn bool) string {
	ps, _ := doctorJSON(t, "--context", "cluster1,cluster2", "--xds-address", xdsAll())
	var bad, hops []string
	sev := model.SeverityError
	if warn {
		sev = model.SeverityWarning
	}
	found := kind == ""
	for _, p := range ps {
		switch {
		case p.Kind == model.ProblemGatewayXDSDiffers:
			bad = append(bad, "gateway-xds-differs: "+p.Sentence)
		case p.Kind == kind && p.Severity == sev:
			found = true
		case strings.HasPrefix(string(p.Kind), "second-hop-") && p.Kind != kind:
			hops = append(hops, string(p.Kind)+": "+p.Sentence)
		}
	}
	if !found {
		bad = append(bad, fmt.Sprintf("no %s %s", sev, kind))
	}
	if len(hops) > 0 {
		bad = append(bad, "other second-hop problems: "+strings.Join(hops, "; "))
	}
	return strings.Join(bad, "\n")
}

// TestSecondHopGatewayProxy: with istiod's syncz read, a gateway pod whose
// proxy is connected to no istiod breaks the hop (the lab's gateway pods
// run nothing), and one connected holds it.
func TestSecondHopGatewayProxy(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	args := []string{"--context", "cluster1,cluster2", "--xds-address", xdsAll(), "--istiod-debug-address", debugAll()}
	eventually(t, 60*time.Second, func() string {
		ps, code := doctorJSON(t, args...)
		if _, why := problemOf(ps, string(model.ProblemHopProxy), model.SeverityError, "network2's gateway 192.168.60.9:15443", "proxy is connected to no istiod"); why != "" || code != 1 {
			return fmt.Sprintf("exit %d: %s", code, why)
		}
		return ""
	})
	gatewayStandIns(ctx, t)
	eventually(t, 60*time.Second, func() string {
		ps, _ := doctorJSON(t, args...)
		for _, k := range []model.ProblemKind{model.ProblemHopProxy, model.ProblemProxyDisconnected} {
			if why := absent(ps, string(k)); why != "" {
				return why
			}
		}
		return ""
	})
}

// TestWhatIfDeleteCrossNetworkGateway: deleting cross-network-gateway
// (before it is done) loses every cross-network path — the what-if
// reports the new second-hop-no-listener errors and exits 1 — and an
// unknown tls.mode is bad input (exit 2; TestDecodeGatewayTLSMode holds
// its sentence with file and line).
func TestWhatIfDeleteCrossNetworkGateway(t *testing.T) {
	dir := t.TempDir()
	gw := filepath.Join(dir, "gw.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(gw, []byte(lab.CrossNetworkGateway), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(strings.Replace(lab.CrossNetworkGateway, "AUTO_PASSTHROUGH", "AUTO", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := runMeshscope(t, "what-if", "--context", "cluster1,cluster2", "--xds-address", xdsAll(), "--delete", "-f", "cluster1="+gw, "-f", "cluster2="+gw)
	for _, want := range []string{"second-hop-no-listener", "network2's gateway 192.168.60.9:15443", "network1's gateway 192.168.60.113:15443", "no Gateway selects pod istio-eastwestgateway-7b9c5d6f8-k2x4p"} {
		if !strings.Contains(out, want) {
			t.Errorf("what-if --delete cross-network-gateway lacks %q (exit %d):\n%s", want, code, out)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1 (new errors):\n%s", code, out)
	}
	out, code = runMeshscope(t, "what-if", "--context", "cluster1", "-f", "cluster1="+bad)
	if code != 2 {
		t.Errorf("unknown tls.mode: exit %d, want 2:\n%s", code, out)
	}
}

// TestTrustDomainRejected: cluster2's istiod given another trust domain
// (its ConfigMap istio) — cluster1's proxies do not accept its workloads
// and the reverse, until each lists the other as an alias.
func TestTrustDomainRejected(t *testing.T) {
	ctx := context.Background()
	set := func(c, text string) {
		if err := theLab.SetMeshConfig(ctx, c, text); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { set("cluster1", lab.MeshConfigText); set("cluster2", lab.MeshConfigText) })
	td2 := strings.Replace(lab.MeshConfigText, "trustDomain: cluster.local", "trustDomain: cluster2.example", 1)
	set("cluster2", td2)
	args := []string{"--context", "cluster1,cluster2", "--offline"}
	eventually(t, 60*time.Second, func() string {
		ps, _ := doctorJSON(t, args...)
		_, why := problemOf(ps, string(model.ProblemTrustDomain), model.SeverityError, "the proxies istiod cluster1 serves accept the trust domains cluster.local, not cluster2.example")
		return why
	})
	set("cluster1", lab.MeshConfigText+"trustDomainAliases: [cluster2.example]\n")
	set("cluster2", td2+"trustDomainAliases: [cluster.local]\n")
	eventually(t, 60*time.Second, func() string {
		ps, _ := doctorJSON(t, args...)
		return absent(ps, string(model.ProblemTrustDomain))
	})
}
