package whatif

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/meshscope/meshscope/internal/meshtest"
)

// Workload controllers of apps/v1 go to the collector (which re-makes
// the pods they own); Jobs and controllers of other groups are listed
// with why they change nothing.
func TestWorkloadKinds(t *testing.T) {
	for _, c := range []struct {
		gk       schema.GroupKind
		modelled bool
		why      string
	}{
		{schema.GroupKind{Group: "apps", Kind: "Deployment"}, true, ""},
		{schema.GroupKind{Group: "apps", Kind: "StatefulSet"}, true, ""},
		{schema.GroupKind{Group: "apps", Kind: "DaemonSet"}, true, ""},
		{schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}, true, ""},
		{schema.GroupKind{Group: "batch", Kind: "Job"}, false, "meshscope re-makes the pods of Deployments, StatefulSets, DaemonSets and ReplicaSets, not of Jobs"},
		{schema.GroupKind{Group: "batch", Kind: "CronJob"}, false, "istiod does not read CronJobs"},
		{schema.GroupKind{Group: "extensions", Kind: "Deployment"}, false, "istiod does not read it"},
	} {
		t.Run(c.gk.String(), func(t *testing.T) {
			why, reads := unmodelled(c.gk)
			if reads {
				t.Errorf("istiod reads %s?", c.gk)
			}
			if (why == "") != c.modelled || !strings.Contains(why, c.why) {
				t.Errorf("why %q, want %q", why, c.why)
			}
			obj := Object{Cluster: "cluster2", File: "w.yaml", Line: 1}
			objs, err := Decode("w.yaml", []byte("apiVersion: "+schema.GroupVersion{Group: c.gk.Group, Version: "v1"}.String()+"\nkind: "+c.gk.Kind+"\nmetadata: {name: helloworld, namespace: sample}\n"))
			if err != nil {
				t.Fatal(err)
			}
			obj.Object = objs[0].Object
			if got := len(Request{Objects: []Object{obj}}.Modelled()) == 1; got != c.modelled {
				t.Errorf("modelled %v, want %v", got, c.modelled)
			}
		})
	}
}

// What a workload controller did to its pods reaches the report: JSON's
// effect, and the text's OBJECTS line.
func TestAnswerWorkloadEffect(t *testing.T) {
	objs, err := Decode("deploy.yaml", []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: helloworld-v2, namespace: sample}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: nothing, namespace: sample}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range objs {
		objs[i].Cluster = "cluster2"
	}
	snap := meshtest.Lab()
	const effect = "1 pod in cluster2 re-made from its template (helloworld-v2-54df5f84b-9hxgw), each keeping its live name, address, node and readiness"
	rep := Answer(Request{Objects: objs}, Applied{Before: snap, After: snap,
		Read: [][]string{{"pods"}, nil}, Unread: []string{"", "it owns no live pod in cluster2 (…)"}, Effect: []string{effect, ""}})
	if len(rep.Objects) != 2 {
		t.Fatalf("objects %+v", rep.Objects)
	}
	if o := rep.Objects[0]; o.Effect != effect || o.IstiodReads || strings.Join(o.Read, ",") != "pods" {
		t.Errorf("the Deployment: %+v", o)
	}
	if o := rep.Objects[1]; o.Effect != "" || !strings.HasPrefix(o.Unread, "it owns no live pod") {
		t.Errorf("the Deployment of nothing: %+v", o)
	}
	var b bytes.Buffer
	WriteText(&b, rep, 0)
	for _, want := range []string{
		"put Deployment sample/helloworld-v2 in cluster2 (deploy.yaml:1): " + effect + " (read as pods)",
		"put Deployment sample/nothing in cluster2 (deploy.yaml:5): changes nothing meshscope predicts — it owns no live pod in cluster2",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}
