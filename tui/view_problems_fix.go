package tui

import (
	"fmt"
	"strings"

	"github.com/meshscope/meshscope/analysis/fix"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/themes"
)

// The problems view's fix of the selected problem: planned at once
// (analysis/fix), proven by the root in the background (fix.go), shown
// under the problem's sentence as spans, as the rows are.

// wantedFix is the selected problem, when it is one of the live
// diagnosis's (a what-if's new problem has no fix of its own).
func (v *problemsView) wantedFix(vc viewContext) (model.Problem, bool) {
	id, ok := v.list.selected()
	if !ok || int(id) >= len(v.all) || v.all[id].wi == whatIfNew || vc.ix.snap == nil {
		return model.Problem{}, false
	}
	return v.all[id].p, true
}

// planOf is a problem's plan, made once per selected problem (a plan of a
// big grouped row reads many objects).
func (v *problemsView) planOf(vc viewContext, p model.Problem) fix.Plan {
	if k := problemKey(p); k != v.planKey {
		v.plan, v.planKey = fix.Propose(vc.ix.snap, p), k
	}
	return v.plan
}

// fixLines say the selected problem's fix in at most n lines: its first
// proven proposal with the proof's summary, or the plan while the proof
// runs or cannot run, or why there is no fix.
func (v *problemsView) fixLines(vc viewContext, r problemRow, w, n int) []line {
	if n <= 0 || r.wi == whatIfNew || vc.ix.snap == nil {
		return nil
	}
	var spans [][]span
	add := func(tok themes.Token, label, text string) {
		for i, l := range wrap(label+text, w-2) {
			if i == 0 && label != "" {
				spans = append(spans, []span{sp(themes.Text, " "), sp(themes.Accent, label), sp(tok, strings.TrimPrefix(l, label))})
				continue
			}
			spans = append(spans, []span{sp(themes.Text, " "), sp(tok, l)})
		}
	}
	k := problemKey(r.p)
	var done *provenFix
	if vc.fx != nil {
		done = vc.fx.done[k]
	}
	pl := v.planOf(vc, r.p)
	switch {
	case pl.None != "":
		add(themes.Muted, "no mechanical fix: ", pl.None)
	case done != nil && done.f.Best() != nil:
		o := done.f.Best()
		add(themes.Text, "fix: ", o.Title)
		proof := o.Proof.Lines()[0]
		if done.version != vc.ix.snap.Version {
			proof += fmt.Sprintf(" (as of snapshot %d)", done.version)
		}
		add(themes.OK, "proof: ", proof+" — f lays it over the mesh as a what-if")
	case done != nil:
		add(themes.Text, "fix: ", pl.Proposals[0].Title)
		add(themes.Warn, "not offered: ", whyNot(done.f))
	case vc.fx != nil && vc.fx.running == k:
		add(themes.Text, "fix: ", pl.Proposals[0].Title)
		add(themes.Muted, "proof: ", "running what-if…")
	default:
		add(themes.Text, "fix: ", pl.Proposals[0].Title)
		add(themes.Muted, "proof: ", "not yet run — f proves it with what-if and lays it over the mesh")
	}
	out := make([]line, 0, n)
	for _, s := range spans {
		if len(out) == n {
			break
		}
		out = append(out, line(s))
	}
	return out
}

// whyNot says why no proposal of a fix is offered (the first's reason).
func whyNot(f fix.Fix) string {
	if len(f.Proposals) == 0 {
		return f.None
	}
	return f.Proposals[0].Why
}
