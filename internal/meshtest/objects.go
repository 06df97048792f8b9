package meshtest

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/meshscope/meshscope/model"
)

// The lab fixture as Kubernetes objects (see the lab package).

// Namespace is a lab object (for fake clientsets and the build's tests).
func Namespace(name, network string) *corev1.Namespace {
	n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if network != "" {
		n.Labels = map[string]string{model.LabelNetwork: network}
	}
	return n
}

// EastWestGateway is a lab object (for fake clientsets and the build's tests).
func EastWestGateway(network, ip string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "istio-eastwestgateway", Namespace: "istio-system",
			Labels: map[string]string{"istio": "eastwestgateway", model.LabelNetwork: network}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{
			{Name: "status-port", Port: 15021}, {Name: "tls", Port: 15443}, {Name: "tls-istiod", Port: 15012}, {Name: "tls-webhook", Port: 15017}}},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: ip}}}},
	}
}

// Service is a lab object (for fake clientsets and the build's tests).
func Service(ns, name string, port int32) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
			Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{...}"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.10", Ports: []corev1.ServicePort{{Name: "http", Port: port}}},
	}
}

// Pod is a lab object (for fake clientsets and the build's tests).
func Pod(ns, name, ip, network string, tls bool) *corev1.Pod {
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

// EndpointSlice is a lab object (for fake clientsets and the build's tests).
func EndpointSlice(ns, svc, name string, port int32, pods map[string]string) *discoveryv1.EndpointSlice {
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

// Node is a lab object (for fake clientsets and the build's tests).
func Node(name, region, zone string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"topology.kubernetes.io/region": region, "topology.kubernetes.io/zone": zone}}}
}

// LabCluster returns the objects of one lab cluster.
func LabCluster(network, gwIP, pod, podIP string) []runtime.Object {
	return []runtime.Object{
		Namespace("istio-system", network), Namespace("sample", ""),
		EastWestGateway(network, gwIP),
		Service("sample", "helloworld", 5000),
		Pod("sample", pod, podIP, network, true),
		EndpointSlice("sample", "helloworld", "helloworld-"+network, 5000, map[string]string{pod: podIP}),
		Node("node1", "region1", "zone-"+network),
	}
}

const MeshNetworksYAML = `
networks:
  network1:
    endpoints:
    - fromRegistry: cluster1
    gateways:
    - registryServiceName: istio-ingressgateway.istio-system.svc.cluster.local
      port: 443
  network2:
    endpoints:
    - from_cidr: 10.144.0.0/16
    gateways:
    - address: 192.168.60.9
      port: 15443
  network3:
    endpoints:
    - fromCidr: 10.200.0.0/16
    gateways:
    - address: gw.example.com
      port: 15443
`
