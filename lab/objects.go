package lab

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
)

// The lab runs no controller-manager, scheduler or kubelet, so the lab does
// their work: it writes Pod status, keeps one EndpointSlice per Service in
// step with the Pods its selector matches, and writes the east-west gateway's
// load-balancer status.

// PodSpec is a lab Pod: Running and Ready at IP unless NotReady is set.
type PodSpec struct {
	Namespace string
	Name      string
	IP        string
	Labels    map[string]string
	NotReady  bool
}

// AddPod creates a Running Pod in cluster and refreshes the EndpointSlices
// of the Services in its namespace.
func (l *Lab) AddPod(ctx context.Context, cluster string, p PodSpec) error {
	c, err := l.cluster(cluster)
	if err != nil {
		return err
	}
	if err := createPod(ctx, c, p); err != nil {
		return err
	}
	return syncNamespaceSlices(ctx, c, p.Namespace)
}

// RemovePod deletes a Pod at once (grace period 0: no kubelet will confirm a
// graceful deletion) and refreshes the EndpointSlices of its namespace.
func (l *Lab) RemovePod(ctx context.Context, cluster, namespace, name string) error {
	c, err := l.cluster(cluster)
	if err != nil {
		return err
	}
	err = c.client.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return syncNamespaceSlices(ctx, c, namespace)
}

// SetPodReady flips a Pod's Ready condition, as a failing readiness probe would.
func (l *Lab) SetPodReady(ctx context.Context, cluster, namespace, name string, ready bool) error {
	c, err := l.cluster(cluster)
	if err != nil {
		return err
	}
	pod, err := c.client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	pod.Status = podStatus(pod.Status.PodIP, ready)
	if _, err := c.client.CoreV1().Pods(namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		return err
	}
	return syncNamespaceSlices(ctx, c, namespace)
}

// Kind names what SetLabel changes.
type Kind string

const (
	KindPod       Kind = "pod"
	KindService   Kind = "service"
	KindNamespace Kind = "namespace"
)

// SetLabel sets (value non-nil) or removes (value nil) one label on a Pod,
// Service or Namespace (namespace ignored for KindNamespace). Pod and
// Service changes refresh the namespace's EndpointSlices.
func (l *Lab) SetLabel(ctx context.Context, cluster string, kind Kind, namespace, name, key string, value *string) error {
	c, err := l.cluster(cluster)
	if err != nil {
		return err
	}
	edit := func(m map[string]string) map[string]string {
		if m == nil {
			m = map[string]string{}
		}
		if value == nil {
			delete(m, key)
		} else {
			m[key] = *value
		}
		return m
	}
	switch kind {
	case KindPod:
		o, err := c.client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		o.Labels = edit(o.Labels)
		if _, err := c.client.CoreV1().Pods(namespace).Update(ctx, o, metav1.UpdateOptions{}); err != nil {
			return err
		}
	case KindService:
		o, err := c.client.CoreV1().Services(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		o.Labels = edit(o.Labels)
		if _, err := c.client.CoreV1().Services(namespace).Update(ctx, o, metav1.UpdateOptions{}); err != nil {
			return err
		}
	case KindNamespace:
		o, err := c.client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		o.Labels = edit(o.Labels)
		_, err = c.client.CoreV1().Namespaces().Update(ctx, o, metav1.UpdateOptions{})
		return err
	default:
		return fmt.Errorf("SetLabel: unknown kind %q", kind)
	}
	return syncNamespaceSlices(ctx, c, namespace)
}

// SetGatewayIngress replaces the load-balancer ingress IPs of a Service
// (none: the gateway loses its address).
func (l *Lab) SetGatewayIngress(ctx context.Context, cluster, namespace, name string, ips ...string) error {
	c, err := l.cluster(cluster)
	if err != nil {
		return err
	}
	return setIngress(ctx, c, namespace, name, ips)
}

func (l *Lab) cluster(name string) (*Cluster, error) {
	c := l.Cluster(name)
	if c == nil {
		return nil, fmt.Errorf("no lab cluster %q", name)
	}
	return c, nil
}

func createPod(ctx context.Context, c *Cluster, p PodSpec) error {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: p.Labels},
		Spec: corev1.PodSpec{
			ServiceAccountName: "default",
			Containers:         []corev1.Container{{Name: "app", Image: "lab.invalid/app:1"}},
		},
	}
	created, err := c.client.CoreV1().Pods(p.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("%s: create pod %s/%s: %w", c.Name, p.Namespace, p.Name, err)
	}
	created.Status = podStatus(p.IP, !p.NotReady)
	if _, err := c.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("%s: pod %s/%s status: %w", c.Name, p.Namespace, p.Name, err)
	}
	return nil
}

func podStatus(ip string, ready bool) corev1.PodStatus {
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
			Name: "app", Image: "lab.invalid/app:1", Ready: ready, Started: ptr.To(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		}},
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: cond, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: cond, LastTransitionTime: now},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
	}
}

func setIngress(ctx context.Context, c *Cluster, namespace, name string, ips []string) error {
	svc, err := c.client.CoreV1().Services(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	svc.Status.LoadBalancer.Ingress = nil
	for _, ip := range ips {
		svc.Status.LoadBalancer.Ingress = append(svc.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip})
	}
	_, err = c.client.CoreV1().Services(namespace).UpdateStatus(ctx, svc, metav1.UpdateOptions{})
	return err
}

// syncNamespaceSlices does the EndpointSlice controller's job for every
// Service with a selector in the namespace.
func syncNamespaceSlices(ctx context.Context, c *Cluster, namespace string) error {
	svcs, err := c.client.CoreV1().Services(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	pods, err := c.client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range svcs.Items {
		if err := syncSlice(ctx, c, &svcs.Items[i], pods.Items); err != nil {
			return err
		}
	}
	return nil
}

func syncSlice(ctx context.Context, c *Cluster, svc *corev1.Service, pods []corev1.Pod) error {
	if len(svc.Spec.Selector) == 0 {
		return nil
	}
	sel := labels.SelectorFromSet(svc.Spec.Selector)
	want := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name:      svc.Name + "-lab",
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
		want.Ports = append(want.Ports, discoveryv1.EndpointPort{
			Name:     ptr.To(sp.Name),
			Port:     ptr.To(port),
			Protocol: ptr.To(sp.Protocol),
		})
	}
	var matched []corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil && p.Status.PodIP != "" && sel.Matches(labels.Set(p.Labels)) {
			matched = append(matched, p)
		}
	}
	sort.Slice(matched, func(i, j int) bool { return matched[i].Name < matched[j].Name })
	for _, p := range matched {
		ready := podReady(&p)
		want.Endpoints = append(want.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{p.Status.PodIP},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready), Serving: ptr.To(ready), Terminating: ptr.To(false)},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID},
		})
	}
	api := c.client.DiscoveryV1().EndpointSlices(svc.Namespace)
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

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
