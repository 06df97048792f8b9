package live

import (
	"github.com/meshscope/meshscope/analysis/whatif"
	"github.com/meshscope/meshscope/collector"
)

// WhatIf answers a what-if on the mesh reg holds: the request's modelled
// objects go to the collector (collector.Registry.WhatIf: overlays of its
// caches, the same build), and analysis/whatif compares the two meshes.
// Nothing is written to any cluster.
func WhatIf(reg *collector.Registry, req whatif.Request) (*whatif.Report, error) {
	objs := req.Modelled()
	changes := make([]collector.Change, len(objs))
	for i, o := range objs {
		changes[i] = collector.Change{Cluster: o.Cluster, Delete: req.Delete || o.Delete, Object: o.Object, Origin: o.Origin()}
	}
	w, err := reg.WhatIf(changes, req.Env)
	if err != nil {
		return nil, err
	}
	a := whatif.Applied{Before: w.Before, After: w.After, Notes: w.Notes}
	for _, o := range w.Outcomes {
		a.Read = append(a.Read, o.Read)
		a.Unread = append(a.Unread, o.Unread)
		a.Effect = append(a.Effect, o.Effect)
	}
	return whatif.Answer(req, a), nil
}
