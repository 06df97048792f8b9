package watch

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestIstiodClusterIDFromPod(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "istiod-1", Namespace: "istio-system", Labels: map[string]string{"app": "istiod"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "discovery", Args: []string{"discovery", "--monitoringAddr=:15014"},
			Env: []corev1.EnvVar{{Name: "CLUSTER_ID", Value: "cluster1"}}}}}}
	id := func(p *corev1.Pod) string { c, _ := transformIstiodPod(p); return c.(*cachedIstiod).pod.ClusterID }
	if got := id(pod); got != "cluster1" {
		t.Errorf("env: %q", got)
	}
	pod.Spec.Containers[0].Env = nil
	pod.Spec.Containers[0].Args = []string{"discovery", "--clusterID", "from-flag"}
	if got := id(pod); got != "from-flag" {
		t.Errorf("flag: %q", got)
	}
	if got := injectorValuesClusterName(`{"global":{"multiCluster":{"clusterName":"remote1"},"network":"n1"}}`); got != "remote1" {
		t.Errorf("injector: %q", got)
	}
	if got := injectorValuesClusterName(`not json`); got != "" {
		t.Errorf("garbage injector values: %q", got)
	}
}
