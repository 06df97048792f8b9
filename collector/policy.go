package collector

import (
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Istio config that decides whether an endpoint is reached with mTLS, and so
// whether it can cross networks through a gateway. istiod reads Istio
// config only from its own config cluster, so meshscope watches it in the
// context clusters (the primaries), not in clusters found through secrets.

// DestinationRule is the TLS part of an Istio DestinationRule.
type DestinationRule struct {
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Host      string `json:"host"`
	// TLSMode is trafficPolicy.tls.mode (DISABLE, SIMPLE, MUTUAL,
	// ISTIO_MUTUAL), "" when unset; PortTLS the portLevelSettings' modes.
	TLSMode string            `json:"tlsMode,omitempty"`
	PortTLS map[uint32]string `json:"portTls,omitempty"`
	// LocalityLb is trafficPolicy.loadBalancer.localityLbSetting (nil when
	// unset); OutlierDetection says whether the rule sets outlierDetection
	// (at the top or on any port): istiod turns locality failover on only
	// with outlier detection (policy_traffic.go).
	LocalityLb       *LocalityLbSetting `json:"localityLbSetting,omitempty"`
	OutlierDetection bool               `json:"outlierDetection,omitempty"`
	// Fingerprint identifies the whole spec, to compare one rule as two
	// control planes read it.
	Fingerprint string `json:"fingerprint,omitempty"`
}

// PeerAuthentication is the mTLS part of an Istio PeerAuthentication.
type PeerAuthentication struct {
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Selector is spec.selector.matchLabels (empty: the whole namespace,
	// or the mesh when in the system namespace).
	Selector map[string]string `json:"selector,omitempty"`
	// Mode is spec.mtls.mode (UNSET, DISABLE, PERMISSIVE, STRICT), "" when
	// unset; PortModes are portLevelMtls.
	Mode      string            `json:"mode,omitempty"`
	PortModes map[uint32]string `json:"portModes,omitempty"`
	// Fingerprint identifies the whole spec (see DestinationRule).
	Fingerprint string `json:"fingerprint,omitempty"`
}

var (
	gvrDestinationRules    = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "destinationrules"}
	gvrPeerAuthentications = schema.GroupVersionResource{Group: "security.istio.io", Version: "v1", Resource: "peerauthentications"}
)

const (
	resDestinationRules    = "destinationrules"
	resPeerAuthentications = "peerauthentications"
)

// addPolicyInformers watches DestinationRules and PeerAuthentications
// through the dynamic client (optional: a cluster without Istio's CRDs, or
// without permission, only gets a warning).
func (w *watcher) addPolicyInformers(dyn dynamic.Interface) {
	for _, r := range []struct {
		name string
		gvr  schema.GroupVersionResource
		into **informerHealth
	}{
		{resDestinationRules, gvrDestinationRules, &w.destinationRules},
		{resPeerAuthentications, gvrPeerAuthentications, &w.peerAuthentications},
	} {
		*r.into = w.add(r.name, false, &unstructured.Unstructured{}, transformPolicy,
			listWatch[*unstructured.UnstructuredList](dyn.Resource(r.gvr).Namespace(metav1.NamespaceAll), "", ""))
	}
}

// transformPolicy keeps only spec and the object's identity.
func transformPolicy(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	out := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(),
		"metadata": map[string]any{"name": u.GetName(), "namespace": u.GetNamespace(), "resourceVersion": u.GetResourceVersion(), "uid": string(u.GetUID())},
	}}
	if spec, ok := u.Object["spec"]; ok {
		out.Object["spec"] = spec
	}
	return out, nil
}

// policies reads the policy caches of one cluster.
func (w *watcher) policies(cluster string) ([]DestinationRule, []PeerAuthentication) {
	var drs []DestinationRule
	var pas []PeerAuthentication
	if w.destinationRules != nil {
		for _, o := range w.destinationRules.inf.GetStore().List() {
			if u, ok := o.(*unstructured.Unstructured); ok {
				drs = append(drs, parseDestinationRule(cluster, u))
			}
		}
	}
	if w.peerAuthentications != nil {
		for _, o := range w.peerAuthentications.inf.GetStore().List() {
			if u, ok := o.(*unstructured.Unstructured); ok {
				pas = append(pas, parsePeerAuthentication(cluster, u))
			}
		}
	}
	sort.Slice(drs, func(i, j int) bool { return drs[i].Namespace+"/"+drs[i].Name < drs[j].Namespace+"/"+drs[j].Name })
	sort.Slice(pas, func(i, j int) bool { return pas[i].Namespace+"/"+pas[i].Name < pas[j].Namespace+"/"+pas[j].Name })
	return drs, pas
}

func parseDestinationRule(cluster string, u *unstructured.Unstructured) DestinationRule {
	d := DestinationRule{Cluster: cluster, Namespace: u.GetNamespace(), Name: u.GetName()}
	d.Host, _, _ = unstructured.NestedString(u.Object, "spec", "host")
	d.TLSMode, _, _ = unstructured.NestedString(u.Object, "spec", "trafficPolicy", "tls", "mode")
	pls, _, _ := unstructured.NestedSlice(u.Object, "spec", "trafficPolicy", "portLevelSettings")
	for _, p := range pls {
		m, ok := p.(map[string]any)
		if !ok {
			continue
		}
		num, found, _ := unstructured.NestedInt64(m, "port", "number")
		mode, hasMode, _ := unstructured.NestedString(m, "tls", "mode")
		if found && hasMode {
			if d.PortTLS == nil {
				d.PortTLS = map[uint32]string{}
			}
			d.PortTLS[uint32(num)] = mode
		}
	}
	parseTrafficPolicy(&d, u)
	return d
}

func parsePeerAuthentication(cluster string, u *unstructured.Unstructured) PeerAuthentication {
	p := PeerAuthentication{Cluster: cluster, Namespace: u.GetNamespace(), Name: u.GetName()}
	p.Selector, _, _ = unstructured.NestedStringMap(u.Object, "spec", "selector", "matchLabels")
	p.Mode, _, _ = unstructured.NestedString(u.Object, "spec", "mtls", "mode")
	ports, _, _ := unstructured.NestedMap(u.Object, "spec", "portLevelMtls")
	for k, v := range ports {
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		var n uint32
		for _, c := range k {
			if c < '0' || c > '9' {
				n = 0
				break
			}
			n = n*10 + uint32(c-'0')
		}
		if mode, ok := m["mode"].(string); ok && n > 0 {
			if p.PortModes == nil {
				p.PortModes = map[uint32]string{}
			}
			p.PortModes[n] = mode
		}
	}
	p.Fingerprint = specFingerprint(u)
	return p
}
