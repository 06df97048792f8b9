package fix

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshscope/meshscope/analysis/gatewayhop"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
)

// Fixes of the second hop (analysis/gatewayhop): the east-west gateway as
// istiod configures it. A hop problem names the objects whose change makes
// it hold (gatewayhop.Hop.Objects); the planners here change them.

// crossNetworkGateway is the name of istio's AUTO_PASSTHROUGH Gateway
// (samples/multicluster/expose-services.yaml).
const crossNetworkGateway = "cross-network-gateway"

// planHopNoListener: no Gateway gives a network's gateway pods an
// AUTO_PASSTHROUGH listener. The fix is istio's cross-network-gateway in
// the config cluster of the istiod serving the pod, in the pod's namespace
// (PILOT_SCOPE_GATEWAY_TO_NAMESPACE wants it there), selecting the pod by
// its istio label as the sample does, on the gateway Service's mTLS port.
func planHopNoListener(snap *model.Snapshot, p model.Problem) Plan {
	pod, g := hopPod(snap, p)
	if pod == nil {
		return none("the gateway pod of the problem is not in the snapshot")
	}
	cfg := model.ControlPlaneCluster(orText(p.ControlPlane, pod.ControlPlane))
	if c := snap.ClusterByID(cfg); c == nil || !c.IsContext() {
		return none(fmt.Sprintf("the config cluster %q of the istiod serving pod %s is not read through a kube context: meshscope cannot say where the Gateway goes", cfg, pod.Pod))
	}
	sel := gatewaySelector(pod.Labels)
	hosts := []string{"*.local"}
	if p.Service != "" && !strings.HasSuffix(p.Service, ".local") {
		hosts = append(hosts, p.Service)
	}
	name := crossNetworkGateway
	for _, ig := range snap.IstioGateways {
		if ig.Cluster == cfg && ig.Namespace == pod.Namespace && ig.Name == name {
			name += "-" + g.Network
		}
	}
	ref := model.ObjectRef{Cluster: cfg, Kind: "Gateway", Namespace: pod.Namespace, Name: name}
	return Plan{Proposals: []Proposal{{
		Title: fmt.Sprintf("apply istio's %s in %s: an AUTO_PASSTHROUGH server on port %d for %s, selecting %s", crossNetworkGateway, cfg, g.Port, strings.Join(hosts, ","), selectorText(sel)),
		Trade: fmt.Sprintf("every gateway pod those labels select routes by SNI to its network's endpoints of every service under %s: those services become reachable from other networks, as istio's expose-services.yaml makes them", strings.Join(hosts, ",")),
		Edits: []Edit{newObject(ref, "created: AUTO_PASSTHROUGH server on port "+fmt.Sprint(g.Port), func(m map[string]any) error {
			m["apiVersion"], m["kind"] = "networking.istio.io/v1", "Gateway"
			server := map[string]any{"port": map[string]any{"number": int64(g.Port), "name": "tls", "protocol": "TLS"},
				"tls": map[string]any{"mode": "AUTO_PASSTHROUGH"}}
			if err := unstructured.SetNestedStringSlice(server, hosts, "hosts"); err != nil {
				return err
			}
			if err := unstructured.SetNestedStringMap(m, sel, "spec", "selector"); err != nil {
				return err
			}
			return unstructured.SetNestedSlice(m, []any{server}, "spec", "servers")
		})},
	}}}
}

// gatewaySelector is the selector a Gateway picks a gateway pod by: its
// istio label (istio=eastwestgateway, as the sample does), else its app
// label, else every label but the ones its controller sets per revision.
func gatewaySelector(labels map[string]string) map[string]string {
	for _, k := range []string{"istio", "app"} {
		if v := labels[k]; v != "" {
			return map[string]string{k: v}
		}
	}
	out := map[string]string{}
	for k, v := range labels {
		if k != "pod-template-hash" && k != "controller-revision-hash" {
			out[k] = v
		}
	}
	return out
}

