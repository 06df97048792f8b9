package explain

import (
	"fmt"
	"slices"

	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
)

// unreadNotes says, for a service predicted from the cut view pv of a
// control plane (which reads the clusters pv.Reads, learned from its
// remote secrets or its clusterz), which of its endpoints that istiod never sends because
// it does not read their cluster, and why.
func unreadNotes(pv *plane.View, host string) []string {
	full, cp, reads := pv.Full, pv.Name, pv.Reads
	if !pv.Cut() || !pv.Known() {
		return nil
	}
	svc := full.Service(host)
	if svc == nil {
		return nil
	}
	why := cp + " holds no remote secret for it"
	if pv.From == plane.FromClusterz {
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
