package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/fix"
	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/analysis/whatif"
	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/internal/kubesim"
	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/live"
)

// fixScenario is a problem planted in the lab and what a person does
// besides applying the fix's files.
type fixScenario struct {
	name string
	kind model.ProblemKind
	// plant makes the problem for real; unplant undoes it (and whatever
	// the fix changed on top).
	plant, unplant func() error
	// host and port: the service whose EDS the fix is checked on.
	host string
	port int32
	// afterApply does what the cluster's controllers would once the files
	// are applied (the lab runs none): a rollout's pods, the endpoint
	// controller's slices.
	afterApply func() error
	// command runs, for a fix that is a command (istioctl
	// create-remote-secret), the lab's equivalent of it.
	command func() error
}

// TestFixesOnLab (issues 33, 31): eight problems planted in the lab, one at a
// time. For each, doctor --fix (the binary) offers a fix with its proof
// and writes its files; what-if of those files (computed before anything
// is applied) predicts istiod's EDS; the test applies them as their header
// says (kubectl replace or create; for the remote secret, the lab's
// equivalent of the istioctl command the fix names, its proof having
// been what-if of a secret meshscope built in memory); both real istiods
// then send exactly what the proof predicted, and doctor no longer
// reports the problem.
func TestFixesOnLab(t *testing.T) {
	ctx := context.Background()
	reg := startRegistryFrom(t, "cluster1", "cluster2")
	addWhatIfClients(ctx, t)
	// doctor reads istiod's syncz: the gateways' proxies are connected,
	// as in a real mesh (else each hop breaks at the proxy first).
	gatewayStandIns(ctx, t)
	awaitWhatIfClients(t, reg)
	for _, sc := range fixScenarios(ctx, t) {
		t.Run(sc.name, func(t *testing.T) { runFixScenario(ctx, t, reg, sc) })
	}
}

