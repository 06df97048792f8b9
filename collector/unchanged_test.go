package collector

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

// TestLeaderElectionIsNoChange: istiod renewing its leader election (a
// ConfigMap annotation in istio-system, every few seconds) publishes no
// snapshot, yet keeps the watch alive; a change of a ConfigMap meshscope
// reads (meshNetworks of ConfigMap istio) still publishes.
func TestLeaderElectionIsNoChange(t *testing.T) {
	w := newFakeWorld(t)
	c1 := fake.NewClientset(meshtest.LabCluster("network1", "192.168.60.113", "hw1", "10.44.0.13")...)
	opts := fastOptions(w, Source{Name: "cluster1", Server: "https://c1", Client: c1})
	opts.HealthInterval = time.Hour // no probe-driven publishes in this test
	r := startRegistry(t, opts)
	ctx := context.Background()
	settled(ctx, t, r)
	cms := c1.CoreV1().ConfigMaps("istio-system")
	leader, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "istio-leader", Namespace: "istio-system"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the new ConfigMap's snapshot goes out
	v0 := r.versionNow()
	lastEvent := func() time.Time {
		var c model.Cluster
		r.entries[0].w.Status(&c)
		return c.LastEventAt
	}
	alive := lastEvent()
	for i := 0; i < 5; i++ {
		leader.Annotations = map[string]string{"control-plane.alpha.kubernetes.io/leader": fmt.Sprintf(`{"holderIdentity":"istiod","renewTime":"2026-11-22T20:17:%02dZ"}`, i)}
		if leader, err = cms.Update(ctx, leader, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if v := r.versionNow(); v != v0 {
		t.Fatalf("leader-election renewals published %d snapshots", v-v0)
	}
	later := lastEvent()
	if !later.After(alive) {
		t.Error("the renewals did not count as a sign of a live watch")
	}

	mesh := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "istio", Namespace: "istio-system"},
		Data: map[string]string{"meshNetworks": "networks: {}"}}
	if _, err := cms.Create(ctx, mesh, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, r, 2*time.Second, "a snapshot for ConfigMap istio", func(*model.Snapshot) bool { return r.versionNow() > v0 })
}
