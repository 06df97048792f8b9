package gatewayhop

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/meshscope/meshscope/analysis/fleet"
	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/model"
)

// Checker follows cross-network requests through the gateways of one
// snapshot: each gateway pod's config is predicted once (pods of one
// shape share it) and every hop is checked against it. Safe for
// concurrent use.
type Checker struct {
	snap    *model.Snapshot
	viewFor ViewFunc
	fleet   *fleet.Fleet
	gws     []Gateway

	mu      sync.Mutex
	configs map[string]*Config
	// byPod finds a pod's config without its shape key (one per pod of
	// the snapshot).
	byPod map[string]*Config
}

// ViewFunc gives the mesh as the istiod of a control plane reads it, and
// the horizon index of that view (analysis/plane builds both once).
type ViewFunc func(cp string) (*model.Snapshot, *horizon.Index)

// NewChecker checks the hops of snap. viewFor gives the mesh as the istiod
// of a control plane reads it (analysis/plane: explain.NewHops); fl, when
// not nil, is the fleet of real proxies, which says whether a gateway
// pod's proxy is connected.
func NewChecker(snap *model.Snapshot, viewFor ViewFunc, fl *fleet.Fleet) *Checker {
	return &Checker{snap: snap, viewFor: viewFor, fleet: fl, gws: Gateways(snap), configs: map[string]*Config{}, byPod: map[string]*Config{}}
}

// Gateways are the network gateways checked, with their pods.
func (k *Checker) Gateways() []Gateway { return k.gws }

// gateway finds the gateway at address:port of network (nil: not a gateway
// Service's, e.g. a static meshNetworks address).
func (k *Checker) gateway(network, address string, port uint32) *Gateway {
	for i := range k.gws {
		g := &k.gws[i]
		if g.Network == network && g.Address == address && g.Port == port {
			return g
		}
	}
	return nil
}

// config is the predicted second-hop config of one gateway pod.
func (k *Checker) config(w Workload) *Config {
	pod := w.ControlPlane + "|" + w.Cluster + "/" + w.Namespace + "/" + w.Pod
	k.mu.Lock()
	defer k.mu.Unlock()
	if c := k.byPod[pod]; c != nil {
		return c
	}
	key := shapeKey(w)
	if c := k.configs[key]; c != nil {
		k.byPod[pod] = c
		return c
	}
	view, ix := k.viewFor(w.ControlPlane)
	c := Predict(view, ix, w.ControlPlane, w)
	k.configs[key], k.byPod[pod] = c, c
	return c
}

// Check follows a request for host:port (and subset) into network through
// the gateway at address:port: it holds when one ready pod behind the
// gateway carries it.
func (k *Checker) Check(network, address string, gwPort uint32, host string, port int32, subset string) Hop {
	g := k.gateway(network, address, gwPort)
	if g == nil {
		h := Hop{Network: network, Address: address, Port: gwPort, SNI: model.SNIName(host, subset, port), State: Unchecked}
		h.Why = "no gateway Service gives this address (a static meshNetworks gateway): meshscope cannot find the pods behind it"
		return h
	}
	return k.checkGateway(g, host, port, subset)
}

// checkGateway is Check for a gateway of Gateways.
func (k *Checker) checkGateway(g *Gateway, host string, port int32, subset string) Hop {
	base := Hop{Network: g.Network, Cluster: g.Cluster, Address: g.Address, Port: g.Port, SNI: model.SNIName(host, subset, port)}
	if g.Unchecked != "" {
		base.State, base.Why = Unchecked, g.Unchecked
		return base
	}
	if g.Error != "" {
		return base.broken(stepPods, model.ProblemHopPods, g.Error)
	}
	var firstBroken, doubtful, unchecked *Hop
	notReady := 0
	for _, w := range g.Pods {
		if !w.Ready {
			notReady++
			continue
		}
		h := k.podHop(g, w, host, subset, port)
		switch {
		case h.State == Holds:
			return h
		case h.State == Doubtful && doubtful == nil:
			doubtful = &h
		case h.State == Breaks && firstBroken == nil:
			firstBroken = &h
		case h.State == Unchecked && unchecked == nil:
			unchecked = &h
		}
	}
	switch {
	case doubtful != nil:
		return *doubtful
	case unchecked != nil:
		return *unchecked // a pod meshscope cannot check may carry it
	case firstBroken != nil:
		return *firstBroken
	}
	return base.broken(stepPods, model.ProblemHopPods, fmt.Sprintf("none of the %d pod(s) behind %s in %s is ready: the load balancer has nowhere to send %s's cross-network traffic",
		notReady, g.Service, g.Cluster, g.Network))
}

// proxySync is the fleet's row of a gateway pod's proxy (zero when the
// fleet is not read, or not complete enough to call it disconnected).
func (k *Checker) proxySync(w Workload) fleet.Proxy {
	if k.fleet == nil {
		return fleet.Proxy{}
	}
	for _, p := range k.fleet.Proxies {
		if p.Probe || p.Pod == nil || p.Pod.Cluster != w.Cluster || p.Pod.Namespace != w.Namespace || p.Pod.Name != w.Pod {
			continue
		}
		if p.State == fleet.Disconnected && !k.fleet.Complete {
			return fleet.Proxy{}
		}
		return p
	}
	return fleet.Proxy{}
}

