package model

import "slices"

// Severity orders problems: errors first.
type Severity string

// The severities of a problem.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Rank orders severities for sorting: errors first, then warnings, then
// everything else.
func (s Severity) Rank() int {
	switch s {
	case SeverityError:
		return 0
	case SeverityWarning:
		return 1
	}
	return 2
}

// Problem is one thing wrong in the mesh, with what it concerns so a reader
// (the UI) can jump to it: the one problem type of every analysis (doctor's
// checks, the ambient view, what-if's report). Kind is a stable code (the
// kinds below).
type Problem struct {
	Severity Severity    `json:"severity"`
	Kind     ProblemKind `json:"kind"`
	// ControlPlane and Network name the istiod and network a problem is
	// seen by or concerns, where that is not the cluster (ambient's
	// problems are per control plane); Cluster and Service name what the
	// problem concerns (any may be empty).
	ControlPlane string `json:"controlPlane,omitempty"`
	Network      string `json:"network,omitempty"`
	Cluster      string `json:"cluster,omitempty"`
	Service      string `json:"service,omitempty"`
	Sentence     string `json:"sentence"`
	// Count is, for a row that groups repeated problems (the same cause
	// over many pods or services), how many it stands for; Examples names
	// the first few of them. Zero for a single problem.
	Count    int      `json:"count,omitempty"`
	Examples []string `json:"examples,omitempty"`
	// Services lists, for a grouped row over several services (Service is
	// then empty), every one of them, for a reader that marks services
	// (the UI's badges); doctor's JSON leaves it out.
	Services []string `json:"-"`
	// Objects are the Kubernetes objects the problem concerns, as a fix
	// would change them (analysis/fix): the pods of a dropped endpoint,
	// the DestinationRule or PeerAuthentication behind a drop, the
	// namespace, the gateway Service, the remote secret; a grouped row
	// holds every member's.
	Objects []ObjectRef `json:"objects,omitempty"`
	// Check names the check of doctor's that raised it (analysis/explain
	// Checks).
	Check string `json:"-"`
	// Group, when set, lets a diagnosis merge this problem with others of
	// the same cause into one row.
	Group *ProblemGroup `json:"-"`
}

// ProblemGroup says how a problem merges with others of the same cause: the
// same Key (with the same severity and kind) means the same cause; Subject
// names this occurrence (a pod, an endpoint, a service); Format is the
// sentence of the merged row, with {n} for the count and {examples} for the
// first subjects.
type ProblemGroup struct {
	Key, Subject, Format string
}

// ObjectRef names one Kubernetes object of one cluster: what a problem
// concerns, and what a fix changes.
type ObjectRef struct {
	Cluster   string `json:"cluster"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// String is "Kind namespace/name in cluster".
func (r ObjectRef) String() string {
	name := r.Name
	if r.Namespace != "" {
		name = r.Namespace + "/" + r.Name
	}
	if r.Cluster == "" {
		return r.Kind + " " + name
	}
	return r.Kind + " " + name + " in " + r.Cluster
}

// AddObjects appends the refs of add that refs does not hold yet, in
// order (a grouped problem's objects).
func AddObjects(refs []ObjectRef, add ...ObjectRef) []ObjectRef {
	for _, r := range add {
		if !slices.Contains(refs, r) {
			refs = append(refs, r)
		}
	}
	return refs
}
