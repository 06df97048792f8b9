package gatewayhop

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// Gateway is one network gateway address (a gateway Service's, as istiod
// lists it in /debug/networkz) and the pods behind it: where a sidecar of
// another network sends traffic for this network.
type Gateway struct {
	Network string `json:"network"`
	Cluster string `json:"cluster"`
	// Service is "namespace/name" of the gateway Service.
	Service string `json:"service"`
	Address string `json:"address"`
	// Port is the mTLS port sidecars send to; TargetPort the pod port it
	// reaches (the gateway Service's endpoints' port of that name, else
	// its numeric targetPort; 0 when unknown).
	Port       uint32 `json:"port"`
	TargetPort uint32 `json:"targetPort,omitempty"`
	// Pods are the pods behind it (the Service's endpoints).
	Pods []Workload `json:"pods"`
	// Error says why no pod carries the hop (none behind the Service);
	// Unchecked why meshscope cannot follow the gateway to its pods (its
	// Service is not in what meshscope read).
	Error     string `json:"error,omitempty"`
	Unchecked string `json:"unchecked,omitempty"`
}

// Name is how a reader names the gateway: "NETWORK gateway ADDRESS:PORT".
func (g Gateway) Name() string {
	return fmt.Sprintf("%s's gateway %s", g.Network, model.HostPort(g.Address, g.Port))
}

// Workload is one gateway pod and the proxy identity istiod sees for it:
// what its istio-proxy container was started with.
type Workload struct {
	Cluster   string            `json:"cluster"`
	Namespace string            `json:"namespace"`
	Pod       string            `json:"pod"`
	IP        string            `json:"ip"`
	Labels    map[string]string `json:"labels,omitempty"`
	Ready     bool              `json:"ready"`
	// NetworkLabel is the pod's topology.istio.io/network label.
	NetworkLabel string `json:"networkLabel,omitempty"`
	// Proxy is the identity its istio-proxy was injected with (nil: it
	// runs none, and carries no traffic by SNI at all).
	Proxy *model.InjectedIdentity `json:"proxy,omitempty"`
	// ControlPlane is the istiod that serves it.
	ControlPlane string `json:"controlPlane,omitempty"`
	// Ports maps a port of the gateway Service to the pod port it reaches.
	Ports map[uint32]uint32 `json:"ports,omitempty"`
}

// Ref names the pod (for a problem's objects).
func (w Workload) Ref() model.ObjectRef {
	return model.ObjectRef{Cluster: w.Cluster, Kind: "Pod", Namespace: w.Namespace, Name: w.Pod}
}

// serviceRef names the gateway Service.
func (g *Gateway) serviceRef() model.ObjectRef {
	ns, name, _ := strings.Cut(g.Service, "/")
	return model.ObjectRef{Cluster: g.Cluster, Kind: "Service", Namespace: ns, Name: name}
}

// Router says the pod runs an istio-proxy started as a gateway ("proxy
// router"): only then does istiod build gateway listeners for it.
func (w Workload) Router() bool { return w.Proxy != nil && w.Proxy.Kind == model.ProxyGateway }

// Network is the NETWORK its proxy sends istiod ("" for none).
func (w Workload) Network() string {
	if w.Proxy == nil {
		return ""
	}
	return w.Proxy.Network
}

// clusterID is the CLUSTER_ID its proxy sends (its injected one, else its
// cluster's: istiod then takes its own).
func (w Workload) clusterID() string {
	if w.Proxy != nil && w.Proxy.ClusterID != "" {
		return w.Proxy.ClusterID
	}
	return w.Cluster
}

// Gateways lists the network gateways of snap that a gateway Service
// gives, each with the pods behind it, by network then address. Static
// meshNetworks gateways and Gateway API (ambient) gateways name no Service
// meshscope can follow to pods: they are left out.
func Gateways(snap *model.Snapshot) []Gateway {
	proxies := map[string]*model.InjectedIdentity{}
	for i := range snap.Proxies {
		p := &snap.Proxies[i]
		proxies[p.Key()] = p.Injected
	}
	var out []Gateway
	seen := map[string]bool{}
	for _, g := range snap.Gateways {
		if g.From != model.GatewayFromService || g.Service == "" || g.Port == 0 {
			continue
		}
		key := g.Network + "|" + g.Cluster + "|" + g.Address + "|" + strconv.Itoa(int(g.Port))
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, gatewayOf(snap, g, proxies))
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Network != out[j].Network {
			return out[i].Network < out[j].Network
		}
		return out[i].Address < out[j].Address
	})
	return out
}

