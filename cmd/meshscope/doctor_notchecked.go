package main

import (
	"fmt"
	"io"

	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
)

// writeNotChecked says, for each control plane whose set of clusters
// meshscope cannot tell, that doctor did not check which clusters it
// reads — and the real reason, with the way out that fits it.
func writeNotChecked(w io.Writer, planes *plane.Set) {
	snap := planes.Snapshot()
	for _, cp := range planes.Unknown() {
		fmt.Fprintf(w, "Not checked: which clusters istiod %s reads: %s.\n", cp, notCheckedWhy(snap, cp))
	}
}

// notCheckedWhy is why the remote secrets of cp's cluster were not read
// (and its /debug/clusterz is not at hand), and what to do about it.
func notCheckedWhy(snap *model.Snapshot, cp string) string {
	id := model.ControlPlaneCluster(cp)
	c := snap.ClusterByID(id)
	switch {
	case c == nil || !c.IsContext():
		return fmt.Sprintf("meshscope does not read its remote secrets (%s is not one of the contexts given): give --context %s, or --istiod-debug-address %s=HOST:PORT", id, id, cp)
	case c.State != model.StateSynced:
		why := c.Reason
		if why == "" {
			why = "still " + string(c.State)
		}
		return fmt.Sprintf("its remote secrets were not read: %s (given with --context); doctor checks it once it answers, or with --istiod-debug-address %s=HOST:PORT",
			model.Incomplete{Cluster: id, What: model.IncompleteCluster, Why: why}.Sentence(), cp)
	}
	return fmt.Sprintf("meshscope may not read the remote secrets in %s (see its warnings in meshscope snapshot): give --istiod-debug-address %s=HOST:PORT", id, cp)
}
