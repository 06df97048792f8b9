package explain

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/meshscope/meshscope/model"
)

// checkKinds fails when a problem was raised by no check, or by a check
// that does not declare its kind: a check's Kinds are what --list-checks
// promises it can raise.
func checkKinds(t *testing.T, ps []model.Problem) {
	t.Helper()
	for _, p := range ps {
		i := slices.IndexFunc(Checks, func(c Check) bool { return c.Name == p.Check })
		if i < 0 {
			t.Errorf("%s raised by no check (%q): %s", p.Kind, p.Check, p.Sentence)
			continue
		}
		if !slices.Contains(Checks[i].Kinds, p.Kind) {
			t.Errorf("check %s raised %s, which its Kinds do not list: %s", p.Check, p.Kind, p.Sentence)
		}
	}
}

// TestChecksClaimEveryKind: every problem kind of model/problems.go is one
// some check can raise, and check names are unique.
func TestChecksClaimEveryKind(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "../../model/problems.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	claimed := map[model.ProblemKind]bool{}
	names := map[string]bool{}
	for _, c := range Checks {
		if names[c.Name] {
			t.Errorf("two checks named %s", c.Name)
		}
		names[c.Name] = true
		if c.About == "" || len(c.Kinds) == 0 || c.run == nil {
			t.Errorf("check %s lacks its about, kinds or run", c.Name)
		}
		for _, k := range c.Kinds {
			claimed[k] = true
		}
	}
	n := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			v, err := strconv.Unquote(sp.(*ast.ValueSpec).Values[0].(*ast.BasicLit).Value)
			if err != nil {
				t.Fatal(err)
			}
			n++
			if !claimed[model.ProblemKind(v)] {
				t.Errorf("no check raises %s", v)
			}
		}
	}
	if n < 40 {
		t.Fatalf("only %d kinds read from model/problems.go", n)
	}
}

// TestRunSaysWhatDidNotRun: a check whose inputs are missing, and one
// skipped, are reported as not run, with why; the others still run.
func TestRunSaysWhatDidNotRun(t *testing.T) {
	s := mpSeed()
	d := Run(s, Inputs{Now: testNow, Skip: []string{"root-cas"}})
	why := map[string]string{}
	for _, nr := range d.NotRun {
		why[nr.Check] = nr.Why
	}
	for check, text := range map[string]string{
		"root-cas":    "skipped",
		"istiod-view": "no istiod's debug views",
		"sent-eds":    "no sidecar streams",
		"proxies":     "syncz",
		"ambient":     "no cluster runs ambient mode",
	} {
		if !strings.Contains(why[check], text) {
			t.Errorf("check %s: not-run reason %q, want it to say %q", check, why[check], text)
		}
	}
	if _, ok := why["clusters"]; ok {
		t.Errorf("clusters did not run: %s", why["clusters"])
	}
	if err := ValidateSkip([]string{"clusters", "nope"}); err == nil || !strings.Contains(err.Error(), "no check named nope") {
		t.Errorf("ValidateSkip(nope) = %v", err)
	}
}