func fixScenarios(ctx context.Context, t *testing.T) []fixScenario {
	str := func(s string) *string { return &s }
	const hello = "helloworld.sample.svc.cluster.local"
	pod2 := lab.HelloworldPod("cluster2")
	secret := lab.RemoteSecretName("cluster2")
	var secretData map[string][]byte
	var restoreSleep func(context.Context) error
	plaintext := `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: helloworld-plaintext, namespace: sample}
spec:
  host: helloworld.sample.svc.cluster.local
  trafficPolicy: {tls: {mode: DISABLE}}
`
	narrowGateway := strings.Replace(lab.CrossNetworkGateway, `    - "*.local"`, `    - "sleep.sample.svc.cluster.local"`, 1)
	// restoreGateway puts cluster1's cross-network-gateway back as the
	// lab has it, whatever the plant or the fix left.
	restoreGateway := func() error {
		if err := theLab.DeleteIstioConfig(ctx, "cluster1", lab.CrossNetworkGateway); err != nil {
			return err
		}
		return theLab.ApplyIstioConfig(ctx, "cluster1", lab.CrossNetworkGateway)
	}
	label := func(cluster string, kind lab.Kind, ns, name, key string, v *string) func() error {
		return func() error { return theLab.SetLabel(ctx, cluster, kind, ns, name, key, v) }
	}
	return []fixScenario{
		{
			name: "a gateway Service without the network label (leak)", kind: model.ProblemLeak,
			plant:   label("cluster2", lab.KindService, lab.SystemNamespace, lab.GatewayService, lab.NetworkLabel, nil),
			unplant: label("cluster2", lab.KindService, lab.SystemNamespace, lab.GatewayService, lab.NetworkLabel, str("network2")),
			host:    hello, port: 5000,
		},
		{
			name: "a Deployment's pod template without the mTLS label (drop)", kind: model.ProblemDrop,
			plant: func() error {
				if err := theLab.AdoptPod(ctx, "cluster2", lab.SampleNamespace, pod2, "helloworld-v2"); err != nil {
					return err
				}
				if err := setTemplateLabel(ctx, "cluster2", "helloworld-v2", lab.TLSModeLabel, nil); err != nil {
					return err
				}
				return theLab.SetLabel(ctx, "cluster2", lab.KindPod, lab.SampleNamespace, pod2, lab.TLSModeLabel, nil)
			},
			unplant: func() error {
				if err := theLab.SetLabel(ctx, "cluster2", lab.KindPod, lab.SampleNamespace, pod2, lab.TLSModeLabel, str("istio")); err != nil {
					return err
				}
				return theLab.ReleasePod(ctx, "cluster2", lab.SampleNamespace, pod2, "helloworld-v2")
			},
			// The rollout the lab has no controller for: the pod re-made
			// from the template, with its label.
			afterApply: label("cluster2", lab.KindPod, lab.SampleNamespace, pod2, lab.TLSModeLabel, str("istio")),
			host:       hello, port: 5000,
		},
		{
			name: "a DestinationRule with tls mode DISABLE (drop)", kind: model.ProblemDrop,
			plant:   func() error { return theLab.ApplyIstioConfig(ctx, "cluster1", plaintext) },
			unplant: func() error { return theLab.DeleteIstioConfig(ctx, "cluster1", plaintext) },
			host:    hello, port: 5000,
		},
		{
			name: "cluster1's remote secret for cluster2 missing (multi-primary)", kind: model.ProblemControlPlaneMissingCluster,
			plant: func() error {
				s, err := theLab.Cluster("cluster1").Client().CoreV1().Secrets(lab.SystemNamespace).Get(ctx, secret, metav1.GetOptions{})
				if err != nil {
					return err
				}
				secretData = s.Data
				return theLab.DeleteRemoteSecret(ctx, "cluster1", secret)
			},
			unplant: func() error { return theLab.WriteRemoteSecret(ctx, "cluster1", secret, secretData) },
			// istioctl create-remote-secret --context cluster2 --name
			// cluster2 | kubectl apply --context cluster1 -f -: a reader
			// token of cluster2 in a secret of cluster1.
			// The rotation revokes the token of the secret the plant
			// saved: unplant writes back the new one.
			command: func() error {
				if err := theLab.RotateRemoteSecret(ctx, "cluster1", "cluster2"); err != nil {
					return err
				}
				s, err := theLab.Cluster("cluster1").Client().CoreV1().Secrets(lab.SystemNamespace).Get(ctx, secret, metav1.GetOptions{})
				if err != nil {
					return err
				}
				secretData = s.Data
				return nil
			},
			host: hello, port: 5000,
		},
		{
			name: "namespace sample labelled for a revision that does not run", kind: model.ProblemNamespaceRevision,
			plant: label("cluster1", lab.KindNamespace, "", lab.SampleNamespace, model.LabelRev, str("nonexistent")),
			unplant: func() error {
				if err := theLab.SetLabel(ctx, "cluster1", lab.KindNamespace, "", lab.SampleNamespace, model.LabelRev, nil); err != nil {
					return err
				}
				return theLab.SetLabel(ctx, "cluster1", lab.KindNamespace, "", lab.SampleNamespace, model.LabelInjection, nil)
			},
			host: hello, port: 5000,
		},
		{
			// The second hop: the fix is a new object, istio's Gateway.
			name: "cluster1's cross-network-gateway deleted (second hop)", kind: model.ProblemHopNoListener,
			plant:   func() error { return theLab.DeleteIstioConfig(ctx, "cluster1", lab.CrossNetworkGateway) },
			unplant: restoreGateway,
			host:    hello, port: 5000,
		},
		{
			name: "cluster1's cross-network-gateway exposing sleep only (second hop)", kind: model.ProblemHopNoSNI,
			plant: func() error {
				if err := theLab.DeleteIstioConfig(ctx, "cluster1", lab.CrossNetworkGateway); err != nil {
					return err
				}
				return theLab.ApplyIstioConfig(ctx, "cluster1", narrowGateway)
			},
			unplant: restoreGateway,
			host:    hello, port: 5000,
		},
		{
			name: "Service sleep missing in cluster2 where sidecars of sample run", kind: model.ProblemMissingService,
			plant: func() error {
				var err error
				restoreSleep, err = theLab.DeleteService(ctx, "cluster2", lab.SampleNamespace, "sleep")
				return err
			},
			unplant: func() error { return restoreSleep(ctx) },
			// The endpoint controller's slice for the new Service.
			afterApply: func() error {
				return kubesim.SyncNamespace(ctx, theLab.Cluster("cluster2").Client(), lab.SampleNamespace)
			},
			host: "sleep.sample.svc.cluster.local", port: 80,
		},
	}
}

