package model

import "strings"

// LabelValue reads one label of an endpoint as istiod's selectors see it
// (workloadSelector, PeerAuthentication selector, DestinationRule subset):
// the workload's labels augmented as istiod's AugmentLabels does with the
// region, zone and subzone of its locality, its cluster, its node
// (kubernetes.io/hostname), and its network when it has no network label.
func LabelValue(ep *Endpoint, key string) (string, bool) {
	var aug string
	switch key {
	case LabelRegion:
		aug, _, _ = splitLocality(ep.Locality)
	case LabelZone:
		_, aug, _ = splitLocality(ep.Locality)
	case LabelSubzone:
		_, _, aug = splitLocality(ep.Locality)
	case labelCluster:
		aug = ep.Cluster
	case LabelHostname:
		aug = ep.Node
	case LabelNetwork:
		if v := ep.Labels[LabelNetwork]; v != "" {
			return v, true
		}
		aug = ep.Network
	}
	if aug != "" {
		return aug, true
	}
	v, ok := ep.Labels[key]
	return v, ok
}

// SelectsEndpoint reports whether every label of sel is on the endpoint
// (labels.Instance.SubsetOf on the augmented labels); an empty selector
// selects everything.
func SelectsEndpoint(sel map[string]string, ep *Endpoint) bool {
	for k, want := range sel {
		if v, ok := LabelValue(ep, k); !ok || v != want {
			return false
		}
	}
	return true
}

func splitLocality(l string) (region, zone, subzone string) {
	region, rest, _ := strings.Cut(l, "/")
	zone, subzone, _ = strings.Cut(rest, "/")
	return region, zone, subzone
}
