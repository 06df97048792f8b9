package collector

import (
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

// labRegistry runs a registry over the lab's two clusters (fakes), cluster2
// read through cluster1's remote secret, and waits until it has settled.
func labRegistry(t *testing.T) *Registry {
	t.Helper()
	return labRegistryWith(t, newFakeWorld(t), nil)
}

// labRegistryWith is labRegistry in the fake world w, with edit applied to
// its options.
func labRegistryWith(t *testing.T, w *fakeWorld, edit func(*Options)) *Registry {
	t.Helper()
	// Pods ready, as the fixture's EndpointSlices say they are.
	// Each helloworld pod is made by Deployment helloworld through its
	// ReplicaSet helloworld-abc (the pods' pod-template-hash is abc), and
	// selected by Service helloworld, as in the lab.
	ready := func(objs []runtime.Object) []runtime.Object {
		for _, o := range objs {
			switch o := o.(type) {
			case *corev1.Pod:
				o.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
				o.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "helloworld-abc", Controller: ptr.To(true)}}
				o.Spec.ServiceAccountName = "default"
			case *corev1.Service:
				if o.Name == "helloworld" {
					o.Spec.Selector = map[string]string{"app": "helloworld"}
				}
			}
		}
		return objs
	}
	c1 := fake.NewClientset(append(ready(meshtest.LabCluster("network1", "192.168.60.113", "helloworld-v1-abc", "10.44.0.13")),
		remoteSecret("istio-remote-secret-cluster2", map[string][]byte{"cluster2": kubeconfigFor("https://127.0.0.1:6444", tokenCluster2)}))...)
	c2 := fake.NewClientset(ready(meshtest.LabCluster("network2", "192.168.60.9", "helloworld-v2-def", "10.144.0.15"))...)
	w.clients["https://127.0.0.1:6444"] = c2
	opts := fastOptions(w, Source{Name: "cluster1", Server: "https://127.0.0.1:6443", Client: c1})
	if edit != nil {
		edit(&opts)
	}
	r := startRegistry(t, opts)
	waitFor(t, r, 10*time.Second, "both clusters synced", func(s *model.Snapshot) bool {
		return s.Settled() && len(s.Clusters) == 2 && s.ClusterByID("cluster2") != nil && s.ClusterByID("cluster2").State == model.StateSynced
	})
	return r
}

func toUnstructured(t *testing.T, obj runtime.Object, apiVersion, kind string) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u
}

