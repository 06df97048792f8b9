package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// TestExplainScenarios: for each split-horizon scenario, from each viewpoint,
// what the real istiod sends equals meshscope's prediction (address, port,
// weight, health), and equals the expected EDS; doctor agrees.
func TestExplainScenarios(t *testing.T) {
	ctx := context.Background()
	reg := startRegistry(t)
	vps, probes := threeViewProbes(t)
	str := func(s string) *string { return &s }
	pod2 := lab.HelloworldPod("cluster2")
	type scenario struct {
		name     string
		apply    func() error
		undo     func() error
		want     [3]string // per viewpoint: "address:port w=N", sorted, comma-joined
		doctorOK bool
		doctor   string // a problem kind and text doctor must report
		// doctorNot is a problem kind doctor must not report (noise).
		doctorNot string
		// check, if set, looks further at one viewpoint's actual EDS.
		check func(vp xdsclient.Viewpoint, la xdsclient.LoadAssignment) string
	}
	extra := []string{"helloworld-v2-54df5f84b-x1", "helloworld-v2-54df5f84b-x2"}
	scenarios := []scenario{
		{
			name: "seed", apply: func() error { return nil }, undo: func() error { return nil },
			want:     [3]string{seedEDSNetwork1, seedEDSNetwork2, "192.168.60.113:15443 w=1,192.168.60.9:15443 w=1"},
			doctorOK: true,
		},
		{
			name: "three pods in cluster2",
			apply: func() error {
				var pods []lab.PodSpec
				for i, n := range extra {
					pods = append(pods, lab.PodSpec{Namespace: lab.SampleNamespace, Name: n, IP: fmt.Sprintf("10.144.0.%d", 50+i), Labels: lab.AppLabels("helloworld", "v2", "network2")})
				}
				return theLab.AddPods(ctx, "cluster2", pods...)
			},
			undo: func() error {
				for _, n := range extra {
					if err := theLab.RemovePod(ctx, "cluster2", lab.SampleNamespace, n); err != nil {
						return err
					}
				}
				return nil
			},
			want: [3]string{"10.44.0.13:5000 w=1,192.168.60.9:15443 w=3", "10.144.0.15:5000 w=1,10.144.0.50:5000 w=1,10.144.0.51:5000 w=1,192.168.60.113:15443 w=1", "192.168.60.113:15443 w=1,192.168.60.9:15443 w=3"},
			// 75% of network1's traffic crosses, as 3 remote pods against
			// 1 local one say it should: not a problem.
			doctorNot: "skew",
		},
		{
			name: "network2's gateway loses its network label",
			apply: func() error {
				return theLab.SetLabel(ctx, "cluster2", lab.KindService, lab.SystemNamespace, lab.GatewayService, lab.NetworkLabel, nil)
			},
			undo: func() error {
				return theLab.SetLabel(ctx, "cluster2", lab.KindService, lab.SystemNamespace, lab.GatewayService, lab.NetworkLabel, str("network2"))
			},
			// network2 has no gateway: its pod IP leaks to network1, and a
			// no-NETWORK proxy reaches it directly.
			want:   [3]string{"10.144.0.15:5000 w=1,10.44.0.13:5000 w=1", seedEDSNetwork2, seedEDSNetwork2},
			doctor: "leak|no gateway is known for network2",
		},
		{
			name: "the cluster2 pod loses its tlsMode label",
			apply: func() error {
				return theLab.SetLabel(ctx, "cluster2", lab.KindPod, lab.SampleNamespace, pod2, lab.TLSModeLabel, nil)
			},
			undo: func() error {
				return theLab.SetLabel(ctx, "cluster2", lab.KindPod, lab.SampleNamespace, pod2, lab.TLSModeLabel, str("istio"))
			},
			want:   [3]string{"10.44.0.13:5000 w=1", seedEDSNetwork2, "192.168.60.113:15443 w=1"},
			doctor: "drop|" + pod2,
		},
	}
	pa := `apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: helloworld-no-mtls, namespace: sample}
spec:
  selector: {matchLabels: {app: helloworld}}
  mtls: {mode: DISABLE}
`
	dr := `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: helloworld-plain, namespace: sample}
spec:
  host: helloworld
  trafficPolicy: {tls: {mode: DISABLE}}
`
	// Without mTLS, nothing crosses networks: each network keeps its own
	// pod, and a proxy without NETWORK (everything forced through
	// gateways) gets nothing at all.
	noMTLS := [3]string{"10.44.0.13:5000 w=1", "10.144.0.15:5000 w=1", ""}
	scenarios = append(scenarios,
		scenario{
			// Not ready, not terminating: istiod still sends it, as UNHEALTHY
			// (PILOT_AUTO_SEND_UNHEALTHY_ENDPOINTS), and counts it in the
			// gateway's weight; the verdicts compare health too.
			name:  "the cluster2 pod is not ready",
			apply: func() error { return theLab.SetPodReady(ctx, "cluster2", lab.SampleNamespace, pod2, false) },
			undo:  func() error { return theLab.SetPodReady(ctx, "cluster2", lab.SampleNamespace, pod2, true) },
			want:  [3]string{seedEDSNetwork1, seedEDSNetwork2, "192.168.60.113:15443 w=1,192.168.60.9:15443 w=1"},
			// The gateway still weighs 1 for the unhealthy pod: half of
			// network1's traffic goes where no healthy endpoint is.
			doctor: "skew|counts 1 unhealthy endpoint",
			check: func(vp xdsclient.Viewpoint, la xdsclient.LoadAssignment) string {
				if vp.Network != "network2" {
					return ""
				}
				for _, e := range la.Endpoints {
					if e.Address == "10.144.0.15" && e.Health != "UNHEALTHY" {
						return "the not-ready pod is sent as " + e.Health + ", want UNHEALTHY"
					}
				}
				return ""
			},
		},
		scenario{
			name:  "a PeerAuthentication disables mTLS for helloworld",
			apply: func() error { return theLab.ApplyIstioConfig(ctx, "cluster1", pa) },
			undo:  func() error { return theLab.DeleteIstioConfig(ctx, "cluster1", pa) },
			want:  noMTLS, doctor: "drop|PeerAuthentication sample/helloworld-no-mtls",
		},
		scenario{
			name:  "a DestinationRule sets TLS off for helloworld",
			apply: func() error { return theLab.ApplyIstioConfig(ctx, "cluster1", dr) },
			undo:  func() error { return theLab.DeleteIstioConfig(ctx, "cluster1", dr) },
			want:  noMTLS, doctor: "drop|DestinationRule sample/helloworld-plain",
		},
	)
	ambientNS := func(v *string) func() error {
		return func() error {
			for _, c := range []string{"cluster1", "cluster2"} {
				if err := theLab.SetLabel(ctx, c, lab.KindNamespace, "", lab.SampleNamespace, lab.DataplaneModeLabel, v); err != nil {
					return err
				}
			}
			return nil
		}
	}
	scenarios = append(scenarios, scenario{
		// A mesh trying ambient (issue 23): sample is labelled for ambient
		// in both clusters, but the lab's istiods run without ambient (their
		// pods' env, istiod's defaults). istiod sends sidecars the classic
		// split horizon; meshscope used to assume ambient multi-network and
		// predict the remote endpoints of the non-global helloworld dropped.
		name:  "sample labelled for ambient on istiods without ambient",
		apply: ambientNS(str("ambient")), undo: ambientNS(nil),
		want:      [3]string{seedEDSNetwork1, seedEDSNetwork2, "192.168.60.113:15443 w=1,192.168.60.9:15443 w=1"},
		doctorNot: "ambient-sidecar-drop",
	})
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			withChange(t, sc.apply, sc.undo)
			var snap *model.Snapshot
			eventually(t, 20*time.Second, func() string {
				snap = reg.Snapshot()
				for i, vp := range vps {
					la, ok := probes[i].c.LoadAssignment(helloworldEDS)
					if !ok {
						return vp.String() + ": no EDS yet"
					}
					got := strings.Join(probes[i].eds(helloworldEDS), ",")
					if got != sc.want[i] {
						return fmt.Sprintf("%s: istiod sends %s, want %s", vp, got, sc.want[i])
					}
					if sc.check != nil {
						if msg := sc.check(vp, la); msg != "" {
							return msg
						}
					}
					v := explain.Explain(snap, "helloworld.sample.svc.cluster.local", 5000, vp, "cluster1", &la)
					if v.Verdict != explain.Match {
						return fmt.Sprintf("%s: verdict %s: %+v", vp, v.Verdict, v.Differences)
					}
				}
				return ""
			})
			ps := explain.Diagnose(snap, explain.Inputs{})
			if sc.doctorNot != "" {
				for _, p := range ps {
					if string(p.Kind) == sc.doctorNot {
						t.Errorf("doctor reports %s: %s", p.Kind, p.Sentence)
					}
				}
			}
			if sc.doctorOK && explain.HasErrors(ps) {
				t.Errorf("doctor finds errors on the healthy lab: %+v", ps)
			}
			if sc.doctor != "" {
				kind, text, _ := strings.Cut(sc.doctor, "|")
				found := false
				for _, p := range ps {
					if string(p.Kind) == kind && strings.Contains(p.Sentence, text) {
						found = true
					}
				}
				if !found {
					t.Errorf("doctor misses %s (%q): %+v", kind, text, ps)
				}
			}
		})
	}
}
