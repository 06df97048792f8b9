package kubesim

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// The EndpointSlice carries each endpoint's node and that node's zone, as
// the EndpointSlice controller writes them.
func TestSyncWritesNodeAndZone(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{corev1.LabelTopologyZone: "zone-a"}}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hw", Namespace: "s"},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "hw"}, Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}},
	)
	for _, p := range []Pod{
		{Namespace: "s", Name: "a", IP: "10.0.0.1", Labels: map[string]string{"app": "hw"}, Node: "n1"},
		{Namespace: "s", Name: "b", IP: "10.0.0.2", Labels: map[string]string{"app": "hw"}},
	} {
		if err := CreatePod(ctx, cs, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := Sync(ctx, cs, "s", "hw"); err != nil {
		t.Fatal(err)
	}
	sl, err := cs.DiscoveryV1().EndpointSlices("s").Get(ctx, "hw-sim", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sl.Endpoints) != 2 {
		t.Fatalf("endpoints %+v", sl.Endpoints)
	}
	a, b := sl.Endpoints[0], sl.Endpoints[1]
	if a.NodeName == nil || *a.NodeName != "n1" || a.Zone == nil || *a.Zone != "zone-a" {
		t.Errorf("pod on n1: %+v", a)
	}
	if b.NodeName != nil || b.Zone != nil {
		t.Errorf("pod on no node: %+v", b)
	}
}