// planHopPort: the gateway Service's mTLS port reaches a pod port where
// no AUTO_PASSTHROUGH listener is. The fix points it at the listener.
func planHopPort(snap *model.Snapshot, p model.Problem) Plan {
	ref := firstOfKind(p.Objects, "Service")
	pod, g := hopPod(snap, p)
	if ref == nil || pod == nil {
		return none("the gateway Service or its pods are not in the snapshot")
	}
	cp := orText(p.ControlPlane, pod.ControlPlane)
	v := plane.NewSet(snap, nil).Of(cp)
	cfg := gatewayhop.Predict(v.Snap, v.Index, cp, *pod)
	var ports []uint32
	for _, l := range cfg.Listeners {
		if l.Dropped == "" {
			ports = append(ports, l.Port)
		}
	}
	if len(ports) != 1 {
		return none(fmt.Sprintf("the gateway pod has %d AUTO_PASSTHROUGH listeners: which one port %d is meant to reach is its owner's to say", len(ports), g.Port))
	}
	target := ports[0]
	return Plan{Proposals: []Proposal{{
		Title: fmt.Sprintf("point port %d of %s at the gateway's AUTO_PASSTHROUGH listener (targetPort %d)", g.Port, ref, target),
		Trade: fmt.Sprintf("the load balancer sends cross-network traffic to pod port %d, where the gateway routes by SNI; whatever listened on the old target port gets none of it", target),
		Edits: []Edit{changeSpec(*ref, fmt.Sprintf("port %d's targetPort %d", g.Port, target), func(m map[string]any) error {
			ps, _, _ := unstructured.NestedSlice(m, "spec", "ports")
			found := false
			for _, x := range ps {
				if pm, ok := x.(map[string]any); ok && fmt.Sprint(pm["port"]) == fmt.Sprint(g.Port) {
					pm["targetPort"], found = int64(target), true
				}
			}
			if !found {
				return fmt.Errorf("the Service has no port %d", g.Port)
			}
			return unstructured.SetNestedSlice(m, ps, "spec", "ports")
		})},
	}}}
}

// planHopNoSNI: the gateway has no SNI chain for a service (or subset)
// another network sends it. By the objects the hop names: the Gateways
// whose AUTO_PASSTHROUGH hosts miss the service get it; the Services and
// DestinationRules whose exportTo hides it from the gateway's namespace
// are exported there too.
func planHopNoSNI(snap *model.Snapshot, p model.Problem) Plan {
	pod, _ := hopPod(snap, p)
	var out Plan
	var gws, exports []Edit
	for _, o := range p.Objects {
		switch o.Kind {
		case "Gateway":
			gws = append(gws, addGatewayHost(o, p.Service))
		case "Service":
			if pod != nil {
				exports = append(exports, exportServiceTo(o, pod.Namespace))
			}
		case "DestinationRule":
			if pod != nil {
				exports = append(exports, exportRuleTo(o, pod.Namespace))
			}
		}
	}
	if len(gws) > 0 {
		out.Proposals = append(out.Proposals, Proposal{
			Title: fmt.Sprintf("add %s to the AUTO_PASSTHROUGH hosts of %s", p.Service, joinRefs(refsOf(gws))),
			Trade: "the gateway routes this service by SNI too: other networks reach its endpoints in this network",
			Edits: gws,
		})
	}
	if len(exports) > 0 {
		out.Proposals = append(out.Proposals, Proposal{
			Title: fmt.Sprintf("export %s to the gateway's namespace %s too", joinRefs(refsOf(exports)), pod.Namespace),
			Trade: fmt.Sprintf("sidecars in %s (if any) see it too; the gateway builds its SNI chain and cluster, so other networks reach it", pod.Namespace),
			Edits: exports,
		})
	}
	return out
}

// addGatewayHost adds host to every AUTO_PASSTHROUGH server of a Gateway.
func addGatewayHost(ref model.ObjectRef, host string) Edit {
	return changeSpec(ref, "host "+host+" on its AUTO_PASSTHROUGH servers", func(m map[string]any) error {
		servers, _, _ := unstructured.NestedSlice(m, "spec", "servers")
		n := 0
		for _, x := range servers {
			s, ok := x.(map[string]any)
			if mode, _, _ := unstructured.NestedString(s, "tls", "mode"); !ok || mode != "AUTO_PASSTHROUGH" {
				continue
			}
			hosts, _, _ := unstructured.NestedStringSlice(s, "hosts")
			if !slices.Contains(hosts, host) {
				if err := unstructured.SetNestedStringSlice(s, append(hosts, host), "hosts"); err != nil {
					return err
				}
			}
			n++
		}
		if n == 0 {
			return fmt.Errorf("%s has no AUTO_PASSTHROUGH server", ref)
		}
		return unstructured.SetNestedSlice(m, servers, "spec", "servers")
	})
}

// exportServiceTo adds ns to a Service's networking.istio.io/exportTo.
func exportServiceTo(ref model.ObjectRef, ns string) Edit {
	return changeSpec(ref, fmt.Sprintf("annotation %s with %s added", model.AnnotationExportTo, ns), func(m map[string]any) error {
		ann, _, _ := unstructured.NestedStringMap(m, "metadata", "annotations")
		if ann == nil {
			ann = map[string]string{}
		}
		var to []string
		for _, t := range strings.Split(ann[model.AnnotationExportTo], ",") {
			if t = strings.TrimSpace(t); t != "" {
				to = append(to, t)
			}
		}
		ann[model.AnnotationExportTo] = strings.Join(withExport(to, ns, ref.Namespace), ",")
		return unstructured.SetNestedStringMap(m, ann, "metadata", "annotations")
	})
}

