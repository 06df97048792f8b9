package collector

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Labels istiod reads to place a pod in a locality.
const (
	// LabelLocality on a pod names its locality outright
	// ("region.zone.subzone": labels cannot hold slashes).
	LabelLocality = "topology.istio.io/locality"
	// LabelLocalityLegacy is the older pod label with the same meaning.
	LabelLocalityLegacy = "istio-locality"
	// LabelSubzone on a node is the third part of its locality.
	LabelSubzone = "topology.istio.io/subzone"

	// LabelRegion and LabelZone are Kubernetes' topology labels (nodes';
	// istiod adds them to workloads' labels for selectors).
	LabelRegion     = "topology.kubernetes.io/region"
	LabelZone       = "topology.kubernetes.io/zone"
	labelRegionBeta = "failure-domain.beta.kubernetes.io/region"
	labelZoneBeta   = "failure-domain.beta.kubernetes.io/zone"
)

// podLabelLocality is the locality a pod names in its own labels, as istiod
// reads it (pkg/model GetLocalityLabel, then SanitizeLocalityLabel):
// topology.istio.io/locality wins over istio-locality even when empty, and
// a value without a slash has its dots turned into slashes. "" means the
// node decides.
func podLabelLocality(labels map[string]string) string {
	v, ok := labels[LabelLocality]
	if !ok {
		v = labels[LabelLocalityLegacy]
	}
	if v == "" || strings.Contains(v, "/") {
		return v
	}
	return strings.ReplaceAll(v, ".", "/")
}

// podLocality is a pod's locality as istiod derives it (getPodLocality):
// its own locality label, else its node's topology labels. The
// EndpointSlice's zone and nodeName play no part: istiod reads the Pod's
// spec.nodeName.
func (v cacheView) podLocality(labels map[string]string, node string) string {
	if l := podLabelLocality(labels); l != "" {
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

// nodeLocality is the locality istiod gives the pods of a node with these
// labels (getPodLocality in pilot/pkg/serviceregistry/kube/controller): the
// GA topology labels, else the deprecated failure-domain ones, and the
// subzone label, always joined as "region/zone/subzone" — so a node
// without a subzone gives "region/zone/", with the trailing slash. istiod
// groups endpoints by this exact string, and a pod labelled "region.zone"
// ("region/zone") lands in another group than its neighbour on a node.
func nodeLocality(labels map[string]string) string {
	region := labelOr(labels, LabelRegion, labelRegionBeta)
	zone := labelOr(labels, LabelZone, labelZoneBeta)
	subzone := labels[LabelSubzone]
	if region == "" && zone == "" && subzone == "" {
		return ""
	}
	return region + "/" + zone + "/" + subzone
}

func labelOr(labels map[string]string, key, fallback string) string {
	if v := labels[key]; v != "" {
		return v
	}
	return labels[fallback]
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
	c := &cachedNode{Name: n.Name, resourceVersion: n.ResourceVersion, Labels: n.Labels, locality: nodeLocality(n.Labels)}
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeExternalIP && a.Address != "" {
			c.externalIP = a.Address
			break
		}
	}
	return c, nil
}
