package main

import (
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/meshscope/meshscope/model"
)

// problemsUnread are the reads of istiod a diagnosis could not make, as
// incomplete: each istiod-unreachable problem (istiod's own view, what it
// sends a sidecar or a ztunnel) — what the problem says is the cause.
func problemsUnread(ps []model.Problem) []model.Incomplete {
	var out []model.Incomplete
	for _, p := range ps {
		if p.Kind != model.ProblemIstiodUnreachable {
			continue
		}
		i := model.Incomplete{Cluster: p.Cluster, What: model.IncompleteIstiod, Why: p.Sentence}
		if !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	return out
}

// podViewpointError classifies a failure to read the pod of a
// pod:NS/NAME viewpoint: a pod that does not exist is bad input (exit 2);
// anything else is a read that failed (exit 3).
func podViewpointError(err error) error {
	if apierrors.IsNotFound(err) {
		return badInput(err)
	}
	return exitError{code: exitIncomplete, err: err}
}
