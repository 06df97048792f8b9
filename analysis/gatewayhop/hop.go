package gatewayhop

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/meshscope/meshscope/analysis/fleet"
	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/model"
)

// State is how the second hop of one service port fares at one gateway.
type State string

const (
	// Holds: a ready gateway pod accepts the SNI and has healthy
	// endpoints of its own network for it.
	Holds State = "holds"
	// Doubtful: it holds, with a caveat (part of the traffic leaves the
	// network again; a gateway proxy not in sync).
	Doubtful State = "doubtful"
	// Breaks: no ready gateway pod carries the request.
	Breaks State = "breaks"
	// Unchecked: meshscope cannot follow the gateway to its pods.
	Unchecked State = "unchecked"
)

// Step names where a hop breaks.
type Step string

// The steps of the second hop, in the order traffic meets them.
const (
	stepPods     Step = "pods"     // no ready gateway pod running a router proxy
	stepProxy    Step = "proxy"    // its proxy is connected to no istiod
	stepListener Step = "listener" // no AUTO_PASSTHROUGH listener on the port traffic reaches
	stepChain    Step = "chain"    // no filter chain for the SNI
	stepCluster  Step = "cluster"  // no SNI-DNAT cluster
	stepEndpoint Step = "endpoint" // no healthy endpoint of the gateway's network
)

// Hop is the second hop of one service port (and subset) through one
// gateway: what the request meets there and whether it gets through.
type Hop struct {
	// Network and Cluster are the gateway's; Address and Port where
	// sidecars send to it.
	Network string `json:"network"`
	Cluster string `json:"cluster,omitempty"`
	Address string `json:"address"`
	Port    uint32 `json:"port"`
	SNI     string `json:"sni"`
	State   State  `json:"state"`
	// Step and Why say where and why it breaks (or the caveat); Kind is
	// the problem doctor reports for it ("" for a caveat that is none).
	Step Step              `json:"step,omitempty"`
	Why  string            `json:"why,omitempty"`
	Kind model.ProblemKind `json:"kind,omitempty"`
	// Pod is the gateway pod the rest describes: the first that carries
	// the request, else the first ready one; TargetPort the pod port the
	// gateway port reaches, Listener the listener there.
	Pod        string `json:"pod,omitempty"`
	TargetPort uint32 `json:"targetPort,omitempty"`
	Listener   string `json:"listener,omitempty"`
	// Endpoints are the healthy endpoints of the gateway's network in the
	// SNI-DNAT cluster; Elsewhere the entries that send the request on to
	// another network (gateways, or pod IPs of another network).
	Endpoints []string `json:"endpoints,omitempty"`
	Elsewhere []string `json:"elsewhere,omitempty"`
	// ControlPlane is the istiod serving Pod. Objects are the objects
	// whose change would make a broken hop hold, for doctor's fix
	// (analysis/fix, by kind): the pod, whose workload template lacks a
	// label or setting; the gateway Service, whose port misses the
	// listener; the Gateways whose hosts miss the service; the Services or
	// DestinationRules whose exportTo hides it from the gateway.
	ControlPlane string            `json:"controlPlane,omitempty"`
	Objects      []model.ObjectRef `json:"objects,omitempty"`
}

// OK says the request gets through (Holds or Doubtful).
func (h Hop) OK() bool { return h.State == Holds || h.State == Doubtful }

// Path is the hop in one line, e.g. "→ 192.168.60.9:15443 → SNI
// outbound_.5000_._.helloworld.sample.svc.cluster.local ✓ → 1 endpoint
// 10.144.0.15:5000 ✓", or where it breaks.
func (h Hop) Path() string {
	at := "→ " + model.HostPort(h.Address, h.Port)
	if h.TargetPort != 0 && h.TargetPort != h.Port {
		at += " (pod port " + strconv.Itoa(int(h.TargetPort)) + ")"
	}
	switch h.State {
	case Unchecked:
		return at + " → second hop not checked: " + h.Why
	case Breaks:
		switch h.Step {
		case stepPods, stepProxy, stepListener:
			return at + " ✗ " + h.Why
		case stepChain, stepCluster:
			return at + " → SNI " + h.SNI + " ✗ " + h.Why
		}
		return at + " → SNI " + h.SNI + " ✓ → no endpoint ✗ " + h.Why
	}
	eps := fmt.Sprintf("%d endpoint(s) %s", len(h.Endpoints), strings.Join(first(h.Endpoints, 3), ","))
	if len(h.Endpoints) == 1 {
		eps = "1 endpoint " + h.Endpoints[0]
	}
	out := at + " → SNI " + h.SNI + " ✓ → " + eps + " ✓"
	if h.State == Doubtful {
		out += " (! " + h.Why + ")"
	}
	return out
}

