package collector

import (
	"github.com/meshscope/meshscope/model"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// podLocality is a pod's locality as istiod derives it (getPodLocality):
// its own locality label, else its node's topology labels. The
// EndpointSlice's zone and nodeName play no part: istiod reads the Pod's
// spec.nodeName.
func (v cacheView) podLocality(labels map[string]string, node string) string {
	if l := model.PodLabelLocality(labels); l != "" {
		return l
	}
	if node == "" || v.node == nil {
		return ""
	}
	if n := v.node(node); n != nil {
		return n.locality
	}
	return ""
}

// cachedNode is all the Node cache keeps of a Node: its identity, its
// labels (a gateway's traffic.istio.io/nodeSelector may name any of them),
// its first ExternalIP (NodePort gateways) and the locality its labels
// give. A stripped corev1.Node still holds an ObjectMeta, a NodeSpec and a
// NodeStatus; this is a few strings.
type cachedNode struct {
	Name, resourceVersion string
	Labels                map[string]string
	externalIP            string
	locality              string
}

func (n *cachedNode) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// GetObjectMeta gives the informer's store its key and resource version;
// the ObjectMeta is built on demand, not kept.
func (n *cachedNode) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: n.Name, ResourceVersion: n.resourceVersion, Labels: n.Labels}
}

func (n *cachedNode) DeepCopyObject() runtime.Object {
	c := *n
	c.Labels = make(map[string]string, len(n.Labels))
	for k, v := range n.Labels {
		c.Labels[k] = v
	}
	return &c
}

func transformNode(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	c := &cachedNode{Name: n.Name, resourceVersion: n.ResourceVersion, Labels: n.Labels, locality: model.NodeLocality(n.Labels)}
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeExternalIP && a.Address != "" {
			c.externalIP = a.Address
			break
		}
	}
	return c, nil
}
