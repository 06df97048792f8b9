package tui

import (
	"fmt"

	"github.com/meshscope/meshscope/model"
)

// maxCauses bounds the causes an empty view lists under its message.
const maxCauses = 3

// emptyLines is an empty view's message and, when clusters meshscope
// could not read may be why it is empty, why: "no services: no cluster
// synced" and below it each cause ("cluster c is unreachable (…)"),
// wrapped to w. With every cluster read it is the message alone, as
// before.
func (vc viewContext) emptyLines(msg string, w int) []string {
	unread := vc.ix.snap.Unread()
	if len(unread) == 0 {
		return []string{vc.st.Muted.Render(msg)}
	}
	lines := []string{vc.st.Muted.Render(msg + ": " + unreadSummary(vc.ix.snap, unread))}
	for i, u := range unread {
		text := u.Sentence()
		if i == maxCauses {
			text = fmt.Sprintf("and %d more (:clusters)", len(unread)-maxCauses)
		}
		for _, l := range wrap(text, max(w-4, 20)) {
			lines = append(lines, vc.st.Warn.Render("    "+l))
		}
		if i == maxCauses {
			break
		}
	}
	return lines
}

// unreadSummary says how much of the mesh is not read: "no cluster
// synced", or "2 of 3 clusters not read".
func unreadSummary(snap *model.Snapshot, unread []model.Incomplete) string {
	synced := 0
	for _, c := range snap.Clusters {
		if c.State == model.StateSynced {
			synced++
		}
	}
	if synced == 0 {
		return "no cluster synced"
	}
	return fmt.Sprintf("%d of %d clusters not read", len(unread), len(unread)+synced)
}