func TestWhatIf(t *testing.T) {
	r := labRegistry(t)
	live := r.Snapshot()
	unlabelled := toUnstructured(t, meshtest.Namespace("istio-system", ""), "v1", "Namespace")
	cases := []struct {
		name    string
		changes []Change
		check   func(t *testing.T, w *WhatIf)
	}{{
		name:    "the system namespace of cluster2 loses its network label",
		changes: []Change{{Cluster: "cluster2", Object: unlabelled, Origin: "ns.yaml:1"}},
		check: func(t *testing.T, w *WhatIf) {
			if got := w.Before.ClusterByID("cluster2").Network; got != "network2" {
				t.Errorf("before: cluster2 network %q", got)
			}
			if got := w.After.ClusterByID("cluster2").Network; got != "" {
				t.Errorf("after: cluster2 network %q, want none", got)
			}
			if len(w.Outcomes) != 1 || strings.Join(w.Outcomes[0].Read, ",") != "namespaces" {
				t.Errorf("outcomes %+v", w.Outcomes)
			}
		},
	}, {
		name: "a namespace labelled for a revision: the label reaches the after snapshot (doctor's revision checks read it)",
		changes: []Change{{Cluster: "cluster1", Origin: "ns.yaml:1", Object: func() *unstructured.Unstructured {
			u := toUnstructured(t, meshtest.Namespace("sample", ""), "v1", "Namespace")
			u.SetLabels(map[string]string{model.LabelRev: "1-28"})
			return u
		}()}},
		check: func(t *testing.T, w *WhatIf) {
			if got := w.Before.AmbientFor("cluster1").NamespaceLabels("sample")[model.LabelRev]; got != "" {
				t.Errorf("before: sample's revision %q", got)
			}
			if got, _ := model.NamespaceRevision(w.After.AmbientFor("cluster1").NamespaceLabels("sample")); got != "1-28" {
				t.Errorf("after: sample's revision %q, want 1-28", got)
			}
		},
	}, {
		name:    "the remote secret deleted: cluster2 leaves the mesh",
		changes: []Change{{Cluster: "cluster1", Delete: true, Object: toUnstructured(t, remoteSecret("istio-remote-secret-cluster2", nil), "v1", "Secret"), Origin: "-:1"}},
		check: func(t *testing.T, w *WhatIf) {
			if c := w.After.ClusterByID("cluster2"); c == nil || c.State != model.StateRemoved {
				t.Errorf("after: cluster2 %+v, want removed", c)
			}
			if c := w.Before.ClusterByID("cluster2"); c == nil || c.State != model.StateSynced {
				t.Errorf("before: cluster2 %+v", c)
			}
		},
	}, {
		name: "a gateway Service replaced without its status keeps its load-balancer address",
		changes: []Change{{Cluster: "cluster2", Origin: "gw.yaml:1", Object: func() *unstructured.Unstructured {
			gw := meshtest.EastWestGateway("network2", "")
			gw.Status = meshtest.EastWestGateway("network2", "192.168.60.9").Status
			u := toUnstructured(t, gw, "v1", "Service")
			delete(u.Object, "status")
			u.SetLabels(map[string]string{"istio": "eastwestgateway"})
			return u
		}()}},
		check: func(t *testing.T, w *WhatIf) {
			if n := len(w.Before.Gateways); n != 2 {
				t.Fatalf("before: %d gateways", n)
			}
			for _, g := range w.After.Gateways {
				if g.Cluster == "cluster2" && g.Network == "network2" {
					t.Errorf("after: cluster2's gateway still serves network2: %+v", g)
				}
			}
		},
	}, {
		name: "helloworld in cluster2 selects pods it has none of: the endpoint controller's slice is empty",
		changes: []Change{{Cluster: "cluster2", Origin: "svc.yaml:1", Object: func() *unstructured.Unstructured {
			svc := meshtest.Service("sample", "helloworld", 5000)
			svc.Spec.Selector = map[string]string{"app": "nothing"}
			return toUnstructured(t, svc, "v1", "Service")
		}()}},
		check: func(t *testing.T, w *WhatIf) {
			const h = "helloworld.sample.svc.cluster.local"
			if n := len(w.Before.Service(h).Clusters["cluster2"].Endpoints); n != 1 {
				t.Fatalf("before: %d endpoints in cluster2", n)
			}
			if n := len(w.After.Service(h).Clusters["cluster2"].Endpoints); n != 0 {
				t.Errorf("after: %d endpoints in cluster2, want none", n)
			}
			if len(w.Notes) != 1 || !strings.Contains(w.Notes[0], "EndpointSlices of Service sample/helloworld in cluster2 are rewritten") {
				t.Errorf("notes %q", w.Notes)
			}
		},
	}, {
		name: "the same Service selecting its pod: its slice is left as it is",
		changes: []Change{{Cluster: "cluster2", Origin: "svc.yaml:1", Object: func() *unstructured.Unstructured {
			svc := meshtest.Service("sample", "helloworld", 5000)
			svc.Spec.Selector = map[string]string{"app": "helloworld"}
			return toUnstructured(t, svc, "v1", "Service")
		}()}},
		check: func(t *testing.T, w *WhatIf) {
			if len(w.Notes) != 0 {
				t.Errorf("notes %q, want none", w.Notes)
			}
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := r.WhatIf(c.changes, nil)
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, w)
		})
	}
	if r.Snapshot() != live && r.Snapshot().Version != live.Version {
		t.Errorf("a what-if published a snapshot: version %d → %d", live.Version, r.Snapshot().Version)
	}
	if c := r.Snapshot().ClusterByID("cluster2"); c.Network != "network2" || c.State != model.StateSynced {
		t.Errorf("a what-if changed the live mesh: %+v", c)
	}
}

