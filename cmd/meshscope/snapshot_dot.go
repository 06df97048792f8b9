package main

import (
	"fmt"
	"io"
	"time"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/meshmap"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
)

// writeSnapshotDot writes the map of the snapshot (the UI's :map) as
// Graphviz dot, with the problems doctor --offline finds placed on its
// boxes and arrows: the snapshot alone, no stream and no istiod read, so
// the command stays as quick and as read-only as the other formats.
// What could not be read comes first, as dot comments.
func writeSnapshotDot(w io.Writer, snap *model.Snapshot) error {
	for _, i := range snap.Unread() {
		fmt.Fprintf(w, "// %s\n", i.Sentence())
	}
	planes := plane.NewSet(snap, nil)
	ps := explain.Diagnose(snap, explain.Inputs{Now: time.Now(), Planes: planes})
	return meshmap.Dot(w, meshmap.Build(planes, ps))
}
