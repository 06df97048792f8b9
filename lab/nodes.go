package lab

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Topology labels a cloud provider puts on its Nodes.
const (
	RegionLabel = corev1.LabelTopologyRegion // topology.kubernetes.io/region
	ZoneLabel   = corev1.LabelTopologyZone   // topology.kubernetes.io/zone
	// LocalityLabel on a Pod overrides its node's locality for istiod
	// ("region.zone.subzone").
	LocalityLabel = "topology.istio.io/locality"
)

// AddNode registers a Node in cluster with labels (e.g. RegionLabel and
// ZoneLabel), Ready, as a kubelet in that zone would; Pods placed on it
// (PodSpec.Node) get its locality. No kubelet runs behind it.
func (l *Lab) AddNode(ctx context.Context, cluster, name string, labels map[string]string) error {
	c, err := l.cluster(cluster)
	if err != nil {
		return err
	}
	created, err := c.client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("node %s: %w", name, err)
	}
	created.Status = corev1.NodeStatus{
		Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}},
	}
	if _, err := c.client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("node %s status: %w", name, err)
	}
	return nil
}

// RemoveNode deletes a Node (its Pods stay: remove them first).
func (l *Lab) RemoveNode(ctx context.Context, cluster, name string) error {
	c, err := l.cluster(cluster)
	if err != nil {
		return err
	}
	err = c.client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}
