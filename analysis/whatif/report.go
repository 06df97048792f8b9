package whatif

import (
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/internal/humanize"
	"github.com/meshscope/meshscope/model"
)

// Request is one what-if: objects to put (or, with Delete, to delete) and
// istiod settings to assume.
type Request struct {
	Objects []Object
	Delete  bool
	Env     []model.IstiodEnv
	// Diagnose names services whose problems both diagnoses hold
	// whatever the change does to them (a fix's proof: the problem it is
	// for must be seen gone, not merely left out as unchanged).
	Diagnose []string
}

// objectOutcome is what one object of the request does.
type objectOutcome struct {
	Action  string `json:"action"` // put or delete
	Kind    string `json:"kind"`
	Name    string `json:"name"` // namespace/name, or name
	Cluster string `json:"cluster"`
	Origin  string `json:"origin"`
	// Read lists the caches it changes; Unread says why it changes nothing
	// meshscope predicts, and IstiodReads whether istiod reads it at all.
	Read        []string `json:"read,omitempty"`
	Unread      string   `json:"unread,omitempty"`
	IstiodReads bool     `json:"istiodReads"`
	// Effect says what a workload controller does to the pods it owns
	// ("2 pods in cluster2 re-made from its template, …").
	Effect string `json:"effect,omitempty"`
}

// Problems are the doctor problems the change brings and the ones it
// resolves (a prediction-only diagnosis of both meshes).
type Problems struct {
	New      []model.Problem `json:"new"`
	Resolved []model.Problem `json:"resolved"`
	// Before and After are the two diagnoses compared (of the services
	// that differ, and Request.Diagnose's), for a reader that looks for
	// one problem in them (analysis/fix).
	Before []model.Problem `json:"-"`
	After  []model.Problem `json:"-"`
}

// Report is a what-if's answer.
type Report struct {
	// Summary is one line first, then a line per viewpoint.
	Summary  []string          `json:"summary"`
	Objects  []objectOutcome   `json:"objects"`
	Settings []model.IstiodEnv `json:"settings,omitempty"`
	Changes  []ServiceChange   `json:"changes"`
	Problems Problems          `json:"problems"`
	Notes    []string          `json:"notes,omitempty"`
	// Fail lists why the what-if fails its --fail-on rules (Judge).
	Fail []string `json:"fail,omitempty"`
	// Before and After are the snapshots' versions and times.
	SnapshotVersion uint64    `json:"snapshotVersion"`
	SnapshotTime    time.Time `json:"snapshotTime"`
}

// Modelled are the request's objects of the kinds meshscope reads, in
// order: what the collector applies (collector.Registry.WhatIf, through
// live.WhatIf); the others only go in the report, with why.
func (req Request) Modelled() []Object {
	var out []Object
	for _, o := range req.Objects {
		if why, _ := unmodelled(o.Object.GroupVersionKind().GroupKind()); why == "" {
			out = append(out, o)
		}
	}
	return out
}

// Applied is what the collector made of a request's modelled objects: the
// mesh before and after, and for each object (in Modelled's order) the
// caches it changed or why none.
type Applied struct {
	Before, After *model.Snapshot
	Read          [][]string
	Unread        []string
	// Effect is what each workload controller did to its pods ("" for
	// other kinds; may be shorter than Read).
	Effect []string
	Notes  []string
}

// Answer is the report of a request, from what the collector applied.
func Answer(req Request, a Applied) *Report {
	rep := &Report{Settings: req.Env, Changes: []ServiceChange{}, Notes: a.Notes}
	i := 0
	for _, o := range req.Objects {
		oc := objectOutcome{Action: "put", Kind: o.Object.GetKind(), Name: objectName(o), Cluster: o.Cluster, Origin: o.Origin()}
		if req.Delete || o.Delete {
			oc.Action = "delete"
		}
		why, reads := unmodelled(o.Object.GroupVersionKind().GroupKind())
		oc.IstiodReads = reads
		switch {
		case why != "":
			oc.Unread = why
		case i < len(a.Read):
			oc.Read, oc.Unread = a.Read[i], a.Unread[i]
			if i < len(a.Effect) {
				oc.Effect = a.Effect[i]
			}
			if len(oc.Read) == 0 && oc.Unread == "" && oc.Effect == "" {
				oc.Unread = "no cache of cluster " + o.Cluster + " reads it"
			}
			i++
		}
		rep.Objects = append(rep.Objects, oc)
	}
	rep.SnapshotVersion, rep.SnapshotTime = a.Before.Version, a.Before.Time
	rep.Changes, rep.Problems = compare(a.Before, a.After, req.Diagnose)
	rep.Summary = summarize(rep)
	return rep
}

