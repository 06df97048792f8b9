package fix

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/whatif"
	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

// declaredKinds are the problem kinds of model/problems.go, read from its
// source (the one list; a kind another branch adds is held here too).
func declaredKinds(t *testing.T) []model.ProblemKind {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../../model/problems.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []model.ProblemKind
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			vs := sp.(*ast.ValueSpec)
			v, err := strconv.Unquote(vs.Values[0].(*ast.BasicLit).Value)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, model.ProblemKind(v))
		}
	}
	if len(out) < 40 {
		t.Fatalf("read %d kinds from model/problems.go", len(out))
	}
	return out
}

// TestEveryKindHasAnEntry: every problem kind either has a planner or says
// why no fix is mechanical (as TestChecksClaimEveryKind holds every kind
// to a check), and the table names no kind that does not exist.
func TestEveryKindHasAnEntry(t *testing.T) {
	declared := map[model.ProblemKind]bool{}
	for _, k := range declaredKinds(t) {
		declared[k] = true
		e, ok := kinds[k]
		switch {
		case !ok:
			t.Errorf("kind %s has no entry in analysis/fix's table: give it a planner or say why none is mechanical", k)
		case e.plan == nil && e.none == "":
			t.Errorf("kind %s: neither a planner nor a reason", k)
		}
	}
	for k := range kinds {
		if !declared[k] {
			t.Errorf("analysis/fix names kind %s, which model/problems.go does not declare", k)
		}
	}
}

// TestDocsFixColumn: the problem tables of the docs have a fix column
// that agrees with the table: "none: …" for a kind without a planner,
// the fix otherwise.
func TestDocsFixColumn(t *testing.T) {
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\| (?:error|warning|info)[^|]*\\|(.*)$")
	seen := 0
	for _, doc := range []string{"../../docs/explain.md", "../../docs/proxies.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range row.FindAllStringSubmatch(string(b), -1) {
			seen++
			cells := strings.Split(strings.TrimSuffix(strings.TrimSpace(m[2]), "|"), " | ")
			if len(cells) < 2 {
				t.Errorf("%s: kind %s has no fix column", doc, m[1])
				continue
			}
			fixCell := strings.TrimSpace(cells[len(cells)-1])
			e := kinds[model.ProblemKind(m[1])]
			switch {
			case fixCell == "":
				t.Errorf("%s: kind %s: empty fix column", doc, m[1])
			case e.plan == nil && !strings.HasPrefix(fixCell, "none"):
				t.Errorf("%s: kind %s has no planner, but its fix column says %q (want none: why)", doc, m[1], fixCell)
			case e.plan != nil && strings.HasPrefix(fixCell, "none"):
				t.Errorf("%s: kind %s has a planner, but its fix column says %q", doc, m[1], fixCell)
			}
		}
	}
	if seen < 40 {
		t.Fatalf("read %d rows of problem tables", seen)
	}
}

// problemOf is the first problem of kind k doctor's prediction-only
// diagnosis finds in snap.
func problemOf(t *testing.T, snap *model.Snapshot, k model.ProblemKind) model.Problem {
	t.Helper()
	for _, p := range explain.Diagnose(snap, explain.Inputs{Now: time.Now()}) {
		if p.Kind == k {
			return p
		}
	}
	t.Fatalf("no %s problem in the snapshot", k)
	return model.Problem{}
}

