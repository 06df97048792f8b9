package lab

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/meshscope/meshscope/internal/kubesim"
)

// The east-west gateway's pods as an Istio install leaves them, and the
// changes the second-hop scenarios make to them (data only: no Envoy runs
// behind their IPs).

// GatewayPod is the name of the east-west gateway pod in each cluster.
const GatewayPod = kubesim.EastWestGatewayPodName

// GatewayPodSpec is the east-west gateway pod of cluster as the fixture
// creates it.
func (l *Lab) GatewayPodSpec(cluster string) (PodSpec, error) {
	c, err := l.cluster(cluster)
	if err != nil {
		return PodSpec{}, err
	}
	return kubesim.EastWestGatewayPod(SystemNamespace, c.Network, c.PodPrefix+".2", c.Name), nil
}

// ReplaceGatewayPod recreates the east-west gateway pod of cluster as edit
// makes it from the fixture's (a pod injected without the network label,
// with another REQUESTED_NETWORK_VIEW): its env is what the injector wrote
// at creation, so a change means a new pod, as in a real cluster. restore
// puts the fixture's pod back.
func (l *Lab) ReplaceGatewayPod(ctx context.Context, cluster string, edit func(*PodSpec)) (restore func(context.Context) error, err error) {
	spec, err := l.GatewayPodSpec(cluster)
	if err != nil {
		return nil, err
	}
	orig := spec
	spec.Labels, spec.Env = copyMap(spec.Labels), copyMap(spec.Env)
	edit(&spec)
	if err := l.recreatePod(ctx, cluster, spec); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error { return l.recreatePod(ctx, cluster, orig) }, nil
}

func (l *Lab) recreatePod(ctx context.Context, cluster string, p PodSpec) error {
	c, err := l.cluster(cluster)
	if err != nil {
		return err
	}
	err = c.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return l.AddPod(ctx, cluster, p)
}

// SetGatewayTargetPort points the east-west gateway Service's port 15443
// (named tls) of cluster at targetPort, and refreshes its EndpointSlice.
func (l *Lab) SetGatewayTargetPort(ctx context.Context, cluster string, targetPort int32) error {
	c, err := l.cluster(cluster)
	if err != nil {
		return err
	}
	svc, err := c.client.CoreV1().Services(SystemNamespace).Get(ctx, GatewayService, metav1.GetOptions{})
	if err != nil {
		return err
	}
	found := false
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == 15443 {
			svc.Spec.Ports[i].TargetPort, found = intstr.FromInt32(targetPort), true
		}
	}
	if !found {
		return fmt.Errorf("%s: service %s has no port 15443", cluster, GatewayService)
	}
	if _, err := c.client.CoreV1().Services(SystemNamespace).Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		return err
	}
	return kubesim.Sync(ctx, c.client, SystemNamespace, GatewayService)
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
