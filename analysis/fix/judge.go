package fix

import (
	"fmt"
	"slices"
	"strings"

	"github.com/meshscope/meshscope/analysis/whatif"
	"github.com/meshscope/meshscope/model"
)

// Proof is what what-if predicts a proposal does to the mesh: whether the
// problem it is for goes, the problems it brings and resolves, and the
// services whose endpoints change, from which viewpoints.
type Proof struct {
	// Resolves: the problem is in the what-if's diagnosis before the
	// change and gone from the one after it.
	Resolves bool            `json:"resolves"`
	Resolved []model.Problem `json:"resolved"`
	New      []model.Problem `json:"new"`
	Changes  []portChange    `json:"changes"`
	// Fail says why the proof does not hold (empty: it does): the problem
	// stays, a new error-level problem, a service that loses every
	// endpoint where a client runs (what-if's default --fail-on).
	Fail []string `json:"fail,omitempty"`
	// Report is the what-if's whole answer (the UI lays it over the
	// mesh; what-if -o json prints it).
	Report *whatif.Report `json:"-"`
}

// portChange is one service port whose endpoints the change moves: from
// which viewpoints, and its endpoint count before and after from the
// first.
type portChange struct {
	Service    string   `json:"service"`
	Port       int32    `json:"port,omitempty"`
	Viewpoints []string `json:"viewpoints"`
	Before     int      `json:"before"`
	After      int      `json:"after"`
	Lost       bool     `json:"lost,omitempty"`
}

// Judge proves (or not) a proposal for p by the what-if of its change:
// the report is judged by what-if's default rules (whatif.DefaultFailOn:
// no new error, no service that loses every endpoint where a client runs),
// and p must be in the diagnosis before and gone from the one after.
func Judge(p model.Problem, rep *whatif.Report) Proof {
	whatif.Judge(rep, whatif.DefaultFailOn)
	pr := Proof{Resolved: rep.Problems.Resolved, New: rep.Problems.New, Report: rep}
	before := slices.ContainsFunc(rep.Problems.Before, func(b model.Problem) bool { return Same(p, b) })
	i := slices.IndexFunc(rep.Problems.After, func(a model.Problem) bool { return Same(p, a) })
	pr.Resolves = before && i < 0
	switch {
	case !before:
		pr.Fail = append(pr.Fail, "the what-if's mesh does not show the problem (the mesh moved since it was read)")
	case i >= 0:
		pr.Fail = append(pr.Fail, "the problem stays: "+rep.Problems.After[i].Sentence)
	}
	pr.Fail = append(pr.Fail, rep.Fail...)
	byKey := map[string]int{}
	for _, c := range rep.Changes {
		k := fmt.Sprintf("%s:%d", c.Service, c.Port)
		at, ok := byKey[k]
		if !ok {
			at = len(pr.Changes)
			byKey[k] = at
			pr.Changes = append(pr.Changes, portChange{Service: c.Service, Port: c.Port, Before: len(c.Before), After: len(c.After)})
		}
		ch := &pr.Changes[at]
		ch.Viewpoints = append(ch.Viewpoints, c.Where())
		ch.Lost = ch.Lost || ((c.LostAll || c.LostRemote) && !c.NoClient)
	}
	return pr
}

// Same says whether two problems are one: of one kind and — as a
// diagnosis groups them — one cause (the group key), else about one of
// the same objects, else the same sentence about the same thing. The
// counts and examples of a grouped row may differ.
func Same(a, b model.Problem) bool {
	if a.Kind != b.Kind {
		return false
	}
	if a.Group != nil && b.Group != nil {
		return a.Group.Key == b.Group.Key
	}
	if len(a.Objects) > 0 && len(b.Objects) > 0 {
		for _, o := range a.Objects {
			if slices.Contains(b.Objects, o) {
				return true
			}
		}
		return false
	}
	return a.Cluster == b.Cluster && a.Service == b.Service && a.ControlPlane == b.ControlPlane && a.Sentence == b.Sentence
}

// Services are the services a problem concerns (for what-if to diagnose
// them whatever the change does to them).
func Services(p model.Problem) []string {
	var out []string
	if p.Service != "" {
		out = append(out, p.Service)
	}
	for _, s := range p.Services {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// summary is one line of what the proof says.
func (pr *Proof) summary() string {
	var parts []string
	if pr.Resolves {
		parts = append(parts, "resolves it")
	}
	if n := len(pr.Resolved); n > 0 {
		parts = append(parts, fmt.Sprintf("%d problem(s) resolved", n))
	}
	errs := 0
	for _, p := range pr.New {
		if p.Severity == model.SeverityError {
			errs++
		}
	}
	switch {
	case len(pr.New) == 0:
		parts = append(parts, "no new problem")
	case errs > 0:
		parts = append(parts, fmt.Sprintf("%d new problem(s), %d error(s)", len(pr.New), errs))
	default:
		parts = append(parts, fmt.Sprintf("%d new problem(s), none an error", len(pr.New)))
	}
	if len(pr.Changes) == 0 {
		parts = append(parts, "no endpoint changes for any proxy")
	} else {
		parts = append(parts, fmt.Sprintf("endpoints change for %d service port(s)", len(pr.Changes)))
	}
	return strings.Join(parts, "; ")
}