// compare is the endpoints and the problems of two snapshots side by
// side, of the services that differ when nothing else does (narrow): the
// three passes (endpoints, and a diagnosis of each) run at once.
func compare(before, after *model.Snapshot, keep []string) ([]ServiceChange, Problems) {
	now := before.Time
	b, a, cut := narrow(before, after)
	if cut && len(b.Services) == 0 && len(a.Services) == 0 && len(keep) == 0 {
		return []ServiceChange{}, Problems{New: []model.Problem{}, Resolved: []model.Problem{}}
	}
	changes, affected := compareAll(b, a)
	if changes == nil {
		changes = []ServiceChange{}
	}
	switch {
	case cut:
		b, a = withKept(b, before, keep), withKept(a, after, keep)
	case reflect.DeepEqual(before.Settings, after.Settings) && reflect.DeepEqual(before.Ambient, after.Ambient):
		for _, h := range keep {
			affected[h] = true
		}
		b, a = diagnosed(before, after, affected)
		b, a = withKept(b, before, nil), withKept(a, after, nil)
	default:
		// istiod's settings and the ambient facts decide checks beyond
		// the predictions (which services' scopes matter): the whole mesh.
		b, a = before, after
	}
	var wg sync.WaitGroup
	var pb, pa []model.Problem
	wg.Add(2)
	go func() { defer wg.Done(); pb = explain.Diagnose(b, explain.Inputs{Now: now}) }()
	go func() { defer wg.Done(); pa = explain.Diagnose(a, explain.Inputs{Now: now}) }()
	wg.Wait()
	out := diffProblems(pb, pa)
	out.Before, out.After = pb, pa
	return changes, out
}

// diffProblems lists the problems only after has (new) and only before
// has (resolved), a problem being its kind, what it concerns and its
// sentence.
func diffProblems(before, after []model.Problem) Problems {
	key := func(p model.Problem) string {
		return string(p.Kind) + "\x00" + p.Cluster + "\x00" + p.Service + "\x00" + p.Sentence
	}
	in := func(ps []model.Problem) map[string]bool {
		m := map[string]bool{}
		for _, p := range ps {
			m[key(p)] = true
		}
		return m
	}
	b, a := in(before), in(after)
	out := Problems{New: []model.Problem{}, Resolved: []model.Problem{}}
	for _, p := range after {
		if !b[key(p)] {
			out.New = append(out.New, p)
		}
	}
	for _, p := range before {
		if !a[key(p)] {
			out.Resolved = append(out.Resolved, p)
		}
	}
	return out
}

// summarize writes the first line (what changes, for how many services,
// what is lost, what problems) and a line per viewpoint.
func summarize(rep *Report) []string {
	services := map[string]bool{}
	lost := map[string]bool{}
	for _, c := range rep.Changes {
		services[c.Service] = true
		if c.LostAll || c.LostRemote {
			lost[c.Service] = true
		}
	}
	errs := 0
	for _, p := range rep.Problems.New {
		if p.Severity == model.SeverityError {
			errs++
		}
	}
	first := "no endpoint changes for any proxy"
	if len(services) > 0 {
		first = fmt.Sprintf("%s change for some proxy", humanize.Count(len(services), "service"))
		if len(lost) > 0 {
			first += fmt.Sprintf("; %d lose every endpoint or every remote endpoint somewhere", len(lost))
		}
	}
	first += fmt.Sprintf("; %s, %d resolved", humanize.Count(len(rep.Problems.New), "new problem"), len(rep.Problems.Resolved))
	if errs > 0 {
		first += fmt.Sprintf(" (%s)", humanize.Count(errs, "new error"))
	}
	return append([]string{first}, summary(rep.Changes)...)
}

func objectName(o Object) string {
	if o.Object.GetNamespace() == "" {
		return o.Object.GetName()
	}
	return o.Object.GetNamespace() + "/" + o.Object.GetName()
}
