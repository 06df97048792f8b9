package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/meshscope/meshscope/analysis/fix"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/themes"
)

// problemsView is doctor's diagnosis (explain.Diagnose), live: errors
// first, a cause repeated over many pods or services one row with a count,
// each row jumping to the service or cluster it concerns; below, the
// selected problem's whole sentence, its fix and the fix's proof
// (view_problems_fix.go), and what could not be checked.
type problemsView struct {
	list listState // rows: indexes into all
	ix   *index
	// all are the rows: with a what-if, its new and resolved problems
	// first (marked), then the live ones; wi is that what-if.
	all []problemRow
	wi  *overlay
	// plan is the selected problem's fix as planned (by planKey).
	plan    fix.Plan
	planKey string
}

// problemRow is a problem of the live diagnosis, or one a what-if brings
// (whatIfNew) or resolves (whatIfResolved).
type problemRow struct {
	p  model.Problem
	wi string
}

// The marks of a what-if's problems.
const (
	whatIfNew      = "NEW"
	whatIfResolved = "RESOLVED"
)

func newProblemsView() *problemsView {
	v := &problemsView{ix: buildIndex(nil, nil, nil)}
	v.list.keyOf = func(i int32) string { return v.all[i].wi + "|" + problemKey(v.all[i].p) }
	return v
}

// problemKey identifies a problem across diagnoses. Digits are left out:
// a count that grows or a duration that ticks ("stale for 40s") is the
// same problem, and the cursor stays on it.
func problemKey(p model.Problem) string {
	noDigits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return -1
		}
		return r
	}, p.Sentence)
	return string(p.Severity) + "|" + string(p.Kind) + "|" + p.Cluster + "|" + p.Service + "|" + noDigits
}

// kindText is a problem's kind, with the count of a grouped row: "drop ×40".
func kindText(p model.Problem) string {
	if p.Count > 1 {
		return fmt.Sprintf("%s ×%d", p.Kind, p.Count)
	}
	return string(p.Kind)
}

func (v *problemsView) title(vc viewContext) string {
	errs := 0
	for _, p := range vc.ix.problems {
		if p.Severity == model.SeverityError {
			errs++
		}
	}
	t := fmt.Sprintf("Problems (%d, %d errors)", len(vc.ix.problems), errs)
	if vc.wi != nil {
		t += fmt.Sprintf(" · what-if: %d new, %d resolved (first)", len(vc.wi.rep.Problems.New), len(vc.wi.rep.Problems.Resolved))
	}
	return t
}

// detailLines is the height of the selected problem's sentence and fix:
// sentenceLines of the sentence, the rest the fix.
const (
	detailLines   = 7
	sentenceLines = 3
)

// rows is the number of problem rows on screen: the body less the header,
// the separator, the sentence and the notes.
func (v *problemsView) rows(vc viewContext) int {
	return max(vc.height-2-detailLines-len(v.notes(vc.ix)), 1)
}

// notes say what doctor could not check: the control planes whose set of
// clusters is unknown.
func (v *problemsView) notes(ix *index) []string {
	var out []string
	for _, cp := range ix.unknownCPs {
		out = append(out, fmt.Sprintf("Not checked: which clusters istiod %s reads (meshscope does not read its remote secrets): run meshscope with --context %s, or --istiod-debug-address %s=HOST:PORT.", cp, cp, cp))
	}
	return out
}

func (v *problemsView) refresh(vc viewContext, _ update) {
	if v.ix != vc.ix || v.wi != vc.wi {
		came := v.wi != vc.wi && vc.wi != nil
		v.ix, v.wi = vc.ix, vc.wi
		v.all = v.all[:0]
		if v.wi != nil {
			// The what-if's first: it is what the person just asked about.
			for _, p := range v.wi.rep.Problems.New {
				v.all = append(v.all, problemRow{p: p, wi: whatIfNew})
			}
			for _, p := range v.wi.rep.Problems.Resolved {
				v.all = append(v.all, problemRow{p: p, wi: whatIfResolved})
			}
		}
		for _, p := range v.ix.problems {
			v.all = append(v.all, problemRow{p: p})
		}
		v.list.rows = identity(v.list.rows, len(v.all))
		if came && len(v.all) > len(v.ix.problems) {
			// A what-if came: its problems are on top, and so is the cursor.
			v.list.cursor = cursor{}
		}
	}
	v.list.show(v.list.rows, v.rows(vc))
}

// selectKey puts the cursor on a live problem (by problemKey).
func (v *problemsView) selectKey(vc viewContext, k string) {
	v.refresh(vc, update{})
	v.list.selectKey("|"+k, v.rows(vc))
}

