package explain

import (
	"fmt"
	"slices"
	"sync"

	"github.com/meshscope/meshscope/model"
)

// cpViews memoizes the per-control-plane cut of the latest snapshot: a
// reader explains every service of one snapshot in a row (the UI's
// services view), and the cut is the same for all of them.
var cpViews struct {
	sync.Mutex
	snap  *model.Snapshot
	views map[string]*model.Snapshot
}

// forControlPlane is snap.ForControlPlane(cp), computed once per snapshot.
func forControlPlane(snap *model.Snapshot, cp string) *model.Snapshot {
	cpViews.Lock()
	defer cpViews.Unlock()
	if cpViews.snap != snap {
		cpViews.snap, cpViews.views = snap, map[string]*model.Snapshot{}
	}
	v, ok := cpViews.views[cp]
	if !ok {
		v = snap.ForControlPlane(cp)
		cpViews.views[cp] = v
	}
	return v
}

// unreadNotes says, for a service predicted from the cut view of control
// plane cp (which reads the clusters reads, learned from its remote secrets
// or its clusterz), which of its endpoints that istiod never sends because
// it does not read their cluster, and why.
func unreadNotes(full, view *model.Snapshot, cp, host string, reads []string, from string) []string {
	if view == full {
		return nil
	}
	svc := full.Service(host)
	if svc == nil {
		return nil
	}
	why := cp + " holds no remote secret for it"
	if from == "clusterz" {
		why = "its /debug/clusterz does not list it (no working remote secret)"
	}
	var notes []string
	for _, cid := range sortedKeys(svc.Clusters) {
		sic := svc.Clusters[cid]
		if slices.Contains(reads, cid) || len(sic.Endpoints) == 0 {
			continue
		}
		c := full.ClusterByID(cid)
		net := "no network"
		if c != nil && c.Network != "" {
			net = c.Network
		}
		notes = append(notes, fmt.Sprintf("istiod %s does not read cluster %s: %s, so the %d endpoint(s) of %s in %s (%s) never reach this control plane's proxies — add the remote secret for %s to %s",
			cp, cid, why, len(sic.Endpoints), model.ShortHost(host), cid, net, cid, cp))
	}
	return notes
}
