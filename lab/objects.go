package lab

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/meshscope/meshscope/internal/kubesim"
)

// The lab runs no controller-manager, scheduler or kubelet, so it does their
// work through kubesim: Pod status, EndpointSlices, load-balancer status.

// PodSpec is a lab Pod: Running and Ready at IP unless NotReady is set.
type PodSpec = kubesim.Pod

// AddPod creates a Running Pod in cluster and refreshes the EndpointSlices
// of the Services in its namespace.
func (l *Lab) AddPod(ctx context.Context, cluster string, p PodSpec) error {
	c, err := l.cluster(cluster)
	if err != nil {
		return err
	}
	if err := kubesim.CreatePod(ctx, c.client, p); err != nil {
		return err
	}
	return kubesim.SyncNamespace(ctx, c.client, p.Namespace)
}

// AddPods creates several Pods, then writes the EndpointSlices once, as a
// Deployment scaled up by several replicas at once would: istiod sees one
// change, not one per pod.
func (l *Lab) AddPods(ctx context.Context, cluster string, pods ...PodSpec) error {
	c, err := l.cluster(cluster)
	if err != nil {
		return err
	}
	nss := map[string]bool{}
	for _, p := range pods {
		if err := kubesim.CreatePod(ctx, c.client, p); err != nil {
			return err
		}
		nss[p.Namespace] = true
	}
	for ns := range nss {
		if err := kubesim.SyncNamespace(ctx, c.client, ns); err != nil {
			return err
		}
	}
	return nil
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
	return kubesim.SyncNamespace(ctx, c.client, namespace)
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
	pod.Status = kubesim.PodStatus(pod.Status.PodIP, ready)
	if _, err := c.client.CoreV1().Pods(namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		return err
	}
	return kubesim.SyncNamespace(ctx, c.client, namespace)
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
	return l.editMeta(ctx, cluster, kind, namespace, name, func(m *metav1.ObjectMeta) { m.Labels = setKey(m.Labels, key, value) })
}

// SetAnnotation sets (value non-nil) or removes (value nil) one annotation
// on a Pod, Service or Namespace, like SetLabel.
func (l *Lab) SetAnnotation(ctx context.Context, cluster string, kind Kind, namespace, name, key string, value *string) error {
	return l.editMeta(ctx, cluster, kind, namespace, name, func(m *metav1.ObjectMeta) { m.Annotations = setKey(m.Annotations, key, value) })
}

func setKey(m map[string]string, key string, value *string) map[string]string {
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

// editMeta applies edit to the metadata of one object and writes it back.
func (l *Lab) editMeta(ctx context.Context, cluster string, kind Kind, namespace, name string, edit func(*metav1.ObjectMeta)) error {
	c, err := l.cluster(cluster)
	if err != nil {
		return err
	}
	switch kind {
	case KindPod:
		o, err := c.client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		edit(&o.ObjectMeta)
		if _, err := c.client.CoreV1().Pods(namespace).Update(ctx, o, metav1.UpdateOptions{}); err != nil {
			return err
		}
	case KindService:
		o, err := c.client.CoreV1().Services(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		edit(&o.ObjectMeta)
		if _, err := c.client.CoreV1().Services(namespace).Update(ctx, o, metav1.UpdateOptions{}); err != nil {
			return err
		}
	case KindNamespace:
		o, err := c.client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		edit(&o.ObjectMeta)
		_, err = c.client.CoreV1().Namespaces().Update(ctx, o, metav1.UpdateOptions{})
		return err
	default:
		return fmt.Errorf("lab: unknown kind %q", kind)
	}
	return kubesim.SyncNamespace(ctx, c.client, namespace)
}

// SetGatewayIngress replaces the load-balancer ingress IPs of a Service
// (none: the gateway loses its address).
func (l *Lab) SetGatewayIngress(ctx context.Context, cluster, namespace, name string, ips ...string) error {
	c, err := l.cluster(cluster)
	if err != nil {
		return err
	}
	return kubesim.SetIngress(ctx, c.client, namespace, name, ips)
}

// SetGatewayHostname gives a Service's load balancer a DNS name instead
// of IPs (an AWS NLB): istiod resolves it (SetDNS says what to).
func (l *Lab) SetGatewayHostname(ctx context.Context, cluster, namespace, name, hostname string) error {
	c, err := l.cluster(cluster)
	if err != nil {
		return err
	}
	return kubesim.SetIngressHostnames(ctx, c.client, namespace, name, []string{hostname})
}

func (l *Lab) cluster(name string) (*Cluster, error) {
	c := l.Cluster(name)
	if c == nil {
		return nil, fmt.Errorf("no lab cluster %q", name)
	}
	return c, nil
}

// DeleteService deletes a Service and its EndpointSlices (what the
// EndpointSlice controller would clean up), and returns a function that
// creates it again as it was, with its slices.
func (l *Lab) DeleteService(ctx context.Context, cluster, namespace, name string) (restore func(context.Context) error, err error) {
	c, err := l.cluster(cluster)
	if err != nil {
		return nil, err
	}
	api := c.client.CoreV1().Services(namespace)
	old, err := api.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if err := api.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return nil, err
	}
	if err := c.client.DiscoveryV1().EndpointSlices(namespace).DeleteCollection(ctx, metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + name}); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		svc := old.DeepCopy()
		svc.ResourceVersion, svc.UID, svc.CreationTimestamp = "", "", metav1.Time{}
		if svc.Spec.ClusterIP != "None" {
			svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "", nil
		}
		if _, err := api.Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		return kubesim.SyncNamespace(ctx, c.client, namespace)
	}, nil
}
