package tui

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/meshscope/meshscope/collector/explain"
)

// problemsView is explain.Problems, live: errors first, each jumping to
// the service or cluster it concerns.
type problemsView struct {
	c  cursor
	ix *index
}

func problemKey(p explain.Problem) string {
	return string(p.Severity) + "|" + p.Kind + "|" + p.Cluster + "|" + p.Service + "|" + p.Sentence
}

func (v *problemsView) title(m *Model) string {
	errs := 0
	for _, p := range m.ix.problems {
		if p.Severity == explain.Error {
			errs++
		}
	}
	return fmt.Sprintf("Problems (%d, %d errors)", len(m.ix.problems), errs)
}

func (v *problemsView) filterable() bool         { return false }
func (v *problemsView) filterQuery() string      { return "" }
func (v *problemsView) setFilter(*Model, string) {}

func (v *problemsView) rows(m *Model) int { return max(m.bodyHeight()-5, 1) }

func (v *problemsView) keyAt(m *Model) func(int) string {
	return func(i int) string { return problemKey(m.ix.problems[i]) }
}

func (v *problemsView) refresh(m *Model) {
	v.ix = m.ix
	v.c.relocate(len(m.ix.problems), v.keyAt(m), v.rows(m))
}

func (v *problemsView) selectKey(m *Model, k string) {
	v.c.key = k
	v.refresh(m)
}

func (v *problemsView) key(m *Model, k tea.KeyPressMsg) (tea.Cmd, bool) {
	if m.scrollKey(k, v.rows(m), func(d int) { v.scroll(m, d) }) {
		return nil, true
	}
	switch {
	case key.Matches(k, m.keys.Enter):
		if len(m.ix.problems) == 0 {
			return nil, true
		}
		p := m.ix.problems[v.c.cur]
		switch {
		case p.Service != "" && m.ix.snap.Service(p.Service) != nil:
			m.services.selectHost(m, p.Service)
			m.openService(p.Service)
		case p.Cluster != "":
			m.push(viewClusters)
			m.clusters.selectCluster(m, p.Cluster)
		}
	default:
		return nil, false
	}
	return nil, true
}

func (v *problemsView) scroll(m *Model, d int) {
	if n := len(m.ix.problems); n > 0 {
		v.c.move(d, n, v.rows(m), v.keyAt(m))
	}
}

func (v *problemsView) render(m *Model, w, h int) string {
	if m.ix.snap == nil {
		return padLines([]string{"", m.st.Warn.Render("  waiting for clusters…")}, w, h)
	}
	ps := m.ix.problems
	if len(ps) == 0 {
		return padLines([]string{"", m.st.OK.Render("  no problems found")}, w, h)
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
	lines := m.table(cols, len(ps), &v.c, w, h-4, true, func(i int, sel bool) []string {
		p := ps[i]
		st := m.severityStyle(p.Severity)
		concerns := p.Service
		if concerns == "" {
			concerns = "cluster " + p.Cluster
		} else if p.Cluster != "" {
			concerns += " (" + p.Cluster + ")"
		}
		return []string{
			cell(string(p.Severity), cols[0].w, m.sel(st, sel)),
			cell(p.Kind, cols[1].w, m.sel(m.st.Text, sel)),
			cell(concerns, cols[2].w, m.sel(m.st.Accent, sel)),
			cell(p.Sentence, cols[3].w, m.sel(m.st.Text, sel)),
		}
	})
	for len(lines) < h-4 {
		lines = append(lines, "")
	}
	// The whole sentence of the selected problem.
	p := ps[v.c.cur]
	lines = append(lines, m.st.Border.Render(fit("", w)))
	for i, l := range wrap(p.Sentence, w-2) {
		if i == 3 {
			break
		}
		lines = append(lines, " "+m.severityStyle(p.Severity).Render(l))
	}
	return padLines(lines, w, h)
}

func (m *Model) severityStyle(s explain.Severity) lipgloss.Style {
	switch s {
	case explain.Error:
		return m.st.Error
	case explain.Warning:
		return m.st.Warn
	}
	return m.st.Muted
}
