package watch

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshscope/meshscope/model"
)

func TestInjectedIdentity(t *testing.T) {
	proxy := func(image string, args ...string) corev1.Container {
		return corev1.Container{Name: "istio-proxy", Image: image, Args: args,
			Env: []corev1.EnvVar{{Name: "ISTIO_META_NETWORK", Value: "network1"}, {Name: "ISTIO_META_CLUSTER_ID", Value: "cluster1"}}}
	}
	app := corev1.Container{Name: "app", Image: "example.invalid/app:1"}
	cases := []struct {
		name string
		pod  corev1.Pod
		want *model.InjectedIdentity
	}{
		{"no proxy", corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{app}}}, nil},
		{"sidecar", corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{app, proxy("docker.io/istio/proxyv2:1.28.1-distroless", "proxy", "sidecar")}}},
			&model.InjectedIdentity{Kind: model.ProxySidecar, Network: "network1", ClusterID: "cluster1", Image: "docker.io/istio/proxyv2:1.28.1-distroless", Version: "1.28.1"}},
		{"native sidecar", corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{app}, InitContainers: []corev1.Container{proxy("istio/proxyv2:1.29.0")}}},
			&model.InjectedIdentity{Kind: model.ProxySidecar, Network: "network1", ClusterID: "cluster1", Image: "istio/proxyv2:1.29.0", Version: "1.29.0"}},
		{"gateway", corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{proxy("registry:5000/istio/proxyv2@sha256:abc", "proxy", "router")}}},
			&model.InjectedIdentity{Kind: model.ProxyGateway, Network: "network1", ClusterID: "cluster1", Image: "registry:5000/istio/proxyv2@sha256:abc"}},
		{"ztunnel", corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "ztunnel"}}, Spec: corev1.PodSpec{Containers: []corev1.Container{proxy("istio/ztunnel:1.29.0")}}},
			&model.InjectedIdentity{Kind: model.ProxyZtunnel, Network: "network1", ClusterID: "cluster1", Image: "istio/ztunnel:1.29.0", Version: "1.29.0"}},
	}
	for _, c := range cases {
		got := injectedIdentity(&c.pod)
		if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}
