package tui

import (
	"strings"
	"testing"

	"github.com/meshscope/meshscope/analysis/fix"
	"github.com/meshscope/meshscope/model"
)

// deliver runs a key's command and the commands that follow from it, as
// the program would (a proof's wish, then its answer), up to n steps.
func deliver(m *Model, k string, n int) {
	_, cmd := m.Update(keyMsg(k))
	for ; cmd != nil && n > 0; n-- {
		_, cmd = m.Update(cmd())
	}
}

// TestProblemsFix: the selected problem's fix is planned at once, proven
// in the background through Options.Fix when the cursor lands on it, shown
// with its proof's summary, and f lays its what-if over the mesh (the
// overlay every view reads); a problem without a mechanical fix says why.
func TestProblemsFix(t *testing.T) {
	m := goldenModel(t, "default", 120, 40)
	var asked []string
	m.opts.Fix = func(p model.Problem) fix.Fix {
		asked = append(asked, string(p.Kind))
		rep := testReport()
		return fix.Fix{Problem: p, Proposals: []fix.Offer{{Proposal: fix.Proposal{Title: "label the pod template of legacy"}, Offered: true,
			Proof: &fix.Proof{Resolves: true, Resolved: rep.Problems.Resolved, Report: rep}}}}
	}
	runLine(m, "problems")
	if got := plain(m); !strings.Contains(got, "no mechanical fix: the cause is outside the mesh's objects") {
		t.Fatalf("cluster-state's detail:\n%s", got)
	}
	deliver(m, "j", 3) // control-plane-missing-cluster
	deliver(m, "j", 3) // drop
	if got := plain(m); !strings.Contains(got, "fix: label the pod template of legacy") || !strings.Contains(got, "proof: resolves it") {
		t.Fatalf("the drop's detail:\n%s", got)
	}
	if strings.Join(asked, ",") != "control-plane-missing-cluster,drop" {
		t.Errorf("proofs asked: %v", asked)
	}
	deliver(m, "f", 3)
	if s := statusLine(m); !strings.Contains(s, "WHAT-IF: fix: label the pod template of legacy") {
		t.Errorf("f did not lay the fix over the mesh: %q", s)
	}
	if len(asked) != 2 {
		t.Errorf("f proved again: %v", asked)
	}
}
