package explain

import (
	"fmt"
	"slices"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// A preflight is doctor's word on remote secrets before they are applied
// (doctor --remote-secret FILE): the mesh as it is and as it would be with
// them (a what-if: their credentials tried, the clusters they add read
// through them), every check run on both. What it says: each key of each
// secret as the mesh after holds it (described and tested), and every
// problem of the mesh after that is new or that names one of the secrets —
// their cluster ID against the mesh's clusters and their istiod's
// CLUSTER_ID, a server known under another ID, a duplicate ID, and each
// credential check.

// PreflightInput is one secret of the file applied to one cluster.
type PreflightInput struct {
	// Holder is the cluster it is applied to; Name its "ns/name"; Origin
	// FILE:LINE.
	Holder, Name, Origin string
	// Unread says why neither istiod nor meshscope would read it ("" when
	// they would): another namespace, the label missing.
	Unread string
}

// PreflightSecret is one key of a secret of the file, as the mesh after
// holds it.
type PreflightSecret struct {
	model.RemoteSecret
	Origin string `json:"origin"`
	// Cluster is the cluster of the mesh it stands for ("" when istiod
	// ignores it: a key equal to its holder's ID).
	Cluster string `json:"cluster,omitempty"`
}

// Preflight is what a preflight found.
type Preflight struct {
	Secrets  []PreflightSecret `json:"secrets"`
	Problems []model.Problem   `json:"problems"`
	Notes    []string          `json:"notes,omitempty"`
	NotRun   []NotRun          `json:"notRun,omitempty"`
}

// CheckPreflight runs every check on before and after (in's other inputs:
// the clock, istiod's views) and keeps what concerns the secrets.
func CheckPreflight(before, after *model.Snapshot, secrets []PreflightInput, notes []string, in Inputs) Preflight {
	out := Preflight{Notes: notes, Problems: []model.Problem{}}
	db, da := Run(before, in), Run(after, in)
	out.NotRun = da.NotRun
	seen := map[string]bool{}
	for _, p := range db.Problems {
		seen[problemKey(p)] = true
	}
	var names []string
	for _, s := range secrets {
		names = append(names, s.Name)
		if s.Unread != "" {
			out.Problems = append(out.Problems, model.Problem{Severity: model.SeverityError, Kind: model.ProblemRemoteSecretRefused, Cluster: s.Holder,
				Sentence: fmt.Sprintf("istiod %s would not read remote secret %s (%s): %s — write it as istioctl create-remote-secret does (namespace %s, label %s=true)",
					s.Holder, s.Name, s.Origin, s.Unread, orText(after.SystemNamespace, "istio-system"), model.MultiClusterSecretLabel)})
			continue
		}
		n := 0
		for _, rs := range after.RemoteSecrets {
			if rs.Ref.In == s.Holder && rs.Ref.Name == s.Name {
				out.Secrets = append(out.Secrets, PreflightSecret{RemoteSecret: rs, Origin: s.Origin, Cluster: after.ClusterOfSecret(rs.Ref)})
				n++
			}
		}
		if n == 0 {
			out.Problems = append(out.Problems, model.Problem{Severity: model.SeverityError, Kind: model.ProblemRemoteSecretRefused, Cluster: s.Holder,
				Sentence: fmt.Sprintf("remote secret %s (%s) declares no cluster: it has no data key (each key is a cluster ID, its value a kubeconfig) — istiod %s reads nothing from it", s.Name, s.Origin, s.Holder)})
		}
	}
	for _, p := range da.Problems {
		if !seen[problemKey(p)] || slices.ContainsFunc(names, func(n string) bool { return namesSecret(p.Sentence, n) }) {
			out.Problems = append(out.Problems, p)
		}
	}
	SortProblems(out.Problems)
	return out
}

// names_ says whether a sentence names the secret n ("ns/name"), not
// one whose name only starts with it.
func namesSecret(sentence, n string) bool {
	for i := 0; ; {
		j := strings.Index(sentence[i:], n)
		if j < 0 {
			return false
		}
		end := i + j + len(n)
		if end == len(sentence) || !strings.ContainsRune("abcdefghijklmnopqrstuvwxyz0123456789-.", rune(sentence[end])) {
			return true
		}
		i = end
	}
}

// problemKey identifies a problem across two diagnoses.
func problemKey(p model.Problem) string {
	return string(p.Kind) + "\x00" + p.Cluster + "\x00" + p.Service + "\x00" + p.Sentence
}

// Incomplete lists the keys whose credential a preflight could not try
// from where meshscope runs (not tried, or no answer: the server out of
// reach from here), so its answer is partial. A refused kubeconfig is a
// finding, not a gap.
func (p Preflight) Incomplete() []model.Incomplete {
	var out []model.Incomplete
	for _, s := range p.Secrets {
		why := ""
		switch t := s.Test; {
		case s.Credential.Invalid != "" || len(s.Credential.NeedsOptions) > 0:
		case t == nil:
			why = "not tried"
		case t.Skipped != "":
			why = "not tried: " + t.Skipped
		case t.Failed == model.ErrUnreachable || t.Failed == model.ErrOther || t.Failed == model.ErrClient:
			why = t.Reason
		case t.Unchecked != "":
			why = "its permissions could not be checked: " + t.Unchecked
		}
		if why != "" {
			out = append(out, model.Incomplete{Cluster: s.Ref.Key, What: model.IncompleteCredential,
				Why: fmt.Sprintf("%s (remote secret %s in %s)", why, s.Ref.Name, s.Ref.In)})
		}
	}
	return out
}