func first(l []string, n int) []string {
	if len(l) > n {
		return append(l[:n:n], "…")
	}
	return l
}

// podHop is the hop through one gateway pod.
func (k *Checker) podHop(g *Gateway, w Workload, host, subset string, port int32) Hop {
	h := Hop{Network: g.Network, Cluster: g.Cluster, Address: g.Address, Port: g.Port, SNI: model.SNIName(host, subset, port), Pod: w.Pod, ControlPlane: w.ControlPlane}
	h.TargetPort = g.Port
	if t, ok := w.Ports[g.Port]; ok {
		h.TargetPort = t
	} else if g.TargetPort != 0 {
		h.TargetPort = g.TargetPort
	}
	if !w.Router() {
		return h.broken(stepPods, model.ProblemHopPods, fmt.Sprintf("gateway pod %s runs no istio-proxy started as a router (\"proxy router\"): nothing there routes by SNI", w.Pod))
	}
	if c := k.snap.ClusterByID(model.ControlPlaneCluster(w.ControlPlane)); c == nil || !c.IsContext() {
		h.State = Unchecked
		h.Why = fmt.Sprintf("gateway pod %s is served by istiod %s, whose Istio config (its Gateways) meshscope does not read: give its cluster's kube context too", w.Pod, orText(w.ControlPlane, "(none found)"))
		return h
	}
	sync := k.proxySync(w)
	if sync.State == fleet.Disconnected {
		return h.broken(stepProxy, model.ProblemHopProxy, fmt.Sprintf("gateway pod %s's proxy is connected to no istiod: it has no config to route the request with", w.Pod))
	}
	cfg := k.config(w)
	chain, listener := cfg.chainsFor(h.TargetPort, h.SNI)
	if l := cfg.listenerOn(h.TargetPort); l != nil {
		h.Listener = l.Name
	}
	switch {
	case !listener:
		kind, why := cfg.noListenerWhy(g, w, h.TargetPort)
		h.Objects = []model.ObjectRef{w.Ref()}
		if kind == model.ProblemHopPort {
			h.Objects = []model.ObjectRef{g.serviceRef()}
		}
		return h.broken(stepListener, kind, why)
	case !chain:
		why, objs := k.noChainWhy(cfg, w, host, subset, port, h.TargetPort)
		h.Objects = objs
		return h.broken(stepChain, model.ProblemHopNoSNI, why)
	}
	cl, ok := cfg.cluster(h.SNI)
	if !ok {
		return h.broken(stepCluster, model.ProblemHopNoSNI, "the gateway has a filter chain but no cluster "+h.SNI)
	}
	if cl.Type != "EDS" {
		h.State, h.Why = Doubtful, fmt.Sprintf("a %s cluster: Envoy resolves its hosts itself, meshscope does not predict them", cl.Type)
		return h
	}
	h = endpointsHop(h, cfg.Endpoints(h.SNI), w)
	if h.State == Holds && (sync.State == fleet.Stale || sync.State == fleet.Rejected || sync.State == fleet.NotSent) {
		h.State, h.Kind, h.Why = Doubtful, model.ProblemHopProxy, fmt.Sprintf("gateway pod %s's proxy is %s on istiod %s", w.Pod, strings.ToLower(string(sync.State)), orText(sync.ControlPlane, "?"))
	}
	return h
}

func (h Hop) broken(step Step, kind model.ProblemKind, why string) Hop {
	h.State, h.Step, h.Kind, h.Why = Breaks, step, kind, why
	return h
}

// endpointsHop reads the gateway's SNI-DNAT cluster: the request gets
// through when a healthy endpoint of the gateway's own network is in it.
func endpointsHop(h Hop, p *horizon.Prediction, w Workload) Hop {
	if p == nil {
		return h.broken(stepCluster, model.ProblemHopNoSNI, "no EDS for "+h.SNI)
	}
	for _, e := range p.Endpoints {
		addr := model.HostPort(e.Address, e.Port)
		switch {
		case e.Kind != horizon.Local:
			h.Elsewhere = append(h.Elsewhere, addr+" ("+string(e.Kind)+" "+e.Network+")")
		case e.Health != horizon.Unhealthy:
			h.Endpoints = append(h.Endpoints, addr)
		}
	}
	switch {
	case len(h.Endpoints) > 0 && len(h.Elsewhere) == 0:
		h.State = Holds
	case len(h.Endpoints) > 0:
		h.State, h.Kind, h.Why = Doubtful, model.ProblemHopNetwork, fmt.Sprintf("the gateway's cluster also holds %s: without REQUESTED_NETWORK_VIEW=%s the gateway sends part of the requests on to another network",
			strings.Join(first(h.Elsewhere, 2), ", "), h.Network)
		h.Objects = []model.ObjectRef{w.Ref()}
	default:
		kind, why := noEndpointWhy(h, p, w)
		h = h.broken(stepEndpoint, kind, why)
		if kind == model.ProblemHopNetwork {
			h.Objects = []model.ObjectRef{w.Ref()}
		}
	}
	return h
}