// noChainWhy says why the gateway's listener has no filter chain for
// the SNI of host:port (and subset), and the objects whose change would
// give it one (none where no object change is mechanical).
func (k *Checker) noChainWhy(cfg *Config, w Workload, host, subset string, port int32, tp uint32) (string, []model.ObjectRef) {
	sc, found := horizon.ScopeOf(cfg.view, cfg.ix, host, cfg.Proxy)
	switch {
	case !found:
		return fmt.Sprintf("istiod %s does not know %s", cfg.ControlPlane, host), nil
	case !sc.Visible:
		return fmt.Sprintf("%s is not visible from the gateway's namespace %s (%s): istiod builds the gateway's SNI chains from its own scope, although the source's sidecar sends this SNI", host, w.Namespace, sc.Hidden),
			exportingServices(cfg.view, host, w.Namespace)
	case sc.MeshExternal:
		return fmt.Sprintf("%s is a MESH_EXTERNAL ServiceEntry: istiod makes no SNI chain for it", host), nil
	case !slices.ContainsFunc(sc.Ports, func(p model.ServicePort) bool { return p.Port == port && !strings.EqualFold(p.Protocol, "UDP") }):
		return fmt.Sprintf("the service the gateway sees for %s (namespace %s) has no TCP port %d", host, sc.Namespace, port), nil
	case subset != "" && !slices.Contains(sc.Subsets, subset):
		return k.noSubsetWhy(cfg, sc, w, host, subset)
	}
	var hosts []string
	var gws []model.ObjectRef
	if l := cfg.listenerOn(tp); l != nil {
		for _, s := range l.Servers {
			hosts = append(hosts, s.Hosts...)
			ns, name, _ := strings.Cut(s.Gateway, "/")
			if ref := (model.ObjectRef{Cluster: model.ControlPlaneCluster(cfg.ControlPlane), Kind: "Gateway", Namespace: ns, Name: name}); !slices.Contains(gws, ref) {
				gws = append(gws, ref)
			}
		}
	}
	return fmt.Sprintf("the hosts of the AUTO_PASSTHROUGH server(s) on port %d (%s) do not match %s", tp, strings.Join(hosts, ","), host), gws
}

// exportingServices are the Services of host whose exportTo names
// namespaces but not ns (nor "*"): the ones a fix exports to the
// gateway's namespace.
func exportingServices(snap *model.Snapshot, host, ns string) []model.ObjectRef {
	svc := snap.Service(host)
	if svc == nil {
		return nil
	}
	var out []model.ObjectRef
	for _, cid := range slices.Sorted(maps.Keys(svc.Clusters)) {
		sic := svc.Clusters[cid]
		if sic.NoService || len(sic.ExportTo) == 0 || slices.Contains(sic.ExportTo, "*") || slices.Contains(sic.ExportTo, ns) {
			continue
		}
		out = append(out, model.ObjectRef{Cluster: cid, Kind: "Service", Namespace: svc.Namespace, Name: svc.Name})
	}
	return out
}

// noSubsetWhy says why the gateway has no chain for a subset: the
// DestinationRule it sees declares none of that name, and the rules that
// do are not visible from its namespace (those are its objects).
func (k *Checker) noSubsetWhy(cfg *Config, sc horizon.Scope, w Workload, host, subset string) (string, []model.ObjectRef) {
	seen := "no DestinationRule"
	if len(sc.Rules) > 0 {
		seen = "DestinationRule " + strings.Join(sc.Rules, "+")
	}
	var declaring []string
	var objs []model.ObjectRef
	for _, d := range cfg.view.DestinationRules {
		if d.Cluster != cfg.Proxy.ConfigCluster || !model.HostSubsetOf(host, model.FQDN(d.Host, d.Namespace)) {
			continue
		}
		for _, s := range d.Subsets {
			if s.Name == subset {
				declaring = append(declaring, fmt.Sprintf("%s/%s (exportTo %s)", d.Namespace, d.Name, orText(strings.Join(d.ExportTo, ","), "default")))
				objs = append(objs, model.ObjectRef{Cluster: d.Cluster, Kind: "DestinationRule", Namespace: d.Namespace, Name: d.Name})
			}
		}
	}
	why := fmt.Sprintf("the gateway (namespace %s) sees %s for %s, without subset %s", w.Namespace, seen, host, subset)
	if len(declaring) > 0 {
		why += "; " + strings.Join(declaring, ", ") + " declares it but is not visible from " + w.Namespace
	}
	return why + ": the source's sidecar sends this SNI, the gateway has no chain or cluster for it", objs
}

// shapeKey identifies what a gateway pod's config depends on. Its IP is
// part of it: istiod finds the pod's Services (resolvePorts) and its
// locality (the priorities of locality load balancing) by it.
func shapeKey(w Workload) string {
	var b strings.Builder
	b.WriteString(w.ControlPlane + "|" + w.Cluster + "|" + w.Namespace + "|" + w.Pod + "|" + selectorText(w.Labels) + "|" + w.IP + "|")
	if w.Proxy != nil {
		b.WriteString(string(w.Proxy.Kind) + "|" + w.Proxy.Network + "|" + w.Proxy.ClusterID + "|" + w.Proxy.NetworkView + "|" + strconv.FormatBool(w.Proxy.Unprivileged))
	}
	ports := make([]string, 0, len(w.Ports))
	for p, t := range w.Ports {
		ports = append(ports, strconv.Itoa(int(p))+">"+strconv.Itoa(int(t)))
	}
	sort.Strings(ports)
	b.WriteString("|" + strings.Join(ports, ","))
	return b.String()
}
