package gatewayhop

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"sync"

	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/model"
)

// Config is the second-hop part of what istiod sends one gateway proxy:
// its listeners on AUTO_PASSTHROUGH ports with one SNI filter chain per
// service port and subset, and its SNI-DNAT clusters with their endpoints.
type Config struct {
	// ControlPlane is the istiod predicted for; Proxy the proxy as the
	// split-horizon prediction takes it.
	ControlPlane string        `json:"controlPlane"`
	Proxy        horizon.Proxy `json:"-"`
	// Gateways are the Istio Gateways that select the proxy, in istiod's
	// order.
	Gateways  []string   `json:"gateways"`
	Listeners []Listener `json:"listeners"`
	// Clusters are the SNI-DNAT clusters (outbound_.PORT_.SUBSET_.HOST),
	// none when no AUTO_PASSTHROUGH server applies.
	Clusters []Cluster `json:"clusters"`
	// Notes say what istiod ignores or rejects, and what is not predicted.
	Notes []string `json:"notes,omitempty"`

	view     *model.Snapshot
	ix       *horizon.Index
	clusters map[string]int             // name → index in Clusters
	chains   map[uint32]map[string]bool // listener port → SNI
	mu       sync.Mutex                 // guards eds
	eds      map[string]*horizon.Prediction
}

// Listener is one gateway listener with AUTO_PASSTHROUGH servers.
type Listener struct {
	// Name is istiod's (BIND_PORT, e.g. 0.0.0.0_15443).
	Name string `json:"name"`
	Bind string `json:"bind,omitempty"`
	Port uint32 `json:"port"`
	// Servers are its AUTO_PASSTHROUGH servers; Chains their SNI filter
	// chains; Other the servers of other modes on the port, whose chains
	// are not predicted.
	Servers []server `json:"servers,omitempty"`
	Chains  []Chain  `json:"chains"`
	Other   int      `json:"other,omitempty"`
	// Dropped says why istiod sends no such listener at all ("" when it
	// does): no filter chain, a privileged port for an unprivileged pod.
	Dropped string `json:"dropped,omitempty"`
}

// Chain is one SNI filter chain: its server name is the SNI-DNAT cluster
// it forwards to.
type Chain struct {
	SNI     string `json:"sni"`
	Service string `json:"service"`
	Port    int32  `json:"port"`
	Subset  string `json:"subset,omitempty"`
}

// Cluster is one SNI-DNAT cluster.
type Cluster struct {
	Name    string `json:"name"`
	Service string `json:"service"`
	Port    int32  `json:"port"`
	Subset  string `json:"subset,omitempty"`
	// Type is the discovery type (convertResolution for a router): EDS,
	// STRICT_DNS or LOGICAL_DNS.
	Type string `json:"type"`
}

// Predict is the second-hop config istiod (control plane cp) sends the
// gateway proxy of w, from view — the mesh as that istiod reads it
// (analysis/plane) — and ix, the horizon index of view (plane.View.Index).
func Predict(view *model.Snapshot, ix *horizon.Index, cp string, w Workload) *Config {
	c := &Config{ControlPlane: cp, Proxy: proxyOf(w, cp), view: view, ix: ix, clusters: map[string]int{}, chains: map[uint32]map[string]bool{},
		eds: map[string]*horizon.Prediction{}, Listeners: []Listener{}, Clusters: []Cluster{}}
	if !w.Router() {
		c.Notes = append(c.Notes, fmt.Sprintf("pod %s runs no istio-proxy started as a gateway (router): istiod builds no gateway listener for it", w.Pod))
		return c
	}
	m := mergeFor(view, cp, w, serviceTargets(view, w))
	c.Gateways, c.Notes = m.applied, m.notes
	scopes := c.scopes()
	wild := wildcard(w.IP)
	for _, ml := range m.listeners {
		if len(ml.Servers) == 0 {
			continue // no AUTO_PASSTHROUGH server on this port
		}
		l := Listener{Bind: ml.Bind, Port: ml.Port, Servers: ml.Servers, Other: ml.Other, Chains: []Chain{}}
		l.Name = orText(l.Bind, wild) + "_" + strconv.Itoa(int(l.Port))
		c.chains[l.Port] = map[string]bool{}
		for _, s := range l.Servers {
			for _, sc := range scopes {
				if !matchesAny(sc.host, s.Hosts) {
					continue
				}
				for _, p := range sc.ports {
					for _, sub := range append([]string{""}, sc.Subsets...) {
						sni := model.SNIName(sc.host, sub, p)
						l.Chains = append(l.Chains, Chain{SNI: sni, Service: sc.host, Port: p, Subset: sub})
						c.chains[l.Port][sni] = true
					}
				}
			}
		}
		switch {
		case w.Proxy.Unprivileged && l.Port < 1024:
			l.Dropped = fmt.Sprintf("the pod is unprivileged (ISTIO_META_UNPRIVILEGED_POD) and port %d is privileged: istiod skips it", l.Port)
			delete(c.chains, l.Port)
		case len(l.Chains) == 0 && l.Other == 0:
			l.Dropped = "no service of the gateway's scope matches its servers' hosts: istiod omits a listener without filter chains"
			delete(c.chains, l.Port)
		}
		c.Listeners = append(c.Listeners, l)
	}
	if m.autoPassthrough {
		c.addClusters(scopes)
	}
	return c
}

