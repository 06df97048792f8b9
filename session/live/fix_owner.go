package live

import (
	"fmt"
	"strings"

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
	// The pods of one ReplicaSet (NAME-HASH-SUFFIX, labelled
	// pod-template-hash=HASH) have one owner: a drop over thousands of
	// pods reads one of each.
	rs, ok := b.replicaSetOf(pod)
	if o, seen := b.owners[rs]; ok && seen {
		b.owners[pod] = o
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
	if ok && o.ref.Kind != "Pod" {
		b.owners[rs] = o
	}
	return o, nil
}

// replicaSetOf names the ReplicaSet a pod's name and pod-template-hash
// label say made it (as the deployment controller names both), with
// Kind "ReplicaSet" — a key for the owners of its pods; false for a pod
// without the label or not so named.
func (b *builder) replicaSetOf(pod model.ObjectRef) (model.ObjectRef, bool) {
	if b.podLabels == nil {
		b.podLabels = map[model.ObjectRef]map[string]string{}
		for _, svc := range b.snap.Services {
			for cid, sic := range svc.Clusters {
				for _, e := range sic.Endpoints {
					if e.Pod != "" {
						b.podLabels[model.ObjectRef{Cluster: cid, Kind: "Pod", Namespace: svc.Namespace, Name: e.Pod}] = e.Labels
					}
				}
			}
		}
	}
	hash := b.podLabels[pod]["pod-template-hash"]
	i := strings.LastIndex(pod.Name, "-"+hash+"-")
	if hash == "" || i < 0 {
		return model.ObjectRef{}, false
	}
	return model.ObjectRef{Cluster: pod.Cluster, Kind: "ReplicaSet", Namespace: pod.Namespace, Name: pod.Name[:i+1+len(hash)]}, true
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
