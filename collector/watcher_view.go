package collector

import (
	"github.com/meshscope/meshscope/model"
	corev1 "k8s.io/api/core/v1"
)

func (w *watcher) view(systemNamespace string) cacheView {
	v := cacheView{}
	for _, o := range w.services.inf.GetStore().List() {
		if s, ok := o.(*corev1.Service); ok {
			v.services = append(v.services, s)
		}
	}
	for _, o := range w.slices.inf.GetStore().List() {
		if s, ok := o.(*cachedSlice); ok {
			v.slices = append(v.slices, s)
		}
	}
	podStore := w.pods.inf.GetStore()
	v.pod = func(key string) *cachedPod {
		o, ok, _ := podStore.GetByKey(key)
		if !ok {
			return nil
		}
		p, _ := o.(*cachedPod)
		return p
	}
	v.podCount = len(podStore.ListKeys())
	v.pods = func() []*cachedPod {
		var out []*cachedPod
		for _, o := range podStore.List() {
			if p, ok := o.(*cachedPod); ok {
				out = append(out, p)
			}
		}
		return out
	}
	nsStore := w.namespaces.inf.GetStore()
	v.namespaces = func() []*corev1.Namespace {
		var out []*corev1.Namespace
		for _, o := range nsStore.List() {
			if n, ok := o.(*corev1.Namespace); ok {
				out = append(out, n)
			}
		}
		return out
	}
	if w.gateways != nil {
		for _, o := range w.gateways.inf.GetStore().List() {
			if g, ok := o.(*cachedGateway); ok {
				v.gateways = append(v.gateways, g)
			}
		}
		v.gatewayAPI = w.gatewayAPI.Load()
	}
	if w.nodes != nil {
		ns := w.nodes.inf.GetStore()
		v.node = func(name string) *cachedNode {
			o, ok, _ := ns.GetByKey(name)
			if !ok {
				return nil
			}
			n, _ := o.(*cachedNode)
			return n
		}
		v.nodeCount = len(ns.ListKeys())
		v.nodes = func() []*cachedNode {
			var out []*cachedNode
			for _, o := range ns.List() {
				if n, ok := o.(*cachedNode); ok {
					out = append(out, n)
				}
			}
			return out
		}
	}
	if o, ok, _ := nsStore.GetByKey(systemNamespace); ok {
		v.systemNS, _ = o.(*corev1.Namespace)
	}
	if w.secrets != nil {
		v.secretsLen = len(w.secrets.inf.GetStore().ListKeys())
	}
	return v
}

// meshNetworksRaw returns the meshNetworks text of the mesh ConfigMap
// ("istio", or "istio-<revision>"), if any.
func (w *watcher) meshNetworksRaw(ns string) string {
	text, _ := w.meshConfigMapKey(ns, meshNetworksKey)
	return text
}

// meshConfigMapKey returns one key of the mesh ConfigMap, and whether the
// ConfigMap exists.
func (w *watcher) meshConfigMapKey(ns, key string) (string, bool) {
	o, ok, _ := w.configMaps.inf.GetStore().GetByKey(ns + "/" + model.MeshConfigMapName(w.opts.Revision))
	if !ok {
		return "", false
	}
	cm, _ := o.(*corev1.ConfigMap)
	if cm == nil {
		return "", false
	}
	return cm.Data[key], true
}