func runFixScenario(ctx context.Context, t *testing.T, reg *collector.Registry, sc fixScenario) {
	eds := horizon.EDSClusterName(sc.host, sc.port)
	views := startWhatIfViews(t, eds)
	withChange(t, sc.plant, sc.unplant)
	var p model.Problem
	eventually(t, 30*time.Second, func() string {
		for _, q := range explain.Diagnose(reg.Snapshot(), explain.Inputs{}) {
			if q.Kind == sc.kind {
				p = q
				return ""
			}
		}
		return fmt.Sprintf("meshscope does not report %s yet", sc.kind)
	})
	t.Logf("planted: %s: %s", p.Kind, p.Sentence)

	// doctor --fix as a person runs it: the fix offered, proven, written.
	dir := t.TempDir()
	offer := doctorFixOf(t, dir, p)
	t.Logf("fix: %s (proof: %+v)", offer.Title, offer.Proof.Changes)

	// What the proof predicts: what-if of the files written (as
	// meshscope what-if -f CLUSTER=FILE reads them), or for a command of
	// the objects it writes, built as doctor built them.
	var changes []collector.Change
	if offer.Command == "" {
		for _, f := range offer.Files {
			objs, err := whatif.Read([]whatif.Source{{Path: f.Path, Cluster: f.Cluster}}, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				changes = append(changes, collector.Change{Cluster: o.Cluster, Object: o.Object, Delete: f.Verb == "delete", Origin: o.Origin()})
			}
		}
	} else {
		built := live.Fix(ctx, reg, reg.Snapshot(), p)
		mine := built.Best()
		if mine == nil {
			t.Fatalf("the fix is not offered in-process")
		}
		for _, m := range mine.Manifests {
			changes = append(changes, collector.Change{Cluster: m.Cluster, Object: m.Change(), Delete: m.Delete, Origin: "fix"})
		}
	}
	w, err := reg.WhatIf(changes, nil)
	if err != nil {
		t.Fatal(err)
	}
	agree(t, func() *model.Snapshot { return w.Before }, views, sc.host, sc.port, eds, true)
	logSent(t, "before", views, eds)

	// Apply it as its header says.
	if offer.Command != "" {
		if err := sc.command(); err != nil {
			t.Fatal(err)
		}
	} else {
		for _, f := range offer.Files {
			kubectl(t, f.Verb, "--context", f.Context, "-f", f.Path)
		}
	}
	if sc.afterApply != nil {
		if err := sc.afterApply(); err != nil {
			t.Fatal(err)
		}
	}
	agree(t, func() *model.Snapshot { return w.After }, views, sc.host, sc.port, eds, true)
	logSent(t, "after", views, eds)
	eventually(t, 30*time.Second, func() string {
		for _, q := range explain.Diagnose(reg.Snapshot(), explain.Inputs{}) {
			if fix.Same(p, q) {
				return "doctor still reports it: " + q.Sentence
			}
		}
		return ""
	})
	ps, _ := doctorJSON(t, "--offline", "--context", "cluster1,cluster2")
	for _, q := range ps {
		if q.Kind == p.Kind && q.Sentence == p.Sentence {
			t.Errorf("doctor (the binary) still reports it: %s", q.Sentence)
		}
	}
}

