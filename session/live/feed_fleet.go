package live

import (
	"github.com/meshscope/meshscope/analysis/fleet"
	"github.com/meshscope/meshscope/model"
)

// Syncz is the last poll of every istiod's /debug/syncz (tui.FleetFeed):
// one read per debug endpoint, each with its error; nil before the first
// poll or when no istiod debug endpoint is known. The reads are never
// changed after the poll stores them, so the slice is handed out as is.
// snap is the collector's snapshot taken just before the reads: joined
// with them, a pod that started after the poll is not taken for one that
// no istiod lists.
func (f *Feed) Syncz() (reads []fleet.Read, snap *model.Snapshot) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.syncz, f.synczSnap
}
