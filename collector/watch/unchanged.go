package watch

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Some objects are rewritten often without changing what meshscope reads:
// istiod renews its leader elections (ConfigMaps istio-leader,
// istio-namespace-controller-election, istio-ip-autoallocate in the system
// namespace) every few seconds, and kubelets refresh node status. Each such
// update would rebuild the cluster's part of the snapshot and publish a new
// one — and every reader (the UI re-derives its whole index per snapshot)
// would redo its work for nothing. An update that leaves the transformed
// object the same in what meshscope reads is not a change: it proves the
// watch alive (lastEventAt) and nothing more.

// unchangedConfigMap: the same kept data and labels (transformConfigMap
// keeps only the keys meshscope reads).
func unchangedConfigMap(old, cur any) bool {
	o, ok1 := old.(*corev1.ConfigMap)
	c, ok2 := cur.(*corev1.ConfigMap)
	return ok1 && ok2 && o.Name == c.Name && maps.Equal(o.Data, c.Data) && maps.Equal(o.Labels, c.Labels)
}

// unchangedNode: the same labels (topology) and addresses.
func unchangedNode(old, cur any) bool {
	o, ok1 := old.(*corev1.Node)
	c, ok2 := cur.(*corev1.Node)
	return ok1 && ok2 && o.Name == c.Name && maps.Equal(o.Labels, c.Labels) && slices.Equal(o.Status.Addresses, c.Status.Addresses)
}

// unchangedNamespace: the same labels (the network label) and phase.
func unchangedNamespace(old, cur any) bool {
	o, ok1 := old.(*corev1.Namespace)
	c, ok2 := cur.(*corev1.Namespace)
	return ok1 && ok2 && o.Name == c.Name && maps.Equal(o.Labels, c.Labels) && o.Status.Phase == c.Status.Phase
}

// unchangedRootCert: the same parsed certificates (or the same error).
func unchangedRootCert(old, cur any) bool {
	o, ok1 := old.(*cachedRootCert)
	c, ok2 := cur.(*cachedRootCert)
	return ok1 && ok2 && o.name == c.name && o.err == c.err && slices.Equal(o.certs, c.certs)
}
