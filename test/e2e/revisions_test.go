package e2e

// A canary upgrade on the lab: a second istiod in cluster1 with
// REVISION=canary, its own ports and ConfigMap istio-canary, whose mesh
// config makes helloworld cluster-local. meshscope sees both revisions,
// doctor reports the differing ConfigMaps and a namespace labelled for a
// revision no istiod runs, and explain predicts what each revision really
// sends when told which one it talks to (--revision).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/whatif"
	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/model"
)

// canaryMesh makes helloworld cluster-local for the canary only.
const canaryMesh = lab.MeshConfigText + `serviceSettings:
- settings:
    clusterLocal: true
  hosts:
  - helloworld.sample.svc.cluster.local
`

func TestRevisionsOnLab(t *testing.T) {
	ctx := context.Background()
	def := theLab.Istiods()[0]
	canary, err := theLab.AddRevision(ctx, "cluster1", "canary", canaryMesh)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := theLab.RemoveRevision(context.Background(), "cluster1", "canary"); err != nil {
			t.Error(err)
		}
	})
	mesh := []string{"--context", "cluster1,cluster2"}

	// The snapshot holds both revisions of cluster1 with their ConfigMaps.
	out, code := runMeshscope(t, append([]string{"snapshot", "-o", "json"}, mesh...)...)
	var snap model.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil || code != 0 {
		t.Fatalf("snapshot (exit %d): %v\n%s", code, err, out)
	}
	c1 := snap.ClusterByID("cluster1")
	if got := c1.Revisions(); !slices.Equal(got, []string{"canary", "default"}) {
		t.Errorf("cluster1 revisions %v, want [canary default]", got)
	}
	if len(c1.RevisionConfigs) != 2 || c1.RevisionConfigs[0].ConfigMap != "istio-system/istio-canary" || len(c1.RevisionConfigs[0].ServiceSettings) != 1 {
		t.Errorf("cluster1 revision configs %+v", c1.RevisionConfigs)
	}
	// --revision canary: cluster1 is predicted for the canary, cluster2 —
	// where no canary runs — for its default revision.
	out, _ = runMeshscope(t, append([]string{"snapshot", "-o", "json", "--revision", "canary"}, mesh...)...)
	var canarySnap model.Snapshot
	if err := json.Unmarshal([]byte(out), &canarySnap); err != nil {
		t.Fatalf("snapshot --revision canary: %v\n%s", err, out)
	}
	if got := canarySnap.ClusterByID("cluster1").PredictedRevision; got != "canary" {
		t.Errorf("--revision canary: cluster1 predicted for %q", got)
	}
	if got := canarySnap.ClusterByID("cluster2").PredictedRevision; got != "" && got != "default" {
		t.Errorf("--revision canary: cluster2 predicted for %q, want its default", got)
	}
	if mc := canarySnap.MeshConfigFor("cluster2"); mc.Source != "configmap istio-system/istio" {
		t.Errorf("--revision canary: cluster2's mesh config from %s, want ConfigMap istio", mc.Source)
	}
	table, _ := runMeshscope(t, append([]string{"snapshot"}, mesh...)...)
	if !strings.Contains(table, "canary") || !strings.Contains(table, "istio-system/istio-canary") {
		t.Errorf("snapshot table lacks the canary revision:\n%s", table)
	}

	// doctor: the two revisions' ConfigMaps differ in serviceSettings.
	doctor := func() []model.Problem {
		ps, _ := doctorJSON(t, append([]string{"--offline"}, mesh...)...)
		return ps
	}
	ofKind := func(ps []model.Problem, kind model.ProblemKind) []model.Problem {
		var out []model.Problem
		for _, p := range ps {
			if p.Kind == kind {
				out = append(out, p)
			}
		}
		return out
	}
	ps := doctor()
	if got := ofKind(ps, model.ProblemRevisionConfigDiffers); len(got) != 1 || got[0].Severity != model.SeverityWarning ||
		!strings.Contains(got[0].Sentence, "revisions canary and default of cluster1 read different serviceSettings") ||
		!strings.Contains(got[0].Sentence, "cluster-local for canary only: helloworld.sample") {
		t.Errorf("revision-config-differs: %+v", got)
	}
	if got := ofKind(ps, model.ProblemNamespaceRevision); len(got) != 0 {
		t.Errorf("namespace-revision-missing before any label: %+v", got)
	}

	// A namespace labelled for a revision no istiod runs, then for the
	// canary: the problem comes and goes.
	setRev := func(v *string) {
		t.Helper()
		if err := theLab.SetLabel(ctx, "cluster1", lab.KindNamespace, "", "sample", model.LabelRev, v); err != nil {
			t.Fatal(err)
		}
	}
	nonexistent, canaryRev := "nonexistent", "canary"
	setRev(&nonexistent)
	t.Cleanup(func() { setRev(nil) })
	ps, code = doctorJSON(t, append([]string{"--offline"}, mesh...)...)
	if got := ofKind(ps, model.ProblemNamespaceRevision); len(got) != 1 || got[0].Severity != model.SeverityError || code != 1 ||
		!strings.Contains(got[0].Sentence, "namespace sample in cluster1 is labelled istio.io/rev=nonexistent, but no istiod of revision nonexistent runs in cluster1 (revisions there: canary, default)") {
		t.Errorf("namespace-revision-missing (exit %d): %+v", code, got)
	}
	setRev(&canaryRev)
	if got := ofKind(doctor(), model.ProblemNamespaceRevision); len(got) != 0 {
		t.Errorf("namespace-revision-missing with a running revision: %+v", got)
	}

	// Sidecars: one injected by a revision gone (1-27), one by the default
	// revision in a namespace that now asks for the canary.
	for _, p := range []struct{ name, ip, rev string }{{"rev-old-1", "10.44.0.91", "1-27"}, {"rev-default-1", "10.44.0.92", "default"}, {"rev-canary-1", "10.44.0.93", "canary"}} {
		spec := lab.PodSpec{Namespace: "sample", Name: p.name, IP: p.ip, Labels: map[string]string{"app": p.name, model.LabelRev: p.rev},
			Container: "istio-proxy", Image: "example.invalid/istio/proxyv2:1.31.0", Args: []string{"proxy", "sidecar"}}
		if err := theLab.AddPod(ctx, "cluster1", spec); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := theLab.RemovePod(context.Background(), "cluster1", "sample", p.name); err != nil {
				t.Error(err)
			}
		})
	}
	ps = doctor()
	if got := ofKind(ps, model.ProblemProxyRevision); len(got) != 1 || got[0].Severity != model.SeverityError ||
		!strings.Contains(got[0].Sentence, "sidecar sample/rev-old-1 in cluster1 was injected by revision 1-27, but no istiod of revision 1-27 runs in cluster1") {
		t.Errorf("proxy-revision-missing: %+v", got)
	}
	if got := ofKind(ps, model.ProblemProxyRevisionOutdated); len(got) != 1 || got[0].Severity != model.SeverityInfo ||
		!strings.Contains(got[0].Sentence, "sidecar sample/rev-default-1 in cluster1 runs the sidecar of revision default, but its namespace now asks for revision canary") {
		t.Errorf("proxy-revision-outdated: %+v", got)
	}
	// No real proxy runs in the lab: doctor read each revision's syncz
	// (through a port-forward to each revision's pod: the canary is
	// cluster1@canary), so the default's and the canary's pods are
	// disconnected, but the gone revision's is not known to be (no istiod
	// of it, no syncz).
	var disconnected []string
	for _, p := range ofKind(ps, model.ProblemProxyDisconnected) {
		disconnected = append(disconnected, p.Sentence+" "+strings.Join(p.Examples, " "))
	}
	if all := strings.Join(disconnected, "\n"); !strings.Contains(all, "rev-default-1") || !strings.Contains(all, "rev-canary-1") || strings.Contains(all, "rev-old-1") {
		t.Errorf("proxy-disconnected: %s", all)
	}

	// A revision tag: namespace sample asks for "prod", which the tag
	// webhook istio-revision-tag-prod points at the canary.
	prod := "prod"
	setRev(&prod)
	if got := ofKind(doctor(), model.ProblemNamespaceRevision); len(got) != 1 || !strings.Contains(got[0].Sentence, "no istiod of revision prod runs") {
		t.Errorf("namespace-revision-missing without the tag: %+v", got)
	}
	hooks := theLab.Cluster("cluster1").Client().AdmissionregistrationV1().MutatingWebhookConfigurations()
	tag := &admissionv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "istio-revision-tag-prod",
		Labels: map[string]string{model.LabelTag: "prod", model.LabelRev: "canary"}}}
	if _, err := hooks.Create(ctx, tag, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := hooks.Delete(context.Background(), tag.Name, metav1.DeleteOptions{}); err != nil {
			t.Error(err)
		}
	})
	if got := ofKind(doctor(), model.ProblemNamespaceRevision); len(got) != 0 {
		t.Errorf("namespace-revision-missing with the tag: %+v", got)
	}
	if table, _ := runMeshscope(t, append([]string{"snapshot"}, mesh...)...); !strings.Contains(table, "canary (tag prod)") {
		t.Errorf("snapshot table lacks the tag:\n%s", table)
	}
	setRev(&canaryRev)

	// explain, from a network1 proxy of cluster1, against each revision:
	// the default sends helloworld's cluster2 pod through its gateway, the
	// canary (cluster-local) does not; each matches its prediction when
	// meshscope reads that revision's ConfigMap.
	explainSvc := func(svc string, is *lab.Istiod, args ...string) (explain.View, int) {
		t.Helper()
		a := append([]string{"explain", svc, "--from", "cluster1/network1", "-o", "json",
			"--xds-address", "cluster1=" + is.XDSAddress()}, mesh...)
		out, code := runMeshscope(t, append(a, args...)...)
		var res struct {
			Views []explain.View `json:"views"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Views) != 1 {
			t.Fatalf("explain: %v\n%s", err, out)
		}
		return res.Views[0], code
	}
	explainOn := func(is *lab.Istiod, args ...string) (explain.View, int) {
		t.Helper()
		return explainSvc("helloworld.sample", is, args...)
	}
	addrs := func(v explain.View) string {
		var l []string
		for _, a := range v.Actual {
			l = append(l, fmt.Sprintf("%s:%d", a.Address, a.Port))
		}
		slices.Sort(l)
		return strings.Join(l, ",")
	}
	eventually(t, 30*time.Second, func() string {
		v, code := explainOn(def)
		if code != 0 || v.Verdict != explain.Match || addrs(v) != "10.44.0.13:5000,192.168.60.9:15443" {
			return fmt.Sprintf("default revision (exit %d): %s, actual %s: %+v", code, v.Verdict, addrs(v), v.Differences)
		}
		return ""
	})
	eventually(t, 30*time.Second, func() string {
		v, code := explainOn(canary, "--revision", "canary")
		if code != 0 || v.Verdict != explain.Match || addrs(v) != "10.44.0.13:5000" {
			return fmt.Sprintf("canary revision (exit %d): %s, actual %s: %+v", code, v.Verdict, addrs(v), v.Differences)
		}
		if !strings.Contains(strings.Join(v.Notes, "\n"), "istiod cluster1 runs revisions canary, default: this prediction is for revision canary") {
			return fmt.Sprintf("canary revision: notes %q", v.Notes)
		}
		return ""
	})
	// Told nothing of the revision, meshscope predicts with ConfigMap istio
	// and says the canary differs: the reason --revision exists.
	if v, _ := explainOn(canary); v.Verdict == explain.Match {
		t.Errorf("canary without --revision matches: %+v", v)
	}

	// Istio config labelled for the canary: a DestinationRule turning mTLS
	// off for sleep. The canary drops sleep's cluster2 pod for network1
	// (no mTLS across the gateway); the default revision ignores the rule.
	// Before it exists, what-if says what the rule would do: the canary's
	// proxies lose sleep's remote endpoint, the default revision's see no
	// change.
	drFile := filepath.Join(t.TempDir(), "dr.yaml")
	if err := os.WriteFile(drFile, []byte(canarySleepDR), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = runMeshscope(t, append([]string{"what-if", "-f", "cluster1=" + drFile, "-o", "json", "--fail-on", "none"}, mesh...)...)
	var rep whatif.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("what-if (exit %d): %v\n%s", code, err, out)
	}
	var canaryAfter []string
	for _, c := range rep.Changes {
		if c.Service != "sleep.sample.svc.cluster.local" {
			continue
		}
		switch c.Viewpoint {
		case "cluster1/network1@cluster1@canary":
			for _, e := range c.After {
				canaryAfter = append(canaryAfter, fmt.Sprintf("%s:%d", e.Address, e.Port))
			}
		case "cluster1/network1@cluster1":
			t.Errorf("what-if changes sleep for the default revision: %+v", c)
		}
	}
	if got := strings.Join(canaryAfter, ","); got != "10.44.0.14:80" {
		t.Errorf("what-if: sleep from cluster1/network1@cluster1@canary after the rule %q, want 10.44.0.14:80\n%s", got, strings.Join(rep.Summary, "\n"))
	}
	if err := theLab.ApplyIstioConfig(ctx, "cluster1", canarySleepDR); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := theLab.DeleteIstioConfig(context.Background(), "cluster1", canarySleepDR); err != nil {
			t.Error(err)
		}
	})
	eventually(t, 30*time.Second, func() string {
		v, code := explainSvc("sleep.sample", canary, "--revision", "canary")
		if code != 0 || v.Verdict != explain.Match || addrs(v) != "10.44.0.14:80" {
			return fmt.Sprintf("sleep on the canary (exit %d): %s, actual %s: %+v", code, v.Verdict, addrs(v), v.Differences)
		}
		return ""
	})
	if v, code := explainSvc("sleep.sample", def); code != 0 || v.Verdict != explain.Match || addrs(v) != "10.44.0.14:80,192.168.60.9:15443" {
		t.Errorf("sleep on the default revision (exit %d): %s, actual %s: %+v", code, v.Verdict, addrs(v), v.Differences)
	}
	// doctor, online, per revision: what each revision's istiod sends every
	// proxy is what meshscope predicts for that revision.
	c2 := theLab.Istiods()[1]
	for _, rc := range []struct {
		is   *lab.Istiod
		args []string
	}{{def, nil}, {canary, []string{"--revision", "canary"}}} {
		args := append([]string{"--context", "cluster1,cluster2", "--xds-address", "cluster1=" + rc.is.XDSAddress() + ",cluster2=" + c2.XDSAddress()}, rc.args...)
		ps, _ := doctorJSON(t, args...)
		for _, p := range ps {
			if p.Kind == model.ProblemXDSDiffers || p.Kind == model.ProblemStaleEndpoint || p.Kind == model.ProblemIstiodUnreachable {
				t.Errorf("doctor %v: %s: %s", rc.args, p.Kind, p.Sentence)
			}
		}
	}
	// The comparison is real: the canary's address with the default
	// revision's prediction differs (helloworld is cluster-local there).
	ps, _ = doctorJSON(t, "--context", "cluster1,cluster2", "--xds-address", "cluster1="+canary.XDSAddress()+",cluster2="+c2.XDSAddress())
	if got := ofKind(ps, model.ProblemXDSDiffers); len(got) == 0 || !strings.Contains(got[0].Sentence+strings.Join(got[0].Examples, " "), "helloworld") {
		t.Errorf("doctor on the canary's address with the default revision's prediction: %+v", got)
	}
	if out, _ := runMeshscope(t, append([]string{"doctor", "--offline"}, mesh...)...); !strings.Contains(out, "istiod cluster1 runs 2 revisions, each a control plane of its own: cluster1 is revision default, and cluster1@canary; what each sends is compared with its own prediction when meshscope reaches it (a port-forward to each revision's pod, or --xds-address cluster1@canary=ADDRESS).") {
		t.Errorf("doctor does not say which revision it checked:\n%s", out)
	}
	// doctor (for the default revision) says what it left out.
	if got := ofKind(doctor(), model.ProblemRevisionLabelledConfig); len(got) != 1 ||
		!strings.Contains(got[0].Sentence, "1 Istio config object(s) in cluster1 are labelled istio.io/rev=canary (DestinationRule sample/sleep-plaintext-canary)") {
		t.Errorf("revision-labelled-config: %+v", got)
	}

	// Each revision a control plane of its own (cluster1@canary), in one
	// run and without --revision: explain from a network1 proxy against
	// each matches what that revision really sends.
	all := "cluster1=" + def.XDSAddress() + ",cluster1@canary=" + canary.XDSAddress() + ",cluster2=" + c2.XDSAddress()
	for _, tc := range []struct{ svc, cp, want string }{
		{"helloworld.sample", "cluster1", "10.44.0.13:5000,192.168.60.9:15443"},
		{"helloworld.sample", "cluster1@canary", "10.44.0.13:5000"},
		{"sleep.sample", "cluster1", "10.44.0.14:80,192.168.60.9:15443"},
		{"sleep.sample", "cluster1@canary", "10.44.0.14:80"},
	} {
		out, code := runMeshscope(t, append([]string{"explain", tc.svc, "--from", "cluster1/network1@" + tc.cp, "-o", "json", "--xds-address", all}, mesh...)...)
		var res struct {
			Views []explain.View `json:"views"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Views) != 1 {
			t.Fatalf("explain %s from %s: %v\n%s", tc.svc, tc.cp, err, out)
		}
		if v := res.Views[0]; code != 0 || v.Verdict != explain.Match || addrs(v) != tc.want || v.Viewpoint.ControlPlane != tc.cp {
			t.Errorf("explain %s from cluster1/network1@%s (exit %d): %s, actual %s (want %s): %+v", tc.svc, tc.cp, code, v.Verdict, addrs(v), tc.want, v.Differences)
		}
	}
	// doctor, online, with both revisions: each matches its own
	// prediction, and the two are said to send a network1 proxy different
	// endpoints for helloworld (cluster-local on the canary) and sleep
	// (the canary's plaintext rule).
	revisionsDiffer := func(ps []model.Problem) string {
		for _, p := range ofKind(ps, model.ProblemRevisionsSendDifferently) {
			ex := strings.Join(p.Examples, "\n")
			if p.Severity == model.SeverityWarning && strings.Contains(p.Sentence, "revisions default and canary of cluster1 send a cluster1/network1 proxy different endpoints") &&
				strings.Contains(ex, "helloworld.sample:5000 (default: 10.44.0.13:5000 w=1, 192.168.60.9:15443 w=1; canary: 10.44.0.13:5000 w=1)") &&
				strings.Contains(ex, "sleep.sample:80") {
				t.Logf("%s: %s\n  %s", p.Kind, p.Sentence, ex)
				return ""
			}
		}
		return fmt.Sprintf("%+v", ofKind(ps, model.ProblemRevisionsSendDifferently))
	}
	ps, _ = doctorJSON(t, "--context", "cluster1,cluster2", "--xds-address", all)
	for _, p := range ps {
		if p.Kind == model.ProblemXDSDiffers || p.Kind == model.ProblemStaleEndpoint || p.Kind == model.ProblemIstiodUnreachable {
			t.Errorf("doctor with both revisions: %s: %s", p.Kind, p.Sentence)
		}
	}
	if why := revisionsDiffer(ps); why != "" {
		t.Errorf("revisions-send-differently with both addresses: %s", why)
	}
	// With no address at all, meshscope port-forwards to each revision's
	// own pod and finds the same.
	ps, _ = doctorJSON(t, "--context", "cluster1,cluster2")
	if why := revisionsDiffer(ps); why != "" {
		t.Errorf("revisions-send-differently through port-forwards: %s", why)
	}
	for _, p := range ps {
		if p.Kind == model.ProblemXDSDiffers || p.Kind == model.ProblemIstiodUnreachable {
			t.Errorf("doctor through port-forwards: %s: %s", p.Kind, p.Sentence)
		}
	}
	// --revision canary: cluster1 stands for the canary, and the default
	// revision is the control plane of its own (cluster1@default), reached
	// through its own pod; the same difference, named the other way round.
	ps, _ = doctorJSON(t, "--context", "cluster1,cluster2", "--revision", "canary")
	found := false
	for _, p := range ofKind(ps, model.ProblemRevisionsSendDifferently) {
		found = found || strings.Contains(p.Sentence, "revisions canary and default of cluster1 send a cluster1/network1 proxy different endpoints") &&
			strings.Contains(strings.Join(p.Examples, "\n"), "helloworld.sample:5000 (canary: 10.44.0.13:5000 w=1; default: 10.44.0.13:5000 w=1, 192.168.60.9:15443 w=1)")
	}
	if !found {
		t.Errorf("revisions-send-differently with --revision canary: %+v", ofKind(ps, model.ProblemRevisionsSendDifferently))
	}
	for _, p := range ps {
		if p.Kind == model.ProblemXDSDiffers || p.Kind == model.ProblemIstiodUnreachable {
			t.Errorf("doctor --revision canary through port-forwards: %s: %s", p.Kind, p.Sentence)
		}
	}
	// The canary made like the default (the same mesh config, its rule
	// gone): the difference clears.
	if err := theLab.SetRevisionMeshConfig(ctx, "cluster1", "canary", lab.MeshConfigText); err != nil {
		t.Fatal(err)
	}
	if err := theLab.DeleteIstioConfig(ctx, "cluster1", canarySleepDR); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, func() string {
		ps, _ := doctorJSON(t, "--context", "cluster1,cluster2", "--xds-address", all)
		if got := ofKind(ps, model.ProblemRevisionsSendDifferently); len(got) != 0 {
			return fmt.Sprintf("revisions-send-differently after the canary matches the default: %+v", got)
		}
		for _, p := range ps {
			if p.Kind == model.ProblemXDSDiffers {
				return "xds-differs: " + p.Sentence
			}
		}
		return ""
	})
}

// canarySleepDR is read by the canary only (istio.io/rev=canary).
const canarySleepDR = `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata:
  name: sleep-plaintext-canary
  namespace: sample
  labels:
    istio.io/rev: canary
spec:
  host: sleep.sample.svc.cluster.local
  trafficPolicy:
    tls:
      mode: DISABLE
`