// gatewayOf follows a gateway to its Service's endpoints in its cluster.
func gatewayOf(snap *model.Snapshot, g model.Gateway, proxies map[string]*model.InjectedIdentity) Gateway {
	out := Gateway{Network: g.Network, Cluster: g.Cluster, Service: g.Service, Address: g.Address, Port: g.Port}
	ns, name, _ := strings.Cut(g.Service, "/")
	svc := snap.Service(model.Hostname(name, ns))
	var sic *model.ServiceInCluster
	if svc != nil {
		sic = svc.Clusters[g.Cluster]
	}
	if sic == nil || sic.NoService {
		out.Unchecked = fmt.Sprintf("gateway Service %s is not among what meshscope read of %s", g.Service, g.Cluster)
		return out
	}
	for _, p := range sic.Ports {
		if uint32(p.Port) == g.Port {
			if n, err := strconv.Atoi(p.TargetPort); err == nil {
				out.TargetPort = uint32(n)
			}
		}
	}
	cp := servingControlPlane(snap, g.Cluster)
	for _, ep := range sic.Endpoints {
		if ep.Pod == "" {
			continue
		}
		w := Workload{Cluster: g.Cluster, Namespace: ns, Pod: ep.Pod, IP: ep.Address, Labels: ep.Labels, Ready: ep.Ready,
			NetworkLabel: ep.Labels[model.LabelNetwork], Proxy: proxies[g.Cluster+"/"+ns+"/"+ep.Pod], ControlPlane: cp}
		w.Ports = podPorts(sic, ep)
		if t, ok := w.Ports[g.Port]; ok {
			out.TargetPort = t
		}
		out.Pods = append(out.Pods, w)
	}
	if len(out.Pods) == 0 {
		out.Error = fmt.Sprintf("gateway Service %s in %s has no pods behind it (selector %s): no gateway proxy carries %s's cross-network traffic",
			g.Service, g.Cluster, selectorText(sic.Selector), g.Network)
	}
	slices.SortFunc(out.Pods, func(a, b Workload) int { return strings.Compare(a.Pod, b.Pod) })
	return out
}

// podPorts maps each port of a Service to the port of one of its
// endpoints it reaches (by the port's name, as the endpoint controller
// resolves targetPort per pod).
func podPorts(sic *model.ServiceInCluster, ep model.Endpoint) map[uint32]uint32 {
	out := map[uint32]uint32{}
	for _, p := range sic.Ports {
		for _, e := range ep.Ports {
			if e.Name == p.Name {
				out[uint32(p.Port)] = uint32(e.Port)
			}
		}
	}
	return out
}

// servingControlPlane is the control plane whose istiod serves the proxies
// of cluster: its own istiod, else the first primary reading it, else the
// first control plane.
func servingControlPlane(snap *model.Snapshot, cluster string) string {
	if servers, ok := snap.RevisionServers(cluster); ok && len(servers) > 0 {
		return servers[0].ID
	}
	cps := snap.ControlPlanes()
	for _, cp := range cps {
		if cp == cluster {
			return cp
		}
	}
	for _, cp := range cps {
		if ids, _ := snap.ClustersReadBy(cp); slices.Contains(ids, cluster) {
			return cp
		}
	}
	if len(cps) > 0 {
		return cps[0]
	}
	return ""
}

func selectorText(sel map[string]string) string {
	if len(sel) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(sel))
	for k := range sel {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		keys[i] = k + "=" + sel[k]
	}
	return strings.Join(keys, ",")
}

// Viewpoint is the gateway pod's proxy as meshscope impersonates it: a
// router with the pod's IP, name, namespace and labels and the metadata
// its istio-proxy was started with (NETWORK, CLUSTER_ID,
// REQUESTED_NETWORK_VIEW, ROUTER_MODE, UNPRIVILEGED_POD), asked of the
// istiod that serves it.
func (w Workload) Viewpoint() xdsclient.Viewpoint {
	vp := xdsclient.Viewpoint{Cluster: w.clusterID(), Network: w.Network(), NoNetwork: w.Network() == "", Namespace: w.Namespace,
		Labels: w.Labels, NodeType: xdsclient.Router, IP: w.IP, PodName: w.Pod, ControlPlane: w.ControlPlane,
		Pod: &xdsclient.PodRef{Namespace: w.Namespace, Name: w.Pod, Cluster: w.Cluster}, Metadata: map[string]string{}}
	if w.Proxy != nil {
		vp.RequestedNetworkView = w.Proxy.NetworkViews()
		if w.Proxy.RouterMode != "" {
			vp.Metadata["ROUTER_MODE"] = w.Proxy.RouterMode
		}
		if w.Proxy.Unprivileged {
			vp.Metadata["UNPRIVILEGED_POD"] = "true"
		}
	}
	return vp
}
