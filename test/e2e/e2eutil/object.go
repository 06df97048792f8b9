package e2eutil

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Core resources the what-if tests read and edit.
var (
	Namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	Services   = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	Pods       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	ConfigMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// LiveObject reads one object from a cluster as kubectl get -o yaml gives
// it (what a user edits into a what-if); ns "" for a cluster-scoped one.
func LiveObject(t *testing.T, cfg *rest.Config, gvr schema.GroupVersionResource, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var ri dynamic.ResourceInterface = dyn.Resource(gvr)
	if ns != "" {
		ri = dyn.Resource(gvr).Namespace(ns)
	}
	u, err := ri.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u.SetKind(kind)
	return u
}

// WithoutLabel is the object with one label removed.
func WithoutLabel(u *unstructured.Unstructured, key string) *unstructured.Unstructured {
	l := u.GetLabels()
	delete(l, key)
	u.SetLabels(l)
	return u
}
