package whatif

import (
	"context"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/demo"
	"github.com/meshscope/meshscope/model"
)

// demoRegistry is the demo mesh's collector, settled.
func demoRegistry(t *testing.T) *collector.Registry {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	d, err := demo.Start(ctx, demo.Options{Seed: 1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	if _, err := d.Registry.WaitSettled(ctx); err != nil {
		t.Fatal(err)
	}
	return d.Registry
}

// A change that leaves the shared part alone (a pod's label) is compared on
// the services that differ only: the same endpoint changes as comparing
// every service, and the problems it brings are the ones the whole mesh's
// diagnoses differ by.
func TestNarrowEqualsWholeMesh(t *testing.T) {
	reg := demoRegistry(t)
	snap := reg.Snapshot()
	var pod *model.ProxyPod
	for i := range snap.Proxies {
		if snap.Proxies[i].Cluster == "cluster2" && snap.Proxies[i].Namespace == "bookinfo" {
			pod = &snap.Proxies[i]
			break
		}
	}
	if pod == nil {
		t.Fatal("no bookinfo pod in cluster2")
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": pod.Name, "namespace": pod.Namespace, "labels": map[string]any{"app": "reviews"}},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": "x"}}},
	}}
	w, err := reg.WhatIf([]collector.Change{{Cluster: "cluster2", Object: u, Origin: "t:1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, a, cut := narrow(w.Before, w.After)
	if !cut || len(b.Services) == 0 || len(b.Services) > 3 || len(a.Services) != len(b.Services) {
		t.Fatalf("narrow: cut %v, %d services before, %d after", cut, len(b.Services), len(a.Services))
	}
	whole := Endpoints(w.Before, w.After)
	narrowed, problems := compare(w.Before, w.After, nil)
	if len(whole) == 0 || !reflect.DeepEqual(whole, narrowed) {
		t.Errorf("endpoint changes differ: whole mesh %d, narrowed %d", len(whole), len(narrowed))
	}
	if len(problems.New)+len(problems.Resolved) == 0 {
		t.Error("a pod that loses its mTLS label and its app brings no problem")
	}
	// A change of the shared part (an istiod setting) is compared whole.
	w, err = reg.WhatIf(nil, []model.IstiodEnv{{Key: model.SettingAmbientMultiNetwork, Value: "false"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, cut := narrow(w.Before, w.After); cut {
		t.Error("a settings change was narrowed")
	}
}

// A change of the shared part is diagnosed on the services it can touch
// only: the problems it brings and resolves are the whole mesh's.
func TestDiagnosedEqualsWholeMesh(t *testing.T) {
	reg := demoRegistry(t)
	objs, err := Read([]Source{{Path: "../../docs/examples/what-if-plaintext-reviews.yaml"}}, "cluster1", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		changes []collector.Change
		env     []model.IstiodEnv
	}{
		{"a DestinationRule", []collector.Change{{Cluster: objs[0].Cluster, Object: objs[0].Object, Origin: objs[0].Origin()}}, nil},
		{"ambient multi-network off", nil, []model.IstiodEnv{{Key: model.SettingAmbientMultiNetwork, Value: "false"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, err := reg.WhatIf(c.changes, c.env)
			if err != nil {
				t.Fatal(err)
			}
			sameProblemsAsWhole(t, w)
		})
	}
}

// A change of labels — a namespace's, a Service's — or a Service added to
// a cluster is compared and diagnosed on the services it concerns (those
// of the namespace, the Service's own), and brings and resolves the
// problems the whole mesh's diagnoses differ by: the demo's adservice
// created in cluster2, where shop's sidecars look it up (missing-service
// resolved, read from shop's other services), and namespace shop labelled
// for a revision that does not run (namespace-revision-missing).
func TestNarrowLabelsEqualsWholeMesh(t *testing.T) {
	reg := demoRegistry(t)
	svc := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "adservice", "namespace": "shop"},
		"spec":     map[string]any{"selector": map[string]any{"app": "adservice"}, "ports": []any{map[string]any{"name": "http", "port": int64(9555)}}}}}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": "shop", "labels": map[string]any{model.LabelRev: "gone"}}}}
	for _, c := range []struct {
		name string
		ch   collector.Change
	}{
		{"a Service added", collector.Change{Cluster: "cluster2", Object: svc, Origin: "svc:1"}},
		{"a namespace relabelled", collector.Change{Cluster: "cluster1", Object: ns, Origin: "ns:1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, err := reg.WhatIf([]collector.Change{c.ch}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, cut := narrow(w.Before, w.After); !cut {
				t.Error("not narrowed: compared whole")
			}
			sameProblemsAsWhole(t, w)
		})
	}
}

// sameProblemsAsWhole: what-if's (possibly narrowed) comparison brings and
// resolves exactly the problems the diagnoses of the whole meshes differ
// by, and those are not none.
func sameProblemsAsWhole(t *testing.T, w *collector.WhatIf) {
	t.Helper()
	now := w.Before.Time
	whole := diffProblems(explain.Diagnose(w.Before, explain.Inputs{Now: now}), explain.Diagnose(w.After, explain.Inputs{Now: now}))
	_, got := compare(w.Before, w.After, nil)
	key := func(ps []model.Problem) []string {
		var out []string
		for _, p := range ps {
			out = append(out, string(p.Kind)+" "+p.Sentence)
		}
		return out
	}
	if len(whole.New)+len(whole.Resolved) == 0 {
		t.Fatal("the change brings and resolves no problem")
	}
	if !reflect.DeepEqual(key(whole.New), key(got.New)) || !reflect.DeepEqual(key(whole.Resolved), key(got.Resolved)) {
		t.Errorf("whole mesh: new %v resolved %v\nwhat-if: new %v resolved %v", key(whole.New), key(whole.Resolved), key(got.New), key(got.Resolved))
	}
}
