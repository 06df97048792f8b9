package collector

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

// labRegistry runs a registry over the lab's two clusters (fakes), cluster2
// read through cluster1's remote secret, and waits until it has settled.
func labRegistry(t *testing.T) *Registry {
	t.Helper()
	w := newFakeWorld(t)
	// Pods ready, as the fixture's EndpointSlices say they are.
	ready := func(objs []runtime.Object) []runtime.Object {
		for _, o := range objs {
			if p, ok := o.(*corev1.Pod); ok {
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			}
		}
		return objs
	}
	c1 := fake.NewClientset(append(ready(meshtest.LabCluster("network1", "192.168.60.113", "helloworld-v1-abc", "10.44.0.13")),
		remoteSecret("istio-remote-secret-cluster2", map[string][]byte{"cluster2": kubeconfigFor("https://127.0.0.1:6444", tokenCluster2)}))...)
	c2 := fake.NewClientset(ready(meshtest.LabCluster("network2", "192.168.60.9", "helloworld-v2-def", "10.144.0.15"))...)
	w.clients["https://127.0.0.1:6444"] = c2
	r := startRegistry(t, fastOptions(w, Source{Name: "cluster1", Server: "https://127.0.0.1:6443", Client: c1}))
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
