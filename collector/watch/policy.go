package watch

import (
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/meshscope/meshscope/model"
)

// Istio config that decides whether an endpoint is reached with mTLS, and so
// whether it can cross networks through a gateway. istiod reads Istio
// config only from its own config cluster, so meshscope watches it in the
// context clusters (the primaries), not in clusters found through secrets.

var (
	gvrDestinationRules    = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "destinationrules"}
	gvrPeerAuthentications = schema.GroupVersionResource{Group: "security.istio.io", Version: "v1", Resource: "peerauthentications"}
)

const (
	resDestinationRules    = "destinationrules"
	resPeerAuthentications = "peerauthentications"
)

// AddIstioConfigInformers watches, through the dynamic client, the Istio
// config an istiod reads from its config cluster: DestinationRules,
// PeerAuthentications, Sidecars, VirtualServices (the services they import
// into a Sidecar scope), ServiceEntries, Gateways (the servers of gateway
// proxies: the east-west gateway's AUTO_PASSTHROUGH) and WorkloadEntries (optional: a
// cluster without Istio's CRDs, or without permission, only gets a warning).
func (w *Watcher) AddIstioConfigInformers(dyn dynamic.Interface) {
	w.destinationRules = w.addIstioInformer(dyn, resDestinationRules, gvrDestinationRules, "DestinationRule")
	w.peerAuthentications = w.addIstioInformer(dyn, resPeerAuthentications, gvrPeerAuthentications, "PeerAuthentication")
	w.sidecars = w.addIstioInformer(dyn, resSidecars, gvrSidecars, "Sidecar")
	w.virtualServices = w.addIstioInformer(dyn, resVirtualServices, gvrVirtualServices, "VirtualService")
	w.serviceEntriesInf = w.addIstioInformer(dyn, resServiceEntries, gvrServiceEntries, "ServiceEntry")
	w.istioGateways = w.addIstioInformer(dyn, resIstioGateways, gvrIstioGateways, "Gateway")
	w.AddWorkloadEntryInformer(dyn)
}

// AddWorkloadEntryInformer watches WorkloadEntries: in a config cluster
// for its ServiceEntries, in the other clusters because istiod reads
// theirs too (PILOT_ENABLE_CROSS_CLUSTER_WORKLOAD_ENTRY) and offers them to
// the config cluster's ServiceEntries.
func (w *Watcher) AddWorkloadEntryInformer(dyn dynamic.Interface) {
	w.workloadEntriesInf = w.addIstioInformer(dyn, resWorkloadEntries, gvrWorkloadEntries, "WorkloadEntry")
}

// addIstioInformer watches every object of one Istio config resource (of
// that kind) in every namespace.
func (w *Watcher) addIstioInformer(dyn dynamic.Interface, name string, gvr schema.GroupVersionResource, kind string) *informerHealth {
	return addInformer[*unstructured.UnstructuredList](w, name, false, &unstructured.Unstructured{}, transformIstioConfig,
		scope{kind: schema.GroupKind{Group: gvr.Group, Kind: kind}}, dyn.Resource(gvr).Namespace)
}

// transformIstioConfig keeps the spec, the object's identity, creation
// time (the oldest of two rules wins in istiod) and labels, and for
// WorkloadEntries the health-check annotation and status conditions.
func transformIstioConfig(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	meta := map[string]any{"name": u.GetName(), "namespace": u.GetNamespace(), "resourceVersion": u.GetResourceVersion(), "uid": string(u.GetUID())}
	if ts, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "creationTimestamp"); ok {
		meta["creationTimestamp"] = ts
	}
	if l, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "labels"); ok {
		meta["labels"] = l
	}
	out := &unstructured.Unstructured{Object: map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(), "metadata": meta}}
	if spec, ok := u.Object["spec"]; ok {
		out.Object["spec"] = spec
	}
	if u.GetKind() == "WorkloadEntry" {
		if v, ok := u.GetAnnotations()[model.AnnotationHealthChecks]; ok {
			meta["annotations"] = map[string]any{model.AnnotationHealthChecks: v}
		}
		if c, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "conditions"); ok {
			out.Object["status"] = map[string]any{"conditions": c}
		}
	}
	return out, nil
}

// Policies parses the policy caches of one cluster (ID cluster), as the
// istiod predicted for reads them: the cluster's share of the snapshot's
// Istio config.
func (w *Watcher) Policies(cluster string) ([]model.DestinationRule, []model.PeerAuthentication, []model.Sidecar, []model.VirtualService) {
	return w.PoliciesIn(cluster, w.ConfigRevision())
}