func TestPlans(t *testing.T) {
	for _, c := range []struct {
		name  string
		kind  model.ProblemKind
		plant func(s *model.Snapshot)
		// want are the first proposal's title and its edits' objects.
		title    string
		objects  []string
		unproven bool
	}{
		{"the gateway Service of network2 unlabelled: the label", model.ProblemLeak,
			func(s *model.Snapshot) {
				s.Gateways = s.Gateways[:1]
				delete(s.Service(model.Hostname("istio-eastwestgateway", "istio-system")).Clusters["cluster2"].Labels, model.LabelNetwork)
			},
			"label the east-west gateway Service istio-system/istio-eastwestgateway in cluster2 topology.istio.io/network=network2",
			[]string{"Service istio-system/istio-eastwestgateway in cluster2"}, false},
		{"a pod without the mTLS label and without a sidecar: injection first", model.ProblemDrop,
			func(s *model.Snapshot) { s.Service(meshtest.Hello).Clusters["cluster2"].Endpoints[0].TLSMode = "" },
			"inject the sidecar: label Namespace sample in cluster2 istio-injection=enabled and restart the workloads of pod sample/helloworld-v2 in cluster2",
			[]string{"Namespace sample in cluster2"}, true},
		{"a pod with a sidecar without the mTLS label: its template labelled", model.ProblemDrop,
			func(s *model.Snapshot) {
				s.Service(meshtest.Hello).Clusters["cluster2"].Endpoints[0].TLSMode = ""
				s.Proxies = []model.ProxyPod{{Cluster: "cluster2", Namespace: "sample", Name: "helloworld-v2", Kind: model.ProxySidecar}}
			},
			"label the pod templates of the workloads of pod sample/helloworld-v2 in cluster2 security.istio.io/tlsMode=istio",
			[]string{"Pod sample/helloworld-v2 in cluster2"}, false},
		{"a gateway Service whose label names a port it lacks: the port added first", model.ProblemGatewayPort,
			func(s *model.Snapshot) {
				s.Service(model.Hostname("istio-eastwestgateway", "istio-system")).Clusters["cluster2"].Labels[model.LabelGatewayPort] = "15444"
			},
			"expose port 15444 (named tls, to the gateway's port 15443) on Service istio-system/istio-eastwestgateway in cluster2",
			[]string{"Service istio-system/istio-eastwestgateway in cluster2"}, false},
		{"a DestinationRule turning TLS off: its tls removed first", model.ProblemDrop,
			func(s *model.Snapshot) {
				s.DestinationRules = []model.DestinationRule{{Cluster: "cluster1", Namespace: "sample", Name: "plain", Host: meshtest.Hello, TLSMode: "DISABLE", TrafficPolicy: true}}
			},
			"remove the tls settings that are not ISTIO_MUTUAL from DestinationRule sample/plain in cluster1",
			[]string{"DestinationRule sample/plain in cluster1"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := meshtest.Lab()
			c.plant(s)
			pl := Propose(s, problemOf(t, s, c.kind))
			if len(pl.Proposals) == 0 {
				t.Fatalf("no proposal: %s", pl.None)
			}
			pr := pl.Proposals[0]
			var objs []string
			for _, e := range pr.Edits {
				objs = append(objs, e.Object.String())
			}
			if pr.Title != c.title || strings.Join(objs, ";") != strings.Join(c.objects, ";") || (pr.Unproven != "") != c.unproven {
				t.Errorf("first proposal %q on %v (unproven %q), want %q on %v", pr.Title, objs, pr.Unproven, c.title, c.objects)
			}
		})
	}
}

