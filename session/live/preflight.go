package live

import (
	"fmt"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/whatif"
	"github.com/meshscope/meshscope/collector"
)

// Preflight applies the remote secrets objs to reg's mesh in memory (a
// what-if: collector.Registry.WhatIf tries each new credential and reads a
// cluster it adds through it) and runs doctor's checks on the mesh before
// and after (explain.CheckPreflight, with in's clock and istiod's views).
// Nothing is written to any cluster. Each object must be a Secret.
func Preflight(reg *collector.Registry, objs []whatif.Object, in explain.Inputs) (explain.Preflight, error) {
	changes := make([]collector.Change, len(objs))
	for i, o := range objs {
		if o.Object.GetKind() != "Secret" || o.Object.GetAPIVersion() != "v1" {
			return explain.Preflight{}, fmt.Errorf("%w: %s: %s %s is no Secret: --remote-secret takes the output of istioctl create-remote-secret",
				collector.ErrWhatIf, o.Origin(), o.Object.GetKind(), o.Object.GetName())
		}
		changes[i] = collector.Change{Cluster: o.Cluster, Object: o.Object, Origin: o.Origin()}
	}
	w, err := reg.WhatIf(changes, nil)
	if err != nil {
		return explain.Preflight{}, err
	}
	inputs := make([]explain.PreflightInput, len(objs))
	for i, o := range w.Outcomes {
		u := o.Change.Object
		inputs[i] = explain.PreflightInput{Holder: o.Change.Cluster, Name: u.GetNamespace() + "/" + u.GetName(), Origin: o.Change.Origin}
		if len(o.Read) == 0 {
			inputs[i].Unread = o.Unread
			if inputs[i].Unread == "" {
				inputs[i].Unread = "no informer reads it"
			}
		}
	}
	return explain.CheckPreflight(w.Before, w.After, inputs, w.Notes, in), nil
}
