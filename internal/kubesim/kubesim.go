// Package kubesim does, for clusters that run no controllers, the work a
// real cluster's kubelet, EndpointSlice controller and cloud load balancer
// would do: it writes Pod status, keeps one EndpointSlice per Service in step
// with the Pods its selector matches, and sets a Service's load-balancer
// ingress. The lab (real kube-apiservers without controller-manager or
// kubelet) and the demo (client-go fake clientsets) share it.
package kubesim

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/meshscope/meshscope/model"
)

// Pod is a Pod to run: Running, and Ready unless NotReady.
type Pod struct {
	Namespace string
	Name      string
	IP        string
	Labels    map[string]string
	// Annotations, e.g. ambient.istio.io/redirection, which istio-cni's
	// node agent writes on a pod it enrolled in ambient mode.
	Annotations map[string]string
	NotReady    bool
	// Node is the node the pod runs on (what a scheduler would set);
	// port-forwarding needs one.
	Node string
	// Container names the pod's one container (default "app") and Env is
	// its environment (e.g. istiod's CLUSTER_ID).
	Container string
	Env       map[string]string
	// Image is the container's image (default example.invalid/app:1);
	// Args its arguments.
	Image string
	Args  []string
	// Controller is the pod's controller (a ReplicaSet, …), as the
	// controller that made it writes it; nil for none.
	Controller *metav1.OwnerReference
}

// CreatePod creates the Pod and writes its status as a kubelet would.
func CreatePod(ctx context.Context, cs kubernetes.Interface, p Pod) error {
	if p.Container == "" {
		p.Container = "app"
	}
	if p.Image == "" {
		p.Image = "example.invalid/app:1"
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: p.Labels, Annotations: p.Annotations},
		Spec: corev1.PodSpec{
			ServiceAccountName: "default",
			NodeName:           p.Node,
			Containers:         []corev1.Container{{Name: p.Container, Image: p.Image, Args: p.Args, Env: envOf(p.Env)}},
		},
	}
	if p.Controller != nil {
		pod.OwnerReferences = []metav1.OwnerReference{*p.Controller}
	}
	created, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	created.Status = PodStatus(p.IP, !p.NotReady)
	if _, err := cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("pod %s/%s status: %w", p.Namespace, p.Name, err)
	}
	return nil
}

