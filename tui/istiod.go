package tui

import (
	"github.com/meshscope/meshscope/model"
)

// IstiodFeed is the optional part of a Feed that serves istiod's own view
// (/debug/clusterz, /debug/networkz) of each control plane it can reach.
type IstiodFeed interface {
	Istiod() []model.IstiodView
}

// istiodOpinion is what istiod says of a cluster when that disagrees with
// meshscope ("istiod (cluster1) says synced"), else "".
func istiodOpinion(feed Feed, c model.Cluster) string {
	f, ok := feed.(IstiodFeed)
	if !ok {
		return ""
	}
	for _, v := range f.Istiod() {
		for _, ic := range v.Clusters {
			if ic.ID != c.ID {
				continue
			}
			ours := c.State == model.StateSynced
			theirs := ic.SyncStatus == "synced"
			if ours != theirs {
				return "istiod (" + v.ControlPlane + ") says " + ic.SyncStatus
			}
		}
	}
	return ""
}