// TestPlanMissingClusterAndRevision: a primary without the remote secret
// of the other gets istioctl's command, proven through the secret it
// writes; a namespace labelled for a revision that does not run, the
// running revision's label, then none.
func TestPlanMissingClusterAndRevision(t *testing.T) {
	s := meshtest.LabMultiPrimary(time.Now())
	s.Clusters[0].Sources = s.Clusters[0].Sources[:1] // cluster2 holds no secret for cluster1
	pl := Propose(s, problemOf(t, s, model.ProblemControlPlaneMissingCluster))
	if len(pl.Proposals) != 1 {
		t.Fatalf("plan: %+v", pl)
	}
	pr := pl.Proposals[0]
	e := pr.Edits[0]
	if pr.Command != "istioctl create-remote-secret --context cluster1 --name cluster1 | kubectl apply --context cluster2 -f -" ||
		e.RemoteSecret != "cluster1" || e.SecretKey != "cluster1" || e.Object.String() != "Secret istio-system/istio-remote-secret-cluster1 in cluster2" || pr.Unproven != "" {
		t.Errorf("proposal: %+v", pr)
	}

	s = meshtest.LabMultiPrimary(time.Now())
	s.Ambient = []model.AmbientCluster{{Cluster: "cluster1", Namespaces: map[string]map[string]string{"sample": {model.LabelRev: "gone"}}}}
	pl = Propose(s, problemOf(t, s, model.ProblemNamespaceRevision))
	if len(pl.Proposals) != 2 || pl.Proposals[0].Title != "label Namespace sample in cluster1 istio-injection=enabled (revision default runs there)" ||
		pl.Proposals[1].Title != "remove the injection labels of Namespace sample in cluster1" {
		t.Fatalf("plan: %+v", pl)
	}
	ns := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "sample", "labels": map[string]any{model.LabelRev: "gone", "team": "a"}}}}
	if err := pl.Proposals[0].Edits[0].Apply(ns); err != nil {
		t.Fatal(err)
	}
	if got := ns.GetLabels(); len(got) != 2 || got[model.LabelInjection] != "enabled" || got["team"] != "a" {
		t.Errorf("labels after the edit: %v", got)
	}
}

// TestEdits: a template label lands on the pod template (not the
// workload's own labels); a DestinationRule loses every tls setting that
// is not ISTIO_MUTUAL, subsets' and ports' too; a copied Service has no
// cluster IP, node port or owner of the cluster it came from.
func TestEdits(t *testing.T) {
	d := &unstructured.Unstructured{Object: map[string]any{"kind": "Deployment", "metadata": map[string]any{"name": "d", "labels": map[string]any{"app": "x"}},
		"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "x"}}}}}}
	if err := setLabel(model.ObjectRef{Kind: "Pod", Name: "p"}, true, model.LabelTLSMode, ptr("istio")).Apply(d); err != nil {
		t.Fatal(err)
	}
	tl, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "labels")
	if tl[model.LabelTLSMode] != "istio" || d.GetLabels()[model.LabelTLSMode] != "" {
		t.Errorf("template labels %v, own labels %v", tl, d.GetLabels())
	}

	dr := meshtest.IstioObject(t, `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: r, namespace: sample}
spec:
  host: h
  trafficPolicy:
    tls: {mode: DISABLE}
    portLevelSettings:
    - port: {number: 80}
      tls: {mode: SIMPLE}
    - port: {number: 81}
      tls: {mode: ISTIO_MUTUAL}
    loadBalancer: {simple: RANDOM}
  subsets:
  - name: v1
    trafficPolicy: {tls: {mode: DISABLE}}
`)
	pl := planDestinationRuleTLS(model.ObjectRef{Kind: "DestinationRule", Name: "r"})
	removed, mutual := dr.DeepCopy(), dr.DeepCopy()
	if err := pl.Proposals[0].Edits[0].Apply(removed); err != nil {
		t.Fatal(err)
	}
	if err := pl.Proposals[1].Edits[0].Apply(mutual); err != nil {
		t.Fatal(err)
	}
	for name, u := range map[string]*unstructured.Unstructured{"removed": removed, "mutual": mutual} {
		spec := u.Object["spec"].(map[string]any)
		tp := spec["trafficPolicy"].(map[string]any)
		pls := tp["portLevelSettings"].([]any)
		sub := spec["subsets"].([]any)[0].(map[string]any)["trafficPolicy"].(map[string]any)
		want := map[string]any(nil)
		if name == "mutual" {
			want = map[string]any{"mode": "ISTIO_MUTUAL"}
		}
		got := []any{tp["tls"], pls[0].(map[string]any)["tls"], sub["tls"]}
		for _, g := range got {
			gm, _ := g.(map[string]any)
			if (want == nil) != (gm == nil) || (want != nil && gm["mode"] != "ISTIO_MUTUAL") {
				t.Errorf("%s: tls settings %v", name, got)
				break
			}
		}
		if pls[1].(map[string]any)["tls"].(map[string]any)["mode"] != "ISTIO_MUTUAL" || tp["loadBalancer"] == nil {
			t.Errorf("%s: the rest of the rule changed: %v", name, tp)
		}
	}

	svc := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "s", "namespace": "n", "uid": "u", "resourceVersion": "9", "ownerReferences": []any{map[string]any{"name": "o"}}},
		"spec":     map[string]any{"clusterIP": "10.96.0.1", "clusterIPs": []any{"10.96.0.1"}, "selector": map[string]any{"app": "s"}, "ports": []any{map[string]any{"port": int64(80), "nodePort": int64(30080)}}},
		"status":   map[string]any{"loadBalancer": map[string]any{}}}}
	c := Copy(svc)
	ports, _, _ := unstructured.NestedSlice(c.Object, "spec", "ports")
	if _, ok := c.Object["status"]; ok || c.GetUID() != "" || c.GetResourceVersion() != "" || len(c.GetOwnerReferences()) != 0 ||
		c.Object["spec"].(map[string]any)["clusterIP"] != nil || ports[0].(map[string]any)["nodePort"] != nil || svc.GetUID() != "u" {
		t.Errorf("copy: %v (live: %v)", c.Object, svc.Object)
	}
}

