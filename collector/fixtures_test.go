package collector

import (
	"github.com/meshscope/meshscope/model"

	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Objects of the lab fixture (see the lab package), for fake clientsets.

func nsObj(name, network string) *corev1.Namespace {
	n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if network != "" {
		n.Labels = map[string]string{model.LabelNetwork: network}
	}
	return n
}

func eastWest(network, ip string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "istio-eastwestgateway", Namespace: "istio-system",
			Labels: map[string]string{"istio": "eastwestgateway", model.LabelNetwork: network}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{
			{Name: "status-port", Port: 15021}, {Name: "tls", Port: 15443}, {Name: "tls-istiod", Port: 15012}, {Name: "tls-webhook", Port: 15017}}},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: ip}}}},
	}
}

func svcObj(ns, name string, port int32) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
			Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{...}"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.10", Ports: []corev1.ServicePort{{Name: "http", Port: port}}},
	}
}

func podObj(ns, name, ip, network string, tls bool) *corev1.Pod {
	l := map[string]string{"app": "helloworld", "version": "v1", "pod-template-hash": "abc"}
	if network != "" {
		l[model.LabelNetwork] = network
	}
	if tls {
		l[model.LabelTLSMode] = "istio"
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: l},
		Spec:       corev1.PodSpec{NodeName: "node1", Containers: []corev1.Container{{Name: "c", Image: "x"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip},
	}
}

func sliceObj(ns, svc, name string, port int32, pods map[string]string) *discoveryv1.EndpointSlice {
	pn, proto := "http", corev1.ProtocolTCP
	sl := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &pn, Port: &port, Protocol: &proto}},
	}
	for pod, ip := range pods {
		ready := true
		sl.Endpoints = append(sl.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{ip},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod},
		})
	}
	return sl
}

func nodeObj(name, region, zone string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"topology.kubernetes.io/region": region, "topology.kubernetes.io/zone": zone}}}
}

// labCluster returns the objects of one lab cluster.
func labCluster(network, gwIP, pod, podIP string) []runtime.Object {
	return []runtime.Object{
		nsObj("istio-system", network), nsObj("sample", ""),
		eastWest(network, gwIP),
		svcObj("sample", "helloworld", 5000),
		podObj("sample", pod, podIP, network, true),
		sliceObj("sample", "helloworld", "helloworld-"+network, 5000, map[string]string{pod: podIP}),
		nodeObj("node1", "region1", "zone-"+network),
	}
}

const tokenCluster2 = "s3cr3t-token-for-cluster2-abcdef"

func kubeconfigFor(server, token string) []byte {
	return []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: u
  user:
    token: %s
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
`, server, token))
}

func remoteSecret(name string, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "istio-system",
			Labels:            map[string]string{model.MultiClusterSecretLabel: "true"},
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))},
		Data: data,
	}
}

// fakeWorld maps fake server URLs to fake clientsets, as the demo does.
type fakeWorld struct {
	t       *testing.T
	clients map[string]kubernetes.Interface
	built   map[string]int // server → number of clients built
	tokens  []string       // tokens seen in configs
}

func newFakeWorld(t *testing.T) *fakeWorld {
	return &fakeWorld{t: t, clients: map[string]kubernetes.Interface{}, built: map[string]int{}}
}

func (f *fakeWorld) newClient(id string, cfg *rest.Config) (kubernetes.Interface, error) {
	s := normalizeServer(cfg.Host)
	c, ok := f.clients[s]
	if !ok {
		return nil, fmt.Errorf("dial tcp: lookup %s: no such host", cfg.Host)
	}
	f.built[s]++
	f.tokens = append(f.tokens, cfg.BearerToken)
	return c, nil
}

func fastOptions(f *fakeWorld, sources ...Source) Options {
	return Options{
		Sources:         sources,
		NewClient:       f.newClient,
		SyncTimeout:     5 * time.Second,
		HealthInterval:  200 * time.Millisecond,
		HealthTimeout:   200 * time.Millisecond,
		PublishInterval: 20 * time.Millisecond,
	}
}