func TestWhatIfErrors(t *testing.T) {
	r := labRegistry(t)
	ns := toUnstructured(t, meshtest.Namespace("nope", ""), "v1", "Namespace")
	for _, c := range []struct {
		name string
		ch   Change
		want string
	}{
		{"unknown cluster", Change{Cluster: "cluster9", Object: ns, Origin: "a.yaml:3"}, `a.yaml:3: no cluster "cluster9" in the mesh (clusters: cluster1, cluster2)`},
		{"delete of nothing", Change{Cluster: "cluster1", Delete: true, Object: ns, Origin: "b.yaml:1"}, "b.yaml:1: delete Namespace nope in cluster1: Namespace nope does not exist in cluster cluster1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.WhatIf([]Change{c.ch}, nil)
			if err == nil || !errors.Is(err, ErrWhatIf) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
		})
	}
}

// helloworldTemplate is the pod template of the lab's helloworld pods
// (meshtest.Pod's labels), with edit applied.
func helloworldTemplate(edit func(l map[string]string)) corev1.PodTemplateSpec {
	l := map[string]string{"app": "helloworld", "version": "v1", model.LabelNetwork: "network2", model.LabelTLSMode: "istio"}
	if edit != nil {
		edit(l)
	}
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
}

// workloadObject is a Deployment, ReplicaSet or StatefulSet of sample
// selecting app=helloworld, as a what-if file would hold it.
func workloadObject(t *testing.T, kind, name string, replicas *int32, tmpl corev1.PodTemplateSpec) *unstructured.Unstructured {
	t.Helper()
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "helloworld"}}
	meta := metav1.ObjectMeta{Name: name, Namespace: "sample"}
	var obj runtime.Object
	switch kind {
	case "Deployment":
		obj = &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Selector: sel, Replicas: replicas, Template: tmpl}}
	case "ReplicaSet":
		obj = &appsv1.ReplicaSet{ObjectMeta: meta, Spec: appsv1.ReplicaSetSpec{Selector: sel, Replicas: replicas, Template: tmpl}}
	case "StatefulSet":
		obj = &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Selector: sel, Replicas: replicas, Template: tmpl}}
	}
	return toUnstructured(t, obj, "apps/v1", kind)
}

