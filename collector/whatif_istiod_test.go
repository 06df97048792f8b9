package collector

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

// TestWhatIfIstiodDeployment: a what-if of istiod's own Deployment with a
// changed environment (ambient multi-network turned on) re-makes istiod's
// pod from the template, and the control plane's settings after the change
// come from that pod, as they would once the rollout is done — the change
// an operator makes instead of --istiod-env.
func TestWhatIfIstiodDeployment(t *testing.T) {
	w := newFakeWorld(t)
	sel := map[string]string{"app": "istiod"}
	istiod := meshtest.Pod("istio-system", "istiod-7d9-x1", "10.44.0.20", "", false)
	istiod.Labels = map[string]string{"app": "istiod", "pod-template-hash": "7d9"}
	istiod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "istiod-7d9", Controller: ptr.To(true)}}
	istiod.Spec.Containers = []corev1.Container{{Name: "discovery", Image: "docker.io/istio/pilot:1.31.0",
		Env: []corev1.EnvVar{{Name: "CLUSTER_ID", Value: "cluster1"}}}}
	istiod.Status.Phase = corev1.PodRunning
	istiod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	c1 := fake.NewClientset(append(meshtest.LabCluster("network1", "192.168.60.113", "helloworld-v1-abc", "10.44.0.13"), istiod)...)
	r := startRegistry(t, fastOptions(w, Source{Name: "cluster1", Server: "https://127.0.0.1:6443", Client: c1}))
	waitFor(t, r, 10*time.Second, "istiod's pod", func(s *model.Snapshot) bool {
		return s.Settled() && len(s.ClusterByID("cluster1").Istiods) == 1
	})

	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "discovery", Image: "docker.io/istio/pilot:1.31.0",
		Env: []corev1.EnvVar{{Name: "CLUSTER_ID", Value: "cluster1"}, {Name: model.SettingAmbient, Value: "true"}, {Name: model.SettingAmbientMultiNetwork, Value: "true"}},
	}}}}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "istiod", Namespace: "istio-system"},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: tmpl}}
	wi, err := r.WhatIf([]Change{{Cluster: "cluster1", Object: toUnstructured(t, dep, "apps/v1", "Deployment"), Origin: "istiod.yaml:1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	before, after := wi.Before.SettingsFor("cluster1"), wi.After.SettingsFor("cluster1")
	if before.AmbientMultiNetwork() {
		t.Errorf("before: %v", before)
	}
	st := after.Get(model.SettingAmbientMultiNetwork)
	if !after.AmbientMultiNetwork() || st.From != model.FromPod || st.Note != "istiod-7d9-x1" {
		t.Errorf("after: %v (multi-network %+v)", after, st)
	}
	c := wi.After.ClusterByID("cluster1")
	if len(c.Istiods) != 1 || !c.Istiods[0].Ready || c.Istiods[0].ClusterID != "cluster1" {
		t.Errorf("istiod after: %+v", c.Istiods)
	}
	if o := wi.Outcomes[0]; o.Effect == "" {
		t.Errorf("outcome %+v", o)
	}
}