func (v *problemsView) key(vc viewContext, k tea.KeyPressMsg) (tea.Cmd, bool) {
	if key.Matches(k, vc.keys.Fix) {
		if p, ok := v.wantedFix(vc); ok {
			return wantFix(p, true), true
		}
		return nil, true
	}
	if !key.Matches(k, vc.keys.Enter) {
		if !v.list.scrollKey(vc.keys, k, v.rows(vc)) {
			return nil, false
		}
		if p, ok := v.wantedFix(vc); ok && vc.fx != nil && vc.fx.done[problemKey(p)] == nil {
			return wantFix(p, false), true
		}
		return nil, true
	}
	id, ok := v.list.selected()
	if !ok {
		return nil, true
	}
	p := v.all[id].p
	switch {
	case p.Service != "" && (v.ix.snap.Service(p.Service) != nil || v.wi.of(p.Service) != nil):
		return navigate(openServiceMsg{host: p.Service}), true
	case p.Cluster != "":
		return navigate(selectClusterMsg{id: p.Cluster}), true
	}
	return nil, true
}

func (v *problemsView) scroll(vc viewContext, d int) { v.list.moveBy(d, v.rows(vc)) }

func (v *problemsView) render(vc viewContext, w, h int) string {
	if vc.ix.snap == nil {
		return vc.waiting(w, h)
	}
	ps := v.all
	var notes []string
	for _, n := range v.notes(v.ix) {
		notes = append(notes, " "+vc.st.Warn.Render(fit(n, w-2)))
	}
	if len(ps) == 0 {
		return padLines(append([]string{"", vc.st.OK.Render("  no problems found"), ""}, notes...), w, h)
	}
	cols := problemColumns(ps, w, v.wi != nil)
	table := h - 1 - detailLines - len(notes)
	lines := vc.table(cols, &v.list, w, table, true, func(i int32, sel bool) []string {
		cells := problemCells(ps[i], v.wi != nil)
		out := make([]string, len(cells))
		for j, c := range cells {
			out[j] = cell(c.text, cols[j].w, vc.sel(vc.st.Of(c.tok), sel))
		}
		return out
	})
	for len(lines) < table {
		lines = append(lines, "")
	}
	// The whole sentence of the selected problem.
	id, _ := v.list.selected()
	lines = append(lines, vc.st.Border.Render(fit("", w)))
	lines = append(lines, vc.paintAll(v.problemDetail(vc, ps[id], w))...)
	for len(lines) < h-len(notes) {
		lines = append(lines, "")
	}
	return padLines(append(lines, notes...), w, h)
}

// problemColumns are the problems table's columns for a width, the
// what-if's mark first when one is laid over the mesh.
func problemColumns(ps []problemRow, w int, whatIf bool) []column {
	kindW := len("KIND")
	for _, r := range ps {
		kindW = max(kindW, len(kindText(r.p)))
	}
	kindW = min(kindW, max(w/4, 16))
	if whatIf {
		// Room for the what-if's mark: the kind gives it up first.
		kindW = min(kindW, max(w-62, 12))
	}
	cols := []column{
		{title: "SEVERITY", w: 8},
		{title: "KIND", w: kindW},
		{title: "CONCERNS", w: 0},
		{title: "PROBLEM", w: 0},
	}
	if whatIf {
		cols = append([]column{{title: "WHAT-IF", w: len(whatIfResolved)}}, cols...)
	}
	cols = layoutColumns(cols, w, 20)
	// The concerned object rarely needs half the width.
	if c := len(cols) - 2; cols[c].w > 40 {
		cols[c+1].w += cols[c].w - 40
		cols[c].w = 40
	}
	return cols
}

// problemCells are one problem's cells, one per column of problemColumns:
// the what-if's mark, the severity, the kind, what it concerns, the
// sentence.
func problemCells(r problemRow, whatIf bool) []span {
	p := r.p
	tok := severityToken(p.Severity)
	var out []span
	if whatIf {
		mark := themes.Error
		if r.wi == whatIfResolved {
			mark = themes.OK
		}
		out = append(out, sp(mark, r.wi))
	}
	concerns := p.Service
	switch {
	case concerns == "" && p.Cluster == "":
		concerns = "-"
	case concerns == "":
		concerns = "cluster " + p.Cluster
	case p.Cluster != "":
		concerns += " (" + p.Cluster + ")"
	}
	return append(out, sp(tok, string(p.Severity)), sp(tok, kindText(p)), sp(themes.Accent, concerns), sp(themes.Text, p.Sentence))
}

// problemDetail is the selected problem's whole sentence, saying what a
// what-if laid over the mesh does to it, in at most detailLines lines.
func (v *problemsView) problemDetail(vc viewContext, r problemRow, w int) []line {
	sentence := r.p.Sentence
	switch r.wi {
	case whatIfNew:
		sentence = "What-if " + v.wi.what() + " brings this problem: " + sentence
	case whatIfResolved:
		sentence = "What-if " + v.wi.what() + " resolves this problem: " + sentence
	}
	var out []line
	for i, l := range wrap(sentence, w-2) {
		if i == sentenceLines {
			break
		}
		out = append(out, line{sp(themes.Text, " "), sp(severityToken(r.p.Severity), l)})
	}
	return append(out, v.fixLines(vc, r, w, detailLines-len(out))...)
}