// exportRuleTo adds ns to a DestinationRule's spec.exportTo.
func exportRuleTo(ref model.ObjectRef, ns string) Edit {
	return changeSpec(ref, "exportTo with "+ns+" added", func(m map[string]any) error {
		to, _, _ := unstructured.NestedStringSlice(m, "spec", "exportTo")
		return unstructured.SetNestedStringSlice(m, withExport(to, ns, ref.Namespace), "spec", "exportTo")
	})
}

// withExport is an exportTo list with ns added: an empty one (the mesh's
// default, which hides it) becomes its own namespace and ns.
func withExport(to []string, ns, own string) []string {
	if len(to) == 0 {
		to = []string{"."}
	}
	if slices.Contains(to, ns) || (ns == own && slices.Contains(to, ".")) {
		return to
	}
	return append(to, ns)
}

// planHopNetwork: a gateway pod whose proxy sends the wrong NETWORK (its
// pod lacks the network label) or no REQUESTED_NETWORK_VIEW, or one
// without its network. The label goes on its workload's template (the injector writes
// NETWORK from it), the network view on its istio-proxy container.
func planHopNetwork(snap *model.Snapshot, p model.Problem) Plan {
	pod, g := hopPod(snap, p)
	if pod == nil {
		return none("the gateway pod of the problem is not in the snapshot")
	}
	ref := pod.Ref()
	var out Plan
	if pod.NetworkLabel != g.Network {
		out.Proposals = append(out.Proposals, Proposal{
			Title: fmt.Sprintf("label the pod template of %s's workload %s=%s", ref, model.LabelNetwork, g.Network),
			Trade: "its pods are made again (a rollout): the injector gives their proxies NETWORK=" + g.Network,
			Edits: []Edit{setLabel(ref, true, model.LabelNetwork, ptr(g.Network))},
		})
	}
	if pod.Proxy != nil && !slices.Contains(strings.Split(pod.Proxy.NetworkView, ","), g.Network) {
		out.Proposals = append(out.Proposals, Proposal{
			Title: fmt.Sprintf("set ISTIO_META_REQUESTED_NETWORK_VIEW=%s on the istio-proxy container of %s's workload", g.Network, ref),
			Trade: "its pods are made again (a rollout): istiod sends the gateway its own network's endpoints only",
			Edits: []Edit{setProxyEnv(ref, "ISTIO_META_REQUESTED_NETWORK_VIEW", g.Network)},
		})
	}
	return out
}

// setProxyEnv sets an env var of the istio-proxy container of a pod's
// workload template.
func setProxyEnv(ref model.ObjectRef, key, value string) Edit {
	return Edit{Object: ref, Template: true, What: fmt.Sprintf("env %s=%s on its istio-proxy container", key, value), change: func(m map[string]any) error {
		cs, _, _ := unstructured.NestedSlice(m, "spec", "containers")
		for _, x := range cs {
			c, ok := x.(map[string]any)
			if !ok || c["name"] != "istio-proxy" {
				continue
			}
			env, _ := c["env"].([]any)
			set := false
			for _, e := range env {
				if em, ok := e.(map[string]any); ok && em["name"] == key {
					em["value"], set = value, true
					delete(em, "valueFrom")
				}
			}
			if !set {
				env = append(env, map[string]any{"name": key, "value": value})
			}
			c["env"] = env
			return unstructured.SetNestedSlice(m, cs, "spec", "containers")
		}
		return fmt.Errorf("%s has no istio-proxy container in its template", ref)
	}}
}

// hopPod is the gateway pod a hop problem names, with its gateway.
func hopPod(snap *model.Snapshot, p model.Problem) (*gatewayhop.Workload, *gatewayhop.Gateway) {
	ref := firstOfKind(p.Objects, "Pod")
	gws := gatewayhop.Gateways(snap)
	for i := range gws {
		g := &gws[i]
		if g.Network != p.Network {
			continue
		}
		for j := range g.Pods {
			w := &g.Pods[j]
			if ref == nil || (w.Cluster == ref.Cluster && w.Namespace == ref.Namespace && w.Pod == ref.Name) {
				return w, g
			}
		}
	}
	return nil, nil
}

func firstOfKind(refs []model.ObjectRef, kind string) *model.ObjectRef {
	for i := range refs {
		if refs[i].Kind == kind {
			return &refs[i]
		}
	}
	return nil
}

func refsOf(es []Edit) []model.ObjectRef {
	var out []model.ObjectRef
	for _, e := range es {
		out = append(out, e.Object)
	}
	return out
}

func selectorText(sel map[string]string) string {
	var kv []string
	for _, k := range sortedKeys(sel) {
		kv = append(kv, k+"="+sel[k])
	}
	return strings.Join(kv, ",")
}