// scoped is one service of the gateway's scope that can have SNI chains
// and clusters: not MeshExternal, its non-UDP ports.
type scoped struct {
	host  string
	ports []int32
	horizon.Scope
}

// scopes lists the services of the proxy's sidecar scope (its namespace's
// default scope) that builtAutoPassthroughFilterChains and
// buildOutboundSniDnatClusters iterate: not MeshExternal, UDP ports left
// out.
func (c *Config) scopes() []scoped {
	var out []scoped
	for _, svc := range c.view.Services {
		sc, found := horizon.ScopeOf(c.view, c.ix, svc.Hostname, c.Proxy)
		if !found || !sc.Visible || sc.MeshExternal {
			continue
		}
		s := scoped{host: svc.Hostname, Scope: sc}
		for _, p := range sc.Ports {
			if !strings.EqualFold(p.Protocol, "UDP") {
				s.ports = append(s.ports, p.Port)
			}
		}
		if len(s.ports) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// addClusters lists the SNI-DNAT clusters: one per service port of the
// scope and one per subset of the DestinationRule the gateway sees,
// whatever the servers' hosts (only the chains follow the hosts).
func (c *Config) addClusters(scopes []scoped) {
	for _, sc := range scopes {
		typ := "EDS"
		switch sc.Resolution {
		case "DNS":
			typ = "STRICT_DNS"
		case "DNS_ROUND_ROBIN":
			typ = "LOGICAL_DNS"
		}
		for _, p := range sc.ports {
			for _, sub := range append([]string{""}, sc.Subsets...) {
				name := model.SNIName(sc.host, sub, p)
				c.clusters[name] = len(c.Clusters)
				c.Clusters = append(c.Clusters, Cluster{Name: name, Service: sc.host, Port: p, Subset: sub, Type: typ})
			}
		}
	}
}

// Endpoints is the EDS istiod sends the gateway for one of its SNI-DNAT
// clusters (predicted on first use), nil for a cluster it does not have
// or one that is not of type EDS.
func (c *Config) Endpoints(name string) *horizon.Prediction {
	i, ok := c.clusters[name]
	if !ok || c.Clusters[i].Type != "EDS" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.eds[name]; ok {
		return p
	}
	cl := c.Clusters[i]
	p := horizon.PredictSNI(c.view, c.ix, cl.Service, cl.Subset, cl.Port, c.Proxy)
	c.eds[name] = &p
	return &p
}

// cluster returns the SNI-DNAT cluster of that name.
func (c *Config) cluster(name string) (Cluster, bool) {
	i, ok := c.clusters[name]
	if !ok {
		return Cluster{}, false
	}
	return c.Clusters[i], true
}

// chainsFor says whether the listener on port has a filter chain for sni,
// and whether there is a listener on that port at all.
func (c *Config) chainsFor(port uint32, sni string) (chain, listener bool) {
	l, ok := c.chains[port]
	return l[sni], ok
}

// proxyOf is the gateway proxy as the prediction takes it: a router in
// its pod's namespace with its labels, the NETWORK, CLUSTER_ID and
// REQUESTED_NETWORK_VIEW it was injected with.
func proxyOf(w Workload, cp string) horizon.Proxy {
	p := horizon.Proxy{Cluster: w.clusterID(), Network: w.Network(), IP: w.IP, Namespace: w.Namespace, Labels: w.Labels,
		ConfigCluster: model.ControlPlaneCluster(cp), Router: true}
	if w.Proxy != nil {
		p.NetworkView = w.Proxy.NetworkViews()
	}
	return p
}

// wildcard is the listener address of a proxy at ip (getWildcardsAndLocalHost).
func wildcard(ip string) string {
	if a, err := netip.ParseAddr(ip); err == nil && a.Unmap().Is6() {
		return "::"
	}
	return "0.0.0.0"
}

// matchesAny mirrors the host test of builtAutoPassthroughFilterChains:
// the service's hostname is a subset of one of the server's SNI hosts.
func matchesAny(hostname string, hosts []string) bool {
	for _, h := range hosts {
		if model.HostSubsetOf(hostname, h) {
			return true
		}
	}
	return false
}
