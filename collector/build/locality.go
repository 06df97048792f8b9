package build

import (
	"github.com/meshscope/meshscope/model"
)

// podLocality is a pod's locality as istiod derives it (getPodLocality):
// its own locality label, else its node's topology labels. The
// EndpointSlice's zone and nodeName play no part: istiod reads the Pod's
// spec.nodeName.
func (v Caches) podLocality(labels map[string]string, node string) string {
	if l := model.PodLabelLocality(labels); l != "" {
		return l
	}
	if node == "" || v.Node == nil {
		return ""
	}
	if n := v.Node(node); n != nil {
		return n.Locality
	}
	return ""
}
