package live

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshscope/meshscope/model"
)

// ownerOf is the workload that makes a pod: the object whose pod template
// a fix edits (a Deployment through its ReplicaSet, a StatefulSet, a
// DaemonSet, a ReplicaSet of its own), or the pod itself when nothing
// controls it.
type ownerOf struct {
	ref model.ObjectRef
}

// ownerOf reads a pod and its controllers, as the deployment controller
// names them (owner references), each pod once.
func (b *builder) ownerOf(pod model.ObjectRef) (ownerOf, error) {
	if o, ok := b.owners[pod]; ok {
		return o, nil
	}
	u, err := b.reg.Get(b.ctx, pod)
	if err != nil {
		return ownerOf{}, err
	}
	o := ownerOf{ref: pod}
	if c := controllerOf(u); c != nil {
		ref := model.ObjectRef{Cluster: pod.Cluster, Kind: c.Kind, Namespace: pod.Namespace, Name: c.Name}
		switch c.Kind {
		case "ReplicaSet":
			rs, err := b.reg.Get(b.ctx, ref)
			if err != nil {
				return ownerOf{}, fmt.Errorf("%s is made by %s, which cannot be read: %w", pod, ref, err)
			}
			o.ref = ref
			if d := controllerOf(rs); d != nil && d.Kind == "Deployment" {
				o.ref = model.ObjectRef{Cluster: pod.Cluster, Kind: d.Kind, Namespace: pod.Namespace, Name: d.Name}
			}
		case "StatefulSet", "DaemonSet":
			o.ref = ref
		default:
			return ownerOf{}, fmt.Errorf("%s is made by %s %s, whose pods meshscope does not re-make: change its template yourself", pod, c.Kind, c.Name)
		}
	}
	b.owners[pod] = o
	return o, nil
}

// controllerOf is the owner reference of u that is its controller.
func controllerOf(u *unstructured.Unstructured) *metav1.OwnerReference {
	for _, r := range u.GetOwnerReferences() {
		if r.Controller != nil && *r.Controller {
			return &r
		}
	}
	return nil
}
