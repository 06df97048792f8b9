package fix

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshscope/meshscope/model"
)

// The edits a planner writes, and what makes a live object a manifest.

// setLabel is an edit that sets (value != nil) or removes a label of an
// object's metadata (of a pod template's, for a Template edit).
func setLabel(obj model.ObjectRef, template bool, key string, value *string) Edit {
	what := "label " + key + "=" + deref(value)
	if value == nil {
		what = "no label " + key
	}
	if template {
		what += " on its pod template"
	}
	return Edit{Object: obj, Template: template, What: what, change: func(m map[string]any) error {
		labels, _, err := unstructured.NestedStringMap(m, "metadata", "labels")
		if err != nil {
			return err
		}
		if labels == nil {
			labels = map[string]string{}
		}
		if value == nil {
			delete(labels, key)
		} else {
			labels[key] = *value
		}
		if len(labels) == 0 {
			unstructured.RemoveNestedField(m, "metadata", "labels")
			return nil
		}
		return unstructured.SetNestedStringMap(m, labels, "metadata", "labels")
	}}
}

// setLabelsOn is one edit of several labels of one object (nil values
// removed), in the order of keys.
func setLabelsOn(obj model.ObjectRef, template bool, keys []string, values map[string]*string) Edit {
	var whats []string
	var fs []func(map[string]any) error
	for _, k := range keys {
		e := setLabel(obj, template, k, values[k])
		whats = append(whats, strings.TrimSuffix(e.What, " on its pod template"))
		fs = append(fs, e.change)
	}
	what := strings.Join(whats, ", ")
	if template {
		what += " on its pod template"
	}
	return Edit{Object: obj, Template: template, What: what, change: func(m map[string]any) error {
		for _, f := range fs {
			if err := f(m); err != nil {
				return err
			}
		}
		return nil
	}}
}

// setLabels are the label edits of several objects, each once.
func setLabels(objs []model.ObjectRef, template bool, key string, value *string) []Edit {
	var out []Edit
	for _, o := range objs {
		out = append(out, setLabel(o, template, key, value))
	}
	return out
}

// changeSpec is an edit of an object's content by a function.
func changeSpec(obj model.ObjectRef, what string, f func(m map[string]any) error) Edit {
	return Edit{Object: obj, What: what, change: f}
}

// newObject is an edit that makes an object from nothing: f fills its
// apiVersion, kind and spec (its namespace and name are the ref's).
func newObject(obj model.ObjectRef, what string, f func(m map[string]any) error) Edit {
	return Edit{Object: obj, New: true, What: what, change: f}
}

// Apply makes the edit on the object read for it (for a Template edit,
// the workload controller), in place.
func (e Edit) Apply(u *unstructured.Unstructured) error {
	if e.change == nil {
		return nil
	}
	if !e.Template || u.GetKind() == "Pod" {
		return e.change(u.Object)
	}
	tmpl, ok, err := unstructured.NestedMap(u.Object, "spec", "template")
	if err != nil || !ok {
		return fmt.Errorf("%s %s has no pod template", u.GetKind(), u.GetName())
	}
	if err := e.change(tmpl); err != nil {
		return err
	}
	return unstructured.SetNestedMap(u.Object, tmpl, "spec", "template")
}

// Clean turns a live object into a manifest to apply: without its status
// and what the API server keeps for itself (managedFields,
// resourceVersion, uid, creation time, generation).
func Clean(u *unstructured.Unstructured) {
	unstructured.RemoveNestedField(u.Object, "status")
	for _, f := range []string{"managedFields", "resourceVersion", "uid", "creationTimestamp", "generation", "selfLink"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	if a := u.GetAnnotations(); a != nil {
		// kubectl apply's record of the last manifest: it writes its own.
		delete(a, "kubectl.kubernetes.io/last-applied-configuration")
		if len(a) == 0 {
			unstructured.RemoveNestedField(u.Object, "metadata", "annotations")
		} else {
			u.SetAnnotations(a)
		}
	}
}

// Copy makes the manifest of an object to create in another cluster from
// a live one: cleaned, and without what the API server of its own cluster
// gave it (a Service's cluster IPs and node ports, its owners).
func Copy(u *unstructured.Unstructured) *unstructured.Unstructured {
	c := u.DeepCopy()
	Clean(c)
	unstructured.RemoveNestedField(c.Object, "metadata", "ownerReferences")
	if c.GetKind() == "Service" {
		for _, f := range []string{"clusterIP", "clusterIPs", "healthCheckNodePort", "loadBalancerIP"} {
			unstructured.RemoveNestedField(c.Object, "spec", f)
		}
		ports, _, _ := unstructured.NestedSlice(c.Object, "spec", "ports")
		for _, p := range ports {
			if m, ok := p.(map[string]any); ok {
				delete(m, "nodePort")
			}
		}
		if len(ports) > 0 {
			_ = unstructured.SetNestedSlice(c.Object, ports, "spec", "ports")
		}
	}
	return c
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func ptr(s string) *string { return &s }

// short is "namespace/name" of a ref (its name when cluster-scoped).
func short(r model.ObjectRef) string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// joinRefs names refs for a title: "Deployment a/b in c, …".
func joinRefs(refs []model.ObjectRef) string {
	var s []string
	for _, r := range refs {
		s = append(s, r.String())
	}
	return strings.Join(s, ", ")
}