func envOf(m map[string]string) []corev1.EnvVar {
	var out []corev1.EnvVar
	for k, v := range m {
		out = append(out, corev1.EnvVar{Name: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// PodStatus is the status of a running pod at ip.
func PodStatus(ip string, ready bool) corev1.PodStatus {
	cond := corev1.ConditionFalse
	if ready {
		cond = corev1.ConditionTrue
	}
	now := metav1.Now()
	return corev1.PodStatus{
		Phase:     corev1.PodRunning,
		PodIP:     ip,
		PodIPs:    []corev1.PodIP{{IP: ip}},
		HostIP:    "127.0.0.1",
		StartTime: &now,
		// kubectl's READY column counts container statuses.
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "app", Image: "example.invalid/app:1", Ready: ready, Started: ptr.To(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		}},
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: cond, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: cond, LastTransitionTime: now},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
	}
}

// SetIngress replaces a Service's load-balancer ingress IPs (none: the
// load balancer lost its address).
func SetIngress(ctx context.Context, cs kubernetes.Interface, namespace, name string, ips []string) error {
	svc, err := cs.CoreV1().Services(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	svc.Status.LoadBalancer.Ingress = nil
	for _, ip := range ips {
		svc.Status.LoadBalancer.Ingress = append(svc.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip})
	}
	_, err = cs.CoreV1().Services(namespace).UpdateStatus(ctx, svc, metav1.UpdateOptions{})
	return err
}

// SetIngressHostnames replaces the load-balancer ingress of a Service by
// hostnames, as an AWS NLB gives one.
func SetIngressHostnames(ctx context.Context, cs kubernetes.Interface, namespace, name string, hostnames []string) error {
	svc, err := cs.CoreV1().Services(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	svc.Status.LoadBalancer.Ingress = nil
	for _, h := range hostnames {
		svc.Status.LoadBalancer.Ingress = append(svc.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{Hostname: h})
	}
	_, err = cs.CoreV1().Services(namespace).UpdateStatus(ctx, svc, metav1.UpdateOptions{})
	return err
}

// SyncNamespace does the EndpointSlice controller's job for every Service
// with a selector in the namespace.
func SyncNamespace(ctx context.Context, cs kubernetes.Interface, namespace string) error {
	svcs, err := cs.CoreV1().Services(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	pods, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	zones, err := zonesFor(ctx, cs, pods.Items, nil)
	if err != nil {
		return err
	}
	for i := range svcs.Items {
		if err := syncService(ctx, cs, &svcs.Items[i], pods.Items, zones); err != nil {
			return err
		}
	}
	return nil
}

// nodeZones maps each Node to its topology.kubernetes.io/zone label, which
// the EndpointSlice controller copies into every endpoint on that node.
func nodeZones(ctx context.Context, cs kubernetes.Interface) (map[string]string, error) {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	zones := make(map[string]string, len(nodes.Items))
	for _, n := range nodes.Items {
		zones[n.Name] = n.Labels[corev1.LabelTopologyZone]
	}
	return zones, nil
}

// zonesFor returns zones, or the nodes' zones when it is nil and some pod
// runs on a node (no Node read for pods without one).
func zonesFor(ctx context.Context, cs kubernetes.Interface, pods []corev1.Pod, zones map[string]string) (map[string]string, error) {
	if zones != nil {
		return zones, nil
	}
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			return nodeZones(ctx, cs)
		}
	}
	return nil, nil
}

// syncService writes the EndpointSlice "<service>-sim" of one Service from
// the Pods its selector matches (ready or not; never deleted ones), with
// each endpoint's nodeName and, from zones (node → zone), its zone.
func syncService(ctx context.Context, cs kubernetes.Interface, svc *corev1.Service, pods []corev1.Pod, zones map[string]string) error {
	if len(svc.Spec.Selector) == 0 {
		return nil
	}
	sel := labels.SelectorFromSet(svc.Spec.Selector)
	want := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name:      svc.Name + "-sim",
			Namespace: svc.Namespace,
			Labels: map[string]string{
				discoveryv1.LabelServiceName: svc.Name,
				discoveryv1.LabelManagedBy:   "endpointslice-controller.k8s.io",
			},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{},
	}
	for _, sp := range svc.Spec.Ports {
		port := sp.Port
		if sp.TargetPort.IntVal != 0 {
			port = sp.TargetPort.IntVal
		}
		want.Ports = append(want.Ports, discoveryv1.EndpointPort{Name: ptr.To(sp.Name), Port: ptr.To(port), Protocol: ptr.To(sp.Protocol)})
	}
	var matched []corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil && p.Status.PodIP != "" && sel.Matches(labels.Set(p.Labels)) {
			matched = append(matched, p)
		}
	}
	sort.Slice(matched, func(i, j int) bool { return matched[i].Name < matched[j].Name })
	for _, p := range matched {
		ready := PodReady(&p)
		ep := discoveryv1.Endpoint{
			Addresses:  []string{p.Status.PodIP},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready), Serving: ptr.To(ready), Terminating: ptr.To(false)},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID},
		}
		if n := p.Spec.NodeName; n != "" {
			ep.NodeName = ptr.To(n)
			if z := zones[n]; z != "" {
				ep.Zone = ptr.To(z)
			}
		}
		want.Endpoints = append(want.Endpoints, ep)
	}
	api := cs.DiscoveryV1().EndpointSlices(svc.Namespace)
	cur, err := api.Get(ctx, want.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = api.Create(ctx, want, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	cur.Labels, cur.Ports, cur.Endpoints = want.Labels, want.Ports, want.Endpoints
	_, err = api.Update(ctx, cur, metav1.UpdateOptions{})
	return err
}

// PodReady reports the Pod's Ready condition.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Sync refreshes the EndpointSlice of one Service from its Pods.
func Sync(ctx context.Context, cs kubernetes.Interface, namespace, service string) error {
	return SyncWithZones(ctx, cs, namespace, service, nil)
}

// SyncWithZones is Sync with the nodes' zones known (nil: read them when a
// pod runs on a node).
func SyncWithZones(ctx context.Context, cs kubernetes.Interface, namespace, service string, zones map[string]string) error {
	svc, err := cs.CoreV1().Services(namespace).Get(ctx, service, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if len(svc.Spec.Selector) == 0 {
		return nil
	}
	pods, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(svc.Spec.Selector).String()})
	if err != nil {
		return err
	}
	zones, err = zonesFor(ctx, cs, pods.Items, zones)
	if err != nil {
		return err
	}
	return syncService(ctx, cs, svc, pods.Items, zones)
}