// PoliciesIn parses the policies the istiod of revision rev reads (another
// revision of a primary: a control plane of its own, model.RevisionPlane).
func (w *Watcher) PoliciesIn(cluster, rev string) ([]model.DestinationRule, []model.PeerAuthentication, []model.Sidecar, []model.VirtualService) {
	return readIstioConfig(w.destinationRules, cluster, rev, parseDestinationRule),
		readIstioConfig(w.peerAuthentications, cluster, rev, parsePeerAuthentication),
		readIstioConfig(w.sidecars, cluster, rev, parseSidecar),
		readIstioConfig(w.virtualServices, cluster, rev, parseVirtualService)
}

// ConfigRevision is the REVISION of the istiod meshscope predicts for in
// this cluster (model.Cluster.EffectiveRevision of --revision: the one
// asked where it runs, else the default revision, else the only one; Helm
// sets REVISION=default for a revision-less istiod).
func (w *Watcher) ConfigRevision() string {
	requested := ""
	if w.opts != nil {
		requested = w.opts.Revision
	}
	c := model.Cluster{RevisionTags: w.revisionTags()}
	if w.istiods != nil {
		ns := ""
		if w.opts != nil {
			ns = w.opts.SystemNamespace
		}
		for p := range objectsOf[*cachedIstiod](w.istiods.store()) {
			if p.pod.Name != "" && (ns == "" || p.namespace == ns) {
				c.Istiods = append(c.Istiods, p.pod)
			}
		}
	}
	return c.EffectiveRevision(requested)
}

// readIstioConfig parses every object of one Istio config cache (none
// when it is not watched) that the istiod of revision rev reads
// (model.ConfigInRevision), sorted by namespace and name.
func readIstioConfig[T any](h *informerHealth, cluster, rev string, parse func(string, *unstructured.Unstructured) T) []T {
	if h == nil {
		return nil
	}
	us := slices.DeleteFunc(listOf[*unstructured.Unstructured](h.store()), func(u *unstructured.Unstructured) bool {
		return !model.ConfigInRevision(u.GetLabels(), rev)
	})
	sort.Slice(us, func(i, j int) bool {
		if us[i].GetNamespace() != us[j].GetNamespace() {
			return us[i].GetNamespace() < us[j].GetNamespace()
		}
		return us[i].GetName() < us[j].GetName()
	})
	out := make([]T, 0, len(us))
	for _, u := range us {
		out = append(out, parse(cluster, u))
	}
	return out
}

func parseDestinationRule(cluster string, u *unstructured.Unstructured) model.DestinationRule {
	d := model.DestinationRule{Cluster: cluster, Namespace: u.GetNamespace(), Name: u.GetName(), Created: u.GetCreationTimestamp().Time}
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	d.Host, _ = spec["host"].(string)
	d.ExportTo = stringList(spec["exportTo"])
	if sel, ok := spec["workloadSelector"].(map[string]any); ok {
		d.WorkloadSelector = stringMap(sel["matchLabels"])
	}
	tp, ok := spec["trafficPolicy"].(map[string]any)
	d.TrafficPolicy = ok
	d.TLSMode, d.PortTLS = trafficPolicyTLS(tp)
	d.LB = trafficPolicyLB(tp)
	if subsets, ok := spec["subsets"].([]any); ok {
		for _, e := range subsets {
			m, _ := e.(map[string]any)
			ss := model.Subset{Labels: stringMap(m["labels"])}
			ss.Name, _ = m["name"].(string)
			stp, _ := m["trafficPolicy"].(map[string]any)
			ss.TLSMode, ss.PortTLS = trafficPolicyTLS(stp)
			ss.LB = trafficPolicyLB(stp)
			d.Subsets = append(d.Subsets, ss)
		}
	}
	parseTrafficPolicy(&d, u)
	return d
}

// trafficPolicyTLS reads the TLS modes of a traffic policy: its own and
// its port-level ones. A tls block without a mode is DISABLE (the enum's
// zero value), as istiod's trafficPolicyTLSModeForPort reads it.
func trafficPolicyTLS(tp map[string]any) (string, map[uint32]string) {
	mode := func(m map[string]any) (string, bool) {
		tls, ok := m["tls"].(map[string]any)
		if !ok {
			return "", false
		}
		if s, _ := tls["mode"].(string); s != "" {
			return s, true
		}
		return "DISABLE", true
	}
	top, _ := mode(tp)
	var ports map[uint32]string
	eachPortLevel(tp, func(num uint32, m map[string]any) {
		if md, ok := mode(m); ok {
			if ports == nil {
				ports = map[uint32]string{}
			}
			ports[num] = md
		}
	})
	return top, ports
}

func parsePeerAuthentication(cluster string, u *unstructured.Unstructured) model.PeerAuthentication {
	p := model.PeerAuthentication{Cluster: cluster, Namespace: u.GetNamespace(), Name: u.GetName(), Created: u.GetCreationTimestamp().Time}
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
