package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/themes"
	"github.com/meshscope/meshscope/xdsclient"
)

// viewContext is all a view may read of the program: the index of the
// latest snapshot, the styles and keys, the feed, the clock, the stream
// states and the size of the body. The root builds one for every call and
// hands it over by value: a view cannot change what another view sees.
type viewContext struct {
	ix     *index
	st     *themes.Styles
	keys   *keyMap
	feed   Feed
	now    func() time.Time
	status []xdsclient.StreamStatus
	// width and height are the body's size in cells: the terminal less the
	// header, the status bar and the input line when one is open.
	width, height int
	// fleet is the last fleet and map built (nil before the first).
	fleet *fleetIndex
	// wi is the what-if laid over the live mesh (nil: none, the views
	// show the live mesh alone).
	wi *overlay
	// fx are the problems' fixes proven so far (read only).
	fx *fixState
}

// view is what every screen implements. A view owns its cursor, filter and
// scroll; it reads shared state from the viewContext only, never calls
// another view, and asks the root for navigation with a message (see
// nav.go).
type view interface {
	// title names the view in the header.
	title(vc viewContext) string
	// key handles a key press; handled false lets the root try it.
	key(vc viewContext, k tea.KeyPressMsg) (cmd tea.Cmd, handled bool)
	// render draws the body in exactly w×h cells.
	render(vc viewContext, w, h int) string
	// refresh follows what changed (see update); the root calls it on every
	// view, open or not.
	refresh(vc viewContext, u update)
	// scroll moves by delta rows (mouse wheel).
	scroll(vc viewContext, delta int)
}

// filterable is implemented by the views "/" filters.
type filterable interface {
	filterQuery() string
	setFilter(vc viewContext, q string)
}

// update is what is new when the root refreshes the views. The zero value
// means only the size, the input mode or the theme changed.
type update struct {
	// index: a new index (a new snapshot, or verdicts recomputed after EDS
	// pushes).
	index bool
	// entries are new timeline entries (xDS events and kube changes),
	// oldest first.
	entries []entry
	// eds: an EDS push arrived (actual endpoints changed); config: a CDS,
	// LDS or RDS push did; wds: a ztunnel's WDS push did (ambient mode).
	eds, config, wds bool
	// whatIf: the what-if overlay came, changed or went.
	whatIf bool
}

// viewpoints are the feed's viewpoints, or the default ones of the snapshot.
func (vc viewContext) viewpoints() []xdsclient.Viewpoint {
	return viewpointsFor(vc.feed, vc.ix.snap)
}

// sel returns st for a selected row (with the selection background).
func (vc viewContext) sel(st lipgloss.Style, selected bool) lipgloss.Style {
	if selected {
		return st.Inherit(vc.st.Selection)
	}
	return st
}

// verdictStyle colours a service row's badge: by its worst problem, else
// by its verdict.
func (vc viewContext) verdictStyle(r *svcRow) lipgloss.Style {
	switch {
	case r.rank < len(rankSeverity):
		return vc.st.Of(severityToken(rankSeverity[r.rank]))
	case r.verdict == explain.Match:
		return vc.st.OK
	}
	return vc.st.Muted
}

// paneTitle renders a pane's title line.
func (vc viewContext) paneTitle(s string, focused bool, w int) string {
	if focused {
		return vc.st.Accent.Render(fit("▌"+s, w))
	}
	return vc.st.Muted.Render(fit(" "+s, w))
}

// table draws a header and the visible rows of a list in h lines (header
// included); cells renders the row with id (sel: draw it selected).
func (vc viewContext) table(cols []column, l *listState, w, h int, focused bool, cells func(id int32, sel bool) []string) []string {
	lines := make([]string, 0, h)
	lines = append(lines, headerLine(cols, vc.st.Header, w))
	rows := h - 1
	if rows <= 0 {
		return lines[:max(h, 0)]
	}
	start, end := l.window(len(l.rows), rows)
	used := rowWidth(cols)
	for i := start; i < end; i++ {
		sel := focused && i == l.cur
		line := rowLine(cells(l.rows[i], sel), sel, vc.st.Selection, w, used)
		if !focused && i == l.cur {
			line = ">" + line[1:]
		}
		lines = append(lines, line)
	}
	return lines
}

// waiting is the body of a view before the first snapshot.
func (vc viewContext) waiting(w, h int) string {
	return padLines([]string{"", vc.st.Warn.Render("  waiting for clusters…")}, w, h)
}