// EastWestGateway creates istio's east-west gateway for a network the way
// its Helm chart and a cloud load balancer would leave it: the Service
// istio-eastwestgateway in namespace (labelled topology.istio.io/network,
// mTLS port 15443), its load-balancer ingress at lbIP, one gateway Pod at
// pod.IP (pod is EastWestGatewayPod's, or one the caller changed), and the
// Service's EndpointSlice.
func EastWestGateway(ctx context.Context, cs kubernetes.Interface, namespace, network, lbIP string, pod Pod) error {
	const name = "istio-eastwestgateway"
	lbls := map[string]string{"istio": "eastwestgateway", "app": name, model.LabelNetwork: network}
	port := func(n string, p int32) corev1.ServicePort {
		return corev1.ServicePort{Name: n, Port: p, TargetPort: intstr.FromInt32(p), Protocol: corev1.ProtocolTCP}
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: lbls},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"istio": "eastwestgateway"},
			Ports:    []corev1.ServicePort{port("status-port", 15021), port("tls", 15443), port("tls-istiod", 15012), port("tls-webhook", 15017)},
		},
	}
	if _, err := cs.CoreV1().Services(namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("east-west gateway service: %w", err)
	}
	if err := SetIngress(ctx, cs, namespace, name, []string{lbIP}); err != nil {
		return fmt.Errorf("east-west gateway status: %w", err)
	}
	if err := CreatePod(ctx, cs, pod); err != nil {
		return err
	}
	return Sync(ctx, cs, namespace, name)
}

// EastWestGatewayPodName is the name of the east-west gateway's pod.
const EastWestGatewayPodName = "istio-eastwestgateway-7b9c5d6f8-k2x4p"

// EastWestGatewayPod is an east-west gateway pod as an Istio install
// leaves it (istio's gen-eastwest-gateway.sh / the gateway chart with the
// gateway injection template): labels istio=eastwestgateway and the
// network, an istio-proxy container started as "proxy router" with the
// env the injector writes (ISTIO_META_NETWORK from the pod's label,
// ISTIO_META_CLUSTER_ID) and the east-west settings
// (ISTIO_META_ROUTER_MODE=sni-dnat, ISTIO_META_REQUESTED_NETWORK_VIEW).
// It is data only: no process runs behind its IP.
func EastWestGatewayPod(namespace, network, podIP, clusterID string) Pod {
	const name = "istio-eastwestgateway"
	return Pod{Namespace: namespace, Name: EastWestGatewayPodName, IP: podIP,
		Labels: map[string]string{"istio": "eastwestgateway", "app": name, model.LabelNetwork: network,
			model.LabelCanonicalName: name, model.LabelCanonicalRevision: "latest"},
		Container: "istio-proxy", Image: "docker.io/istio/proxyv2:1.31.0",
		Args: []string{"proxy", "router", "--domain", namespace + "." + model.DNSDomain, "--proxyLogLevel=warning"},
		Env: map[string]string{"ISTIO_META_ROUTER_MODE": "sni-dnat", "ISTIO_META_REQUESTED_NETWORK_VIEW": network,
			"ISTIO_META_NETWORK": network, "ISTIO_META_CLUSTER_ID": clusterID, "ISTIO_META_WORKLOAD_NAME": name}}
}
