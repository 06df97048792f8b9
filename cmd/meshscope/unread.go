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

// andAlso is unread followed by the reads in more that say something new:
// not one of an istiod meshscope reaches through an API server it could
// not read (it fails for that cause, said once), and one per control plane
// and kind of read (the first cause: the others are most often the same
// one met by another stream).
func andAlso(unread []model.Incomplete, more ...model.Incomplete) []model.Incomplete {
	out := slices.Clone(unread)
	for _, m := range more {
		if clusterUnread(unread, model.ControlPlaneCluster(m.Cluster)) ||
			slices.ContainsFunc(out, func(i model.Incomplete) bool { return i.Cluster == m.Cluster && i.What == m.What }) {
			continue
		}
		out = append(out, m)
	}
	return out
}

// clusterUnread reports whether unread holds cluster id's own read.
func clusterUnread(unread []model.Incomplete, id string) bool {
	return slices.ContainsFunc(unread, func(i model.Incomplete) bool { return i.What == model.IncompleteCluster && i.Cluster == id })
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
