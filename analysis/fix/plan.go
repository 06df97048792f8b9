package fix

import (
	"github.com/meshscope/meshscope/model"
)

// Plan is what can be done about one problem: proposals, in the order they
// are offered, or why no fix is mechanical.
type Plan struct {
	Proposals []Proposal `json:"proposals,omitempty"`
	// None says why no change can be planned for the problem ("" when
	// there are proposals).
	None string `json:"none,omitempty"`
}

// Proposal is one way to fix a problem: edits of live objects, or a
// command a person runs.
type Proposal struct {
	// Title says what changes, as a person would say it.
	Title string `json:"title"`
	// Trade says what the change costs or implies, set against the other
	// proposals of the plan.
	Trade string `json:"trade,omitempty"`
	// Edits are the objects changed, in order.
	Edits []Edit `json:"edits,omitempty"`
	// Command is, for a fix that is not an object, what a person runs;
	// Edits are then what it would create, for the proof.
	Command string `json:"command,omitempty"`
	// Restart names pods whose workloads a person restarts (kubectl
	// rollout restart): the command is made once their controllers are
	// read.
	Restart []model.ObjectRef `json:"restart,omitempty"`
	// Unproven says why what-if cannot prove the proposal ("" when it
	// can): it is shown only when asked (--all-fixes).
	Unproven string `json:"unproven,omitempty"`
}

// Edit is one change of one object.
type Edit struct {
	// Object is the object changed. With Template it is a pod, and the
	// change is of the pod template of the workload that owns it.
	Object   model.ObjectRef `json:"object"`
	Template bool            `json:"template,omitempty"`
	// From is, for an object to create, the object it is copied from
	// (without what the API server of its cluster fills in).
	From *model.ObjectRef `json:"from,omitempty"`
	// Delete deletes Object; New creates it from nothing but the edit
	// (an object of the mesh's own kinds, istio's cross-network-gateway).
	Delete bool `json:"delete,omitempty"`
	New    bool `json:"new,omitempty"`
	// RemoteSecret is, for a remote secret a command would write, the
	// cluster whose credentials it carries (meshscope's own context for
	// it): built in memory for the proof, never shown.
	RemoteSecret string `json:"remoteSecret,omitempty"`
	// SecretKey is the cluster ID that remote secret declares (its data
	// key, istioctl's --name).
	SecretKey string `json:"secretKey,omitempty"`
	// What says what changes in the object ("label
	// topology.istio.io/network=network2").
	What string `json:"what"`
	// change edits the object (for Template, the pod template); nil for
	// a delete or a remote secret.
	change func(obj map[string]any) error
}

// planner plans the fix of one problem in a snapshot.
type planner func(snap *model.Snapshot, p model.Problem) Plan

// Propose plans the fix of a problem found in snap: the planner of its
// kind (kinds.go), or why none is mechanical.
func Propose(snap *model.Snapshot, p model.Problem) Plan {
	e, ok := kinds[p.Kind]
	if !ok {
		return Plan{None: "meshscope has no fix for problems of kind " + string(p.Kind)}
	}
	if e.plan == nil {
		return Plan{None: e.none}
	}
	pl := e.plan(snap, p)
	if len(pl.Proposals) == 0 && pl.None == "" {
		pl.None = e.none
	}
	return pl
}

// none is a plan without proposals.
func none(why string) Plan { return Plan{None: why} }