// TestJudge: a proposal is proven only when the problem is in the
// what-if's before, gone from its after, and what-if's default rules hold.
func TestJudge(t *testing.T) {
	p := model.Problem{Kind: model.ProblemDrop, Cluster: "c2", Sentence: "x ×3", Group: &model.ProblemGroup{Key: "drop|pod-label|c2|network1"}}
	same := model.Problem{Kind: model.ProblemDrop, Cluster: "c2", Sentence: "x ×1", Group: &model.ProblemGroup{Key: "drop|pod-label|c2|network1"}}
	other := model.Problem{Kind: model.ProblemDrop, Sentence: "y", Severity: model.SeverityError, Group: &model.ProblemGroup{Key: "drop|pod-label|c3|network1"}}
	for _, c := range []struct {
		name          string
		before, after []model.Problem
		resolves      bool
		fails         int
	}{
		{"gone", []model.Problem{same}, nil, true, 0},
		{"stays (another count)", []model.Problem{same}, []model.Problem{same}, false, 1},
		{"not there before", nil, nil, false, 1},
		{"gone, but a new error", []model.Problem{same}, []model.Problem{other}, true, 1},
	} {
		rep := &whatif.Report{Problems: whatif.Problems{Before: c.before, After: c.after}}
		if len(c.after) > 0 && c.after[0].Group.Key != same.Group.Key {
			rep.Problems.New = c.after
		}
		pr := Judge(p, rep)
		if pr.Resolves != c.resolves || len(pr.Fail) != c.fails {
			t.Errorf("%s: resolves %v, fail %v", c.name, pr.Resolves, pr.Fail)
		}
	}
	a := model.Problem{Kind: model.ProblemNamespaceRevision, Objects: []model.ObjectRef{{Cluster: "c1", Kind: "Namespace", Name: "sample"}}, Sentence: "a"}
	b := model.Problem{Kind: model.ProblemNamespaceRevision, Objects: []model.ObjectRef{{Cluster: "c1", Kind: "Namespace", Name: "sample"}}, Sentence: "b"}
	if !Same(a, b) || Same(a, model.Problem{Kind: model.ProblemNamespaceRevision, Objects: []model.ObjectRef{{Cluster: "c2", Kind: "Namespace", Name: "sample"}}}) {
		t.Error("Same: one namespace is one problem, another namespace another")
	}
}