// doctorFixOf runs doctor --fix --fix-dir dir and returns the offered fix
// of the problem p names (by kind and sentence), failing when there is
// none or its proof does not resolve the problem.
func doctorFixOf(t *testing.T, dir string, p model.Problem) fix.Offer {
	t.Helper()
	out, code := runMeshscope(t, "doctor", "--offline", "--context", "cluster1,cluster2", "-o", "json", "--fix-dir", dir)
	if code != 1 {
		t.Errorf("doctor --fix: exit %d, want 1 (an error-level problem)", code)
	}
	var res struct {
		Problems []struct {
			model.Problem
			Fix *fix.Fix `json:"fix"`
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("doctor --fix -o json: %v\n%s", err, out)
	}
	// The remote secret a proof builds carries meshscope's own
	// credentials: they appear nowhere.
	written, _ := exec.Command("sh", "-c", "cat "+dir+"/* 2>/dev/null").Output()
	for _, c := range []string{"cluster1", "cluster2"} {
		if tok := theLab.Cluster(c).RESTConfig().BearerToken; strings.Contains(out+string(written), tok) {
			t.Fatalf("doctor --fix shows %s's token", c)
		}
	}
	for _, q := range res.Problems {
		if q.Kind != p.Kind || q.Sentence != p.Sentence {
			continue
		}
		if q.Fix == nil {
			t.Fatalf("doctor --fix gives %s no fix", p.Kind)
		}
		for _, o := range q.Fix.Proposals {
			if !o.Offered {
				t.Logf("not offered: %s — %s", o.Title, o.Why)
				continue
			}
			if o.Proof == nil || !o.Proof.Resolves || len(o.Proof.Fail) > 0 {
				t.Fatalf("an offered fix without a holding proof: %+v", o)
			}
			if len(o.Files) == 0 {
				t.Fatalf("the fix's files were not written: %+v", o)
			}
			for _, f := range o.Files {
				b, err := os.ReadFile(f.Path)
				if err != nil || !strings.HasPrefix(string(b), "# meshscope doctor --fix: fixes "+string(p.Kind)) && !strings.HasPrefix(string(b), "#!/bin/sh\n# meshscope doctor --fix") {
					t.Errorf("%s: %v\n%s", f, err, b)
				}
			}
			return o
		}
		t.Fatalf("doctor --fix offers no fix of %s: %+v", p.Kind, q.Fix)
	}
	var same []string
	for _, q := range res.Problems {
		if q.Kind == p.Kind || testing.Verbose() {
			same = append(same, string(q.Kind)+": "+q.Sentence)
		}
	}
	t.Fatalf("doctor does not report %s: %s\n(its %s rows: %q)", p.Kind, p.Sentence, p.Kind, same)
	return fix.Offer{}
}

// kubectl runs the lab's kubectl against the lab.
func kubectl(t *testing.T, args ...string) {
	t.Helper()
	root, err := lab.FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(lab.BinDir(root), "kubectl"), append([]string{"--kubeconfig", theLab.Kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("kubectl %s: %s", strings.Join(args, " "), strings.TrimSpace(string(out)))
}

// setTemplateLabel sets (or removes) a label of a Deployment's pod
// template in the sample namespace.
func setTemplateLabel(ctx context.Context, cluster, deployment, key string, value *string) error {
	api := theLab.Cluster(cluster).Client().AppsV1().Deployments(lab.SampleNamespace)
	d, err := api.Get(ctx, deployment, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if value == nil {
		delete(d.Spec.Template.Labels, key)
	} else {
		d.Spec.Template.Labels[key] = *value
	}
	_, err = api.Update(ctx, d, metav1.UpdateOptions{})
	return err
}
