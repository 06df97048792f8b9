package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshscope/meshscope/analysis/fix"
	"github.com/meshscope/meshscope/model"
)

// TestDoctorFixDemo: doctor --fix on the demo gives each planted problem
// a fix or why none is mechanical — the drop, the duplicate gateway and
// the missing Service proven and written by --fix-dir (a file per cluster,
// its header saying what it fixes and what what-if predicted, what-if
// taking it back), cluster4's remote secret unproven (no context of
// meshscope's for it), the root CAs none — in text and JSON; nothing
// shows the demo's remote-secret tokens; doctor still exits 1.
func TestDoctorFixDemo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fixes")
	out, err := runCLI(t, "doctor", "--demo", "--offline", "-o", "json", "--fix-dir", dir)
	if code, _ := exitOf(err); code != 1 {
		t.Fatalf("doctor --fix: err %v, want exit status 1", err)
	}
	var res struct {
		Problems []struct {
			model.Problem
			Fix *fix.Fix `json:"fix"`
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	offered := map[model.ProblemKind]fix.Offer{}
	none := map[model.ProblemKind]string{}
	for _, p := range res.Problems {
		if p.Fix == nil {
			t.Fatalf("%s has no fix in the JSON", p.Kind)
		}
		none[p.Kind] = p.Fix.None
		for _, o := range p.Fix.Proposals {
			if o.Offered {
				offered[p.Kind] = o
				break
			}
		}
	}
	for _, k := range []model.ProblemKind{model.ProblemDrop, model.ProblemDuplicateGateway, model.ProblemMissingService, model.ProblemAmbientScopeMismatch} {
		o, ok := offered[k]
		if !ok || o.Proof == nil || !o.Proof.Resolves || len(o.Files) == 0 {
			t.Errorf("%s: no proven fix written: %+v", k, o)
			continue
		}
		for _, f := range o.Files {
			b, err := os.ReadFile(f.Path)
			if err != nil || !strings.HasPrefix(string(b), "# meshscope doctor --fix: fixes "+string(k)) || !strings.Contains(string(b), "what-if predicted") {
				t.Errorf("%s: %v\n%s", f.Path, err, b)
			}
			// what-if takes the file back, and predicts the fix.
			wi, err := runCLI(t, "what-if", "--demo", "-f", f.Cluster+"="+f.Path, "--fail-on", "none")
			if err != nil || !strings.Contains(wi, string(k)) && f.Verb != "create" {
				t.Errorf("what-if -f %s: %v\n%s", f.Path, err, wi)
			}
		}
	}
	if none[model.ProblemRootCAMismatch] == "" {
		t.Error("root-ca-mismatch: no reason why no fix is mechanical")
	}
	text, _ := runCLI(t, "doctor", "--demo", "--offline", "--fix", "--all-fixes")
	for _, want := range []string{"FIXES", "fix: create Service shop/adservice in cluster2", "no mechanical fix: the clusters need certificates from one shared root",
		"istioctl create-remote-secret --context CONTEXT-OF-cluster4 --name cluster4 | kubectl apply --context cluster1 -f -", "not proven: meshscope reads cluster cluster4 through no kube context"} {
		if !strings.Contains(text, want) {
			t.Errorf("doctor --fix --all-fixes lacks %q:\n%s", want, text)
		}
	}
	for _, secret := range []string{"demo-token", "BEGIN CERTIFICATE"} {
		if strings.Contains(out+text, secret) {
			t.Errorf("doctor --fix shows %q", secret)
		}
	}
	if _, err := runCLI(t, "doctor", "--demo", "--fix-dir", filepath.Join(dir, "01-drop-legacy-billing-v1-hdjshjt6n-6z8bc-cluster3.yaml")); err == nil {
		t.Error("a --fix-dir that is a file is accepted")
	} else if code, _ := exitOf(err); code != 2 {
		t.Errorf("a --fix-dir that is a file: exit %d, want 2 (bad input)", code)
	}
}