// TestWhatIfWorkloads: a workload controller's what-if re-makes the live
// pods it owns from its template (keeping their addresses), deletes them
// when it is deleted or scaled to zero, and says so; the endpoint
// controller's part follows.
func TestWhatIfWorkloads(t *testing.T) {
	r := labRegistry(t)
	const h = "helloworld.sample.svc.cluster.local"
	noTLS := helloworldTemplate(func(l map[string]string) { delete(l, model.LabelTLSMode) })
	// endpoints is cluster2's helloworld endpoints as "address tlsMode".
	endpoints := func(s *model.Snapshot) string {
		var out []string
		for _, e := range s.Service(h).Clusters["cluster2"].Endpoints {
			out = append(out, e.Address+" "+e.TLSMode)
		}
		return strings.Join(out, ",")
	}
	cases := []struct {
		name      string
		obj       *unstructured.Unstructured
		delete    bool
		effect    string // a part of the outcome's effect ("" for none)
		unread    string // a part of why it changes nothing
		after     string // endpoints(After)
		rewritten bool   // the endpoint controller rewrites the slice
	}{
		{name: "a Deployment whose template lacks the mTLS label: its pod loses it, keeping its address",
			obj:    workloadObject(t, "Deployment", "helloworld", nil, noTLS),
			effect: "1 pod in cluster2 re-made from its template (helloworld-v2-def), each keeping its live name, address, node and readiness",
			after:  "10.144.0.15 ", rewritten: false},
		{name: "the same Deployment with the live template: nothing meshscope reads changes",
			obj:    workloadObject(t, "Deployment", "helloworld", ptr.To[int32](1), helloworldTemplate(nil)),
			effect: "nothing meshscope reads of them changes", after: "10.144.0.15 istio"},
		{name: "the Deployment deleted: its pod goes, and its endpoint",
			obj: workloadObject(t, "Deployment", "helloworld", nil, noTLS), delete: true,
			effect: "1 pod in cluster2 deleted with it (helloworld-v2-def)", after: "", rewritten: true},
		{name: "the Deployment scaled to zero",
			obj:    workloadObject(t, "Deployment", "helloworld", ptr.To[int32](0), helloworldTemplate(nil)),
			effect: "gone: it is scaled to 0", after: "", rewritten: true},
		{name: "scaled up: the live pod kept, the new ones not predicted",
			obj:    workloadObject(t, "Deployment", "helloworld", ptr.To[int32](3), helloworldTemplate(nil)),
			effect: "spec.replicas 3, 1 live: the 2 new pods are not predicted", after: "10.144.0.15 istio"},
		{name: "its ReplicaSet put directly: re-made, as its pods are replaced",
			obj:    workloadObject(t, "ReplicaSet", "helloworld-abc", nil, noTLS),
			effect: "a ReplicaSet does not update its live pods", after: "10.144.0.15 "},
		{name: "a paused Deployment: its pod kept as it is",
			obj: func() *unstructured.Unstructured {
				u := workloadObject(t, "Deployment", "helloworld", nil, noTLS)
				_ = unstructured.SetNestedField(u.Object, true, "spec", "paused")
				return u
			}(),
			effect: "it is paused: 1 pod in cluster2 kept as it is until it is resumed (helloworld-v2-def)",
			after:  "10.144.0.15 istio"},
		{name: "a Deployment of another name owns no pod",
			obj:    workloadObject(t, "Deployment", "hello", nil, noTLS),
			unread: "it owns no live pod in cluster2 (no pod of sample selected by app=helloworld has a ReplicaSet hello-<pod-template-hash> as its controller)",
			after:  "10.144.0.15 istio"},
		{name: "a StatefulSet does not own a ReplicaSet's pod",
			obj:    workloadObject(t, "StatefulSet", "helloworld", nil, noTLS),
			unread: "it owns no live pod in cluster2", after: "10.144.0.15 istio"},
		{name: "a template whose labels its selector no longer selects: the pod is released, not re-made",
			obj:    workloadObject(t, "Deployment", "helloworld", nil, helloworldTemplate(func(l map[string]string) { l["app"] = "hello" })),
			effect: "1 pod in cluster2 re-made", after: "", rewritten: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := r.WhatIf([]Change{{Cluster: "cluster2", Object: c.obj, Delete: c.delete, Origin: "w.yaml:1"}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := endpoints(w.Before); got != "10.144.0.15 istio" {
				t.Errorf("before: %q", got)
			}
			if got := endpoints(w.After); got != c.after {
				t.Errorf("after: %q, want %q", got, c.after)
			}
			o := w.Outcomes[0]
			if c.effect != "" && !strings.Contains(o.Effect, c.effect) || c.effect == "" && o.Effect != "" {
				t.Errorf("effect %q, want %q", o.Effect, c.effect)
			}
			wantRead := "pods"
			if c.unread != "" || strings.HasPrefix(c.effect, "it is paused") {
				wantRead = ""
			}
			if c.unread != "" && !strings.Contains(o.Unread, c.unread) || strings.Join(o.Read, ",") != wantRead {
				t.Errorf("read %q, unread %q, want %q", o.Read, o.Unread, c.unread)
			}
			rewritten := len(w.Notes) == 1 && strings.Contains(w.Notes[0], "EndpointSlices of Service sample/helloworld in cluster2 are rewritten")
			if rewritten != c.rewritten {
				t.Errorf("notes %q, rewritten %v", w.Notes, c.rewritten)
			}
		})
	}
}
