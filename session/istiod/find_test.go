package istiod

import (
	"context"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func istiodPod(name string, phase corev1.PodPhase, ready bool, age time.Duration) *corev1.Pod {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "istio-system", Labels: map[string]string{"app": "istiod"},
			CreationTimestamp: metav1.NewTime(time.Now().Add(-age))},
		Status: corev1.PodStatus{Phase: phase, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}},
	}
}

func TestFindPod(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(
		istiodPod("istiod-old", corev1.PodRunning, true, time.Hour),
		istiodPod("istiod-new", corev1.PodRunning, true, time.Minute),
		istiodPod("istiod-starting", corev1.PodRunning, false, time.Second),
		istiodPod("istiod-pending", corev1.PodPending, false, 0),
	)
	p, err := FindPod(ctx, cs, "", "")
	if err != nil || p.Name != "istiod-new" {
		t.Fatalf("picked %v, %v; want the newest ready one", p, err)
	}

	// A canary upgrade: without a revision, the default revision's pod
	// wins over a newer canary; with one, that revision's.
	canary := istiodPod("istiod-canary", corev1.PodRunning, true, time.Second)
	canary.Labels["istio.io/rev"] = "canary"
	def := istiodPod("istiod-default", corev1.PodRunning, true, time.Hour)
	def.Labels["istio.io/rev"] = "default"
	cs = fake.NewClientset(canary, def)
	if p, err := FindPod(ctx, cs, "", ""); err != nil || p.Name != "istiod-default" {
		t.Errorf("picked %v, %v; want the default revision's", p, err)
	}
	if p, err := FindPod(ctx, cs, "", "canary"); err != nil || p.Name != "istiod-canary" {
		t.Errorf("picked %v, %v; want the canary", p, err)
	}
	// A revision that does not run here: the default revision's (the
	// prediction falls back the same way); a tag: its revision's.
	if p, err := FindPod(ctx, cs, "", "1-29"); err != nil || p.Name != "istiod-default" {
		t.Errorf("picked %v, %v; want the default revision's", p, err)
	}
	tag := &admissionv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "istio-revision-tag-prod",
		Labels: map[string]string{"istio.io/tag": "prod", "istio.io/rev": "canary"}}}
	cs = fake.NewClientset(canary, def, tag)
	if p, err := FindPod(ctx, cs, "", "prod"); err != nil || p.Name != "istiod-canary" {
		t.Errorf("picked %v, %v; want the canary (tag prod)", p, err)
	}

	cs = fake.NewClientset(istiodPod("istiod-starting", corev1.PodRunning, false, time.Second))
	if _, err := FindPod(ctx, cs, "istio-system", ""); err == nil || !strings.Contains(err.Error(), "istiod-starting (Running)") {
		t.Errorf("not ready: %v", err)
	}
	if _, err := FindPod(ctx, fake.NewClientset(), "istio-system", ""); err == nil || !strings.Contains(err.Error(), "no istiod pod") {
		t.Errorf("none: %v", err)
	}
}
