package fix

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshscope/meshscope/model"
)

// Fix is a problem's plan with every proposal built from the live objects
// and proven (or not) by what-if.
type Fix struct {
	Problem model.Problem `json:"-"`
	// None says why no change is planned ("" when there are proposals).
	None      string  `json:"none,omitempty"`
	Proposals []Offer `json:"proposals,omitempty"`
}

// Offer is one proposal as built and proven. Offered: its objects were
// built, what-if proves it; else Why says what kept it back.
type Offer struct {
	Proposal
	Manifests []Manifest `json:"manifests,omitempty"`
	Proof     *Proof     `json:"proof,omitempty"`
	Offered   bool       `json:"offered"`
	Why       string     `json:"why,omitempty"`
	// Files are where the manifests (or the command) were written
	// (doctor --fix-dir).
	Files []File `json:"files,omitempty"`
}

// File is one file doctor --fix-dir wrote: the manifests of one cluster
// and kubectl verb (replace, create, delete), or a command ("sh").
type File struct {
	Path    string `json:"path"`
	Cluster string `json:"cluster,omitempty"`
	Context string `json:"context,omitempty"`
	Verb    string `json:"verb"`
}

// apply is the command that applies the file.
func (f File) apply() string {
	if f.Verb == "sh" {
		return "sh " + f.Path
	}
	return fmt.Sprintf("kubectl %s --context %s -f %s", f.Verb, orText(f.Context, f.Cluster), f.Path)
}

// Manifest is one object of a proposal as a person applies it to a
// cluster through its context (Verb: kubectl replace -f of the whole
// edited object — as what-if reads it, and unlike kubectl apply, which
// keeps a field the edit removes unless it applied that field itself —
// create -f of a new one, delete -f). A remote secret built in memory for
// the proof is never in it: Object is then nil and the proposal's command
// makes the real one.
type Manifest struct {
	Cluster string                     `json:"cluster"`
	Context string                     `json:"context,omitempty"`
	Delete  bool                       `json:"delete,omitempty"`
	Create  bool                       `json:"create,omitempty"`
	Object  *unstructured.Unstructured `json:"object,omitempty"`
	// secret is a remote secret built for the proof only.
	secret *unstructured.Unstructured
}

// SecretManifest is a remote secret built in memory for a proof: what-if
// puts it, nothing shows it.
func SecretManifest(cluster string, u *unstructured.Unstructured) Manifest {
	return Manifest{Cluster: cluster, secret: u}
}

// Change is the object what-if puts or deletes for the manifest.
func (m Manifest) Change() *unstructured.Unstructured {
	if m.secret != nil {
		return m.secret
	}
	return m.Object
}

// Verb is the kubectl command that applies the manifest: replace, create
// or delete.
func (m Manifest) Verb() string {
	switch {
	case m.Delete:
		return "delete"
	case m.Create:
		return "create"
	}
	return "replace"
}

// Shown says whether the manifest can be shown and written (a built
// remote secret cannot).
func (m Manifest) Shown() bool { return m.secret == nil }

// Best is the first offered proposal (nil when none is).
func (f *Fix) Best() *Offer {
	for i := range f.Proposals {
		if f.Proposals[i].Offered {
			return &f.Proposals[i]
		}
	}
	return nil
}

// apiVersions are the apiVersion of the kinds a fix deletes without
// reading them (a remote secret).
var apiVersions = map[string]string{"Secret": "v1"}

// DeleteManifest is the manifest of an object to delete: its kind, name
// and namespace (kubectl delete -f takes no more).
func DeleteManifest(ref model.ObjectRef, context string) Manifest {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(apiVersions[ref.Kind])
	u.SetKind(ref.Kind)
	u.SetNamespace(ref.Namespace)
	u.SetName(ref.Name)
	return Manifest{Cluster: ref.Cluster, Context: context, Delete: true, Object: u}
}
