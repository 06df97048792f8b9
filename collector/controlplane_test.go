package collector

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

// TestRegistryControlPlaneFacts: through fake clientsets, a cluster's
// istiod pods (with CLUSTER_ID), its published root and whether its remote
// secrets are read reach the snapshot; other pods and ConfigMaps do not.
func TestRegistryControlPlaneFacts(t *testing.T) {
	root := meshtest.SelfSigned(t, "cluster1 root", time.Now().AddDate(10, 0, 0))
	istiod := meshtest.Pod("istio-system", "istiod-abc", "10.44.0.200", "", false)
	istiod.Labels = map[string]string{"app": "istiod", "istio.io/rev": "default"}
	istiod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "CLUSTER_ID", Value: "cluster1"}}
	istiod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	objs := append(meshtest.LabCluster("network1", "192.168.60.113", "hello-1", "10.44.0.13"),
		istiod,
		meshtest.Pod("istio-system", "istio-eastwestgateway-1", "10.44.0.2", "network1", false),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: model.RootCertConfigMap, Namespace: "istio-system"}, Data: map[string]string{model.RootCertKey: string(root)}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "istio-system"}, Data: map[string]string{model.RootCertKey: "junk"}},
	)
	f := newFakeWorld(t)
	r := startRegistry(t, fastOptions(f, Source{Name: "cluster1", Server: "https://c1.example:6443", Client: fake.NewSimpleClientset(objs...)}))
	s := settled(context.Background(), t, r)
	c := s.ClusterByID("cluster1")
	if len(c.Istiods) != 1 || c.Istiods[0].ClusterID != "cluster1" || !c.Istiods[0].Ready || c.Istiods[0].Revision != "default" {
		t.Errorf("istiods %+v", c.Istiods)
	}
	if len(c.RootCerts) != 1 || c.RootCerts[0].Subject != "CN=cluster1 root" || c.RootCertError != "" {
		t.Errorf("root certs %+v (%s)", c.RootCerts, c.RootCertError)
	}
	if !c.SecretsRead {
		t.Error("secrets are read")
	}
	gw := s.Service("istio-eastwestgateway.istio-system.svc.cluster.local").Clusters["cluster1"]
	if gw.LBPending {
		t.Error("a gateway with an ingress IP is not pending")
	}
}