// noEndpointWhy says why the gateway's SNI-DNAT cluster holds no healthy
// endpoint of its network.
func noEndpointWhy(h Hop, p *horizon.Prediction, w Workload) (model.ProblemKind, string) {
	net, view := w.Network(), ""
	if w.Proxy != nil {
		view = w.Proxy.NetworkView
	}
	switch {
	case p.NoEndpoints != "":
		return model.ProblemHopEndpoints, p.NoEndpoints
	case net == "" && len(h.Elsewhere) > 0:
		return model.ProblemHopNetwork, fmt.Sprintf("the gateway proxy sends no NETWORK (pod %s was injected without topology.istio.io/network): istiod sends it %s instead of %s's endpoints — the request loops back to a gateway (forceGateway)",
			w.Pod, strings.Join(first(h.Elsewhere, 2), ", "), h.Network)
	case view != "" && !strings.Contains(","+view+",", ","+h.Network+","):
		return model.ProblemHopNetwork, fmt.Sprintf("the gateway proxy's REQUESTED_NETWORK_VIEW is %q, not its network %s: istiod sends it none of %s's endpoints", view, h.Network, h.Network)
	case net != "" && net != h.Network:
		return model.ProblemHopNetwork, fmt.Sprintf("the gateway proxy says NETWORK=%s, but it is %s's gateway: istiod sends it %s's endpoints through their gateway", net, h.Network, h.Network)
	case len(p.Dropped) > 0:
		d := p.Dropped[0]
		for _, x := range p.Dropped {
			if x.Network == h.Network {
				d = x // the gateway's own network's drop says most
				break
			}
		}
		return model.ProblemHopEndpoints, fmt.Sprintf("istiod sends the gateway no healthy endpoint of %s (%d dropped: %s)", h.Network, len(p.Dropped), d.Why)
	case len(h.Elsewhere) > 0:
		return model.ProblemHopEndpoints, fmt.Sprintf("istiod sends the gateway only %s", strings.Join(first(h.Elsewhere, 2), ", "))
	}
	return model.ProblemHopEndpoints, fmt.Sprintf("the service has no ready endpoint the gateway can reach (%d endpoint(s) sent, none healthy in %s)", len(p.Endpoints), h.Network)
}

// listenerOn is the listener istiod sends on port, if any.
func (c *Config) listenerOn(port uint32) *Listener {
	for i := range c.Listeners {
		if c.Listeners[i].Port == port && c.Listeners[i].Dropped == "" {
			return &c.Listeners[i]
		}
	}
	return nil
}

// noListenerWhy says why no AUTO_PASSTHROUGH listener is on the pod port
// the gateway port reaches.
func (c *Config) noListenerWhy(g *Gateway, w Workload, tp uint32) (model.ProblemKind, string) {
	var ports []string
	for _, l := range c.Listeners {
		if l.Dropped == "" {
			ports = append(ports, strconv.Itoa(int(l.Port)))
		}
	}
	switch {
	case len(ports) > 0:
		return model.ProblemHopPort, fmt.Sprintf("port %d of %s reaches pod port %d, but the gateway's AUTO_PASSTHROUGH listener is on %s: the connection is refused", g.Port, g.Service, tp, strings.Join(ports, ","))
	case len(c.Gateways) == 0:
		return model.ProblemHopNoListener, fmt.Sprintf("no Gateway selects pod %s (labels %s) in the config of istiod %s: istiod builds it no listener (apply a Gateway with an AUTO_PASSTHROUGH server, e.g. istio's cross-network-gateway)",
			w.Pod, selectorText(w.Labels), c.ControlPlane)
	}
	for _, l := range c.Listeners {
		if l.Dropped != "" {
			return model.ProblemHopNoListener, fmt.Sprintf("the AUTO_PASSTHROUGH listener on port %d is not sent: %s", l.Port, l.Dropped)
		}
	}
	return model.ProblemHopNoListener, fmt.Sprintf("the Gateways that select pod %s (%s) have no AUTO_PASSTHROUGH server: nothing routes by SNI to the mesh's services", w.Pod, strings.Join(c.Gateways, ", "))
}
