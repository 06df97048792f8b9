package fix

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

// TestPlanHopNetwork: a gateway pod whose proxy asks another network's
// view gets REQUESTED_NETWORK_VIEW set to its network on its template's
// istio-proxy container (the edit keeps the container's other env).
func TestPlanHopNetwork(t *testing.T) {
	s := meshtest.LabMultiPrimary(meshtest.Lab().Time)
	for i := range s.Proxies {
		if p := &s.Proxies[i]; p.Kind == model.ProxyGateway && p.Cluster == "cluster2" {
			id := *p.Injected
			id.NetworkView = "network1"
			p.Injected = &id
		}
	}
	var hop *model.Problem
	for _, p := range explain.Diagnose(s, explain.Inputs{}) {
		if p.Kind == model.ProblemHopNetwork {
			hop = &p
			break
		}
	}
	if hop == nil {
		t.Fatal("no second-hop-network problem")
	}
	pl := Propose(s, *hop)
	i := slices.IndexFunc(pl.Proposals, func(p Proposal) bool { return strings.Contains(p.Title, "ISTIO_META_REQUESTED_NETWORK_VIEW=network2") })
	if i < 0 {
		t.Fatalf("proposals %+v (none: %s)", pl.Proposals, pl.None)
	}
	e := pl.Proposals[i].Edits[0]
	if !e.Template || e.Object.Kind != "Pod" || e.Object.Cluster != "cluster2" {
		t.Errorf("edit of %+v", e)
	}
	dep := &unstructured.Unstructured{Object: map[string]any{"kind": "Deployment", "spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "istio-proxy", "env": []any{
			map[string]any{"name": "ISTIO_META_NETWORK", "value": "network2"},
			map[string]any{"name": "ISTIO_META_REQUESTED_NETWORK_VIEW", "value": "network1"}}}}}}}}}
	if err := e.Apply(dep); err != nil {
		t.Fatal(err)
	}
	cs, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	env := cs[0].(map[string]any)["env"].([]any)
	if len(env) != 2 || env[1].(map[string]any)["value"] != "network2" || env[0].(map[string]any)["value"] != "network2" {
		t.Errorf("env after the edit: %v", env)
	}
}
