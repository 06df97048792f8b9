package tui

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/meshscope/meshscope/collector/explain"
)

// problemsView is explain.Problems, live: errors first, each jumping to
// the service or cluster it concerns.
type problemsView struct {
	list listState // rows: indexes into ix.problems
	ix   *index
}

func newProblemsView() *problemsView {
	v := &problemsView{ix: buildIndex(nil, nil)}
	v.list.keyOf = func(i int32) string { return problemKey(v.ix.problems[i]) }
	return v
}

func problemKey(p explain.Problem) string {
	return string(p.Severity) + "|" + p.Kind + "|" + p.Cluster + "|" + p.Service + "|" + p.Sentence
}

func (v *problemsView) title(vc viewContext) string {
	errs := 0
	for _, p := range vc.ix.problems {
		if p.Severity == explain.Error {
			errs++
		}
	}
	return fmt.Sprintf("Problems (%d, %d errors)", len(vc.ix.problems), errs)
}

func (v *problemsView) rows(vc viewContext) int { return max(vc.height-5, 1) }

func (v *problemsView) refresh(vc viewContext, _ update) {
	if v.ix != vc.ix {
		v.ix = vc.ix
		v.list.rows = identity(v.list.rows, len(v.ix.problems))
	}
	v.list.show(v.list.rows, v.rows(vc))
}

// selectKey puts the cursor on a problem (by problemKey).
func (v *problemsView) selectKey(vc viewContext, k string) {
	v.refresh(vc, update{})
	v.list.selectKey(k, v.rows(vc))
}

func (v *problemsView) key(vc viewContext, k tea.KeyPressMsg) (tea.Cmd, bool) {
	if !key.Matches(k, vc.keys.Enter) {
		return nil, v.list.scrollKey(vc.keys, k, v.rows(vc))
	}
	id, ok := v.list.selected()
	if !ok {
		return nil, true
	}
	p := v.ix.problems[id]
	switch {
	case p.Service != "" && v.ix.snap.Service(p.Service) != nil:
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
	ps := v.ix.problems
	if len(ps) == 0 {
		return padLines([]string{"", vc.st.OK.Render("  no problems found")}, w, h)
	}
	cols := layoutColumns([]column{
		{title: "SEVERITY", w: 8},
		{title: "KIND", w: 16},
		{title: "CONCERNS", w: 0},
		{title: "PROBLEM", w: 0},
	}, w, 20)
	// The concerned object rarely needs half the width.
	if cols[2].w > 40 {
		cols[3].w += cols[2].w - 40
		cols[2].w = 40
	}
	lines := vc.table(cols, &v.list, w, h-4, true, func(i int32, sel bool) []string {
		p := ps[i]
		st := vc.severityStyle(p.Severity)
		concerns := p.Service
		if concerns == "" {
			concerns = "cluster " + p.Cluster
		} else if p.Cluster != "" {
			concerns += " (" + p.Cluster + ")"
		}
		return []string{
			cell(string(p.Severity), cols[0].w, vc.sel(st, sel)),
			cell(p.Kind, cols[1].w, vc.sel(vc.st.Text, sel)),
			cell(concerns, cols[2].w, vc.sel(vc.st.Accent, sel)),
			cell(p.Sentence, cols[3].w, vc.sel(vc.st.Text, sel)),
		}
	})
	for len(lines) < h-4 {
		lines = append(lines, "")
	}
	// The whole sentence of the selected problem.
	id, _ := v.list.selected()
	p := ps[id]
	lines = append(lines, vc.st.Border.Render(fit("", w)))
	for i, l := range wrap(p.Sentence, w-2) {
		if i == 3 {
			break
		}
		lines = append(lines, " "+vc.severityStyle(p.Severity).Render(l))
	}
	return padLines(lines, w, h)
}
