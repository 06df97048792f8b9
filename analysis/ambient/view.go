package ambient

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// View is the mesh as the istiod of one cluster sees it in ambient
// multi-network mode: its own network, the clusters it reads, its mesh
// config and its network gateways. Build it once per snapshot and control
// plane; it is read-only afterwards.
type View struct {
	// ControlPlane is the cluster istiod is primary of (its config
	// cluster), or another revision of it (cluster1@canary).
	ControlPlane string `json:"controlPlane"`
	// cluster is ControlPlane's config cluster.
	cluster string
	// Network is istiod's own network: the network label of its system
	// namespace ("" when unlabelled). WDS is drawn around it.
	Network string `json:"network"`
	// Clusters are the clusters istiod reads: its own, then those of the
	// remote secrets it holds, in snapshot order.
	Clusters []string `json:"clusters"`
	// Gateways are istiod's network gateways, sorted by network, source,
	// address.
	Gateways []networkGateway `json:"gateways,omitempty"`

	snap     *model.Snapshot
	mesh     model.MeshConfig
	networks map[string]string // cluster → network
}

// networkGateway is one east-west gateway address as istiod's ambient index
// holds it (networks.go NetworkGateway).
type networkGateway struct {
	Network string `json:"network"`
	// Cluster holds the Gateway.
	Cluster string `json:"cluster"`
	// Source is the Gateway's "namespace/name".
	Source  string `json:"source"`
	Address string `json:"address"`
	// Hostname is true when Address is a DNS name.
	Hostname bool `json:"hostname,omitempty"`
	// HBONEPort is the listener's port for an istio-remote Gateway; istiod
	// leaves it 0 for another cluster's istio-east-west Gateway (split-horizon
	// workloads then use 15008).
	HBONEPort      uint32 `json:"hbonePort"`
	Namespace      string `json:"namespace"`
	ServiceAccount string `json:"serviceAccount"`
}

// defaultHBONEPort is what a split-horizon workload uses when its gateway
// gives no HBONE port (multicluster.go createSplitHorizonWorkload).
const defaultHBONEPort = 15008

// key is istiod's resource name of a gateway, "namespace/name/address".
func (g networkGateway) key() string { return g.Source + "/" + g.Address }

// wdsAddress is the gateway as a split-horizon workload's network_gateway
// names it (multicluster.go createSplitHorizonWorkload): its IP on its
// network, or — a DNS name, which istiod does not resolve in ambient mode —
// the name in the Gateway's namespace.
func (g networkGateway) wdsAddress(port uint32) *xdsclient.WDSGateway {
	if g.Hostname {
		return &xdsclient.WDSGateway{Namespace: g.Namespace, Hostname: g.Address, HBONEPort: port}
	}
	return &xdsclient.WDSGateway{Network: g.Network, Address: g.Address, HBONEPort: port}
}

// NewView builds the view of the istiod of control plane controlPlane
// (cluster1, or another revision of it, cluster1@canary) from snap, the
// mesh as that control plane sees it (its mesh config, Istio config and
// settings: plane.View.Snap), reading the clusters reads (its own and its
// remote secrets'). analysis/plane builds it; nothing else decides what a
// control plane reads.
func NewView(snap *model.Snapshot, controlPlane string, reads []string) *View {
	cluster := model.ControlPlaneCluster(controlPlane)
	v := &View{ControlPlane: controlPlane, cluster: cluster, snap: snap, mesh: snap.MeshConfigFor(cluster), networks: map[string]string{}}
	if c := snap.ClusterByID(cluster); c != nil {
		v.Network = c.Network
	}
	for _, c := range snap.Clusters {
		if c.State == model.StateRemoved || !slices.Contains(reads, c.ID) {
			continue
		}
		v.Clusters = append(v.Clusters, c.ID)
		// A cluster's network is its system namespace's label, "" without
		// one (networks.go RemoteSystemNamespaceNetworks); pods take it,
		// whatever their own labels (workloads.go podWorkloadBuilder).
		v.networks[c.ID] = c.Network
	}
	v.Gateways = v.networkGateways()
	return v
}

// networkGateways mirrors networks.go k8sGatewayToNetworkGateways and the
// merge of buildGlobalNetworkCollections: in istiod's own cluster a
// Gateway of class istio-remote with a network label yields one gateway per
// status address (of type IPAddress or Hostname), on its first HBONE
// listener's port; in another cluster a Gateway of class istio-east-west
// does, on its first HBONE listener with TLS terminated, with no port. One
// gateway per namespace/name/address: istiod's own cluster's wins, else the
// first cluster's.
func (v *View) networkGateways() []networkGateway {
	byKey := map[string]networkGateway{}
	var order []string
	for _, id := range v.Clusters {
		a := v.snap.AmbientFor(id)
		if a == nil {
			continue
		}
		local := id == v.cluster
		for _, g := range a.Gateways {
			if g.Network == "" {
				continue
			}
			if local && g.Class != model.ClassRemote || !local && g.Class != model.ClassEastWest {
				continue
			}
			l, ok := hboneListener(g, !local)
			if !ok {
				continue
			}
			for _, addr := range g.Addresses {
				if addr.Type != model.AddressTypeIP && addr.Type != model.AddressTypeHostname {
					continue
				}
				ng := networkGateway{Network: g.Network, Cluster: id, Source: g.Source(), Address: addr.Value,
					Namespace: g.Namespace, ServiceAccount: g.ServiceAccount}
				if _, err := netip.ParseAddr(addr.Value); err != nil {
					ng.Hostname = true
				}
				if local {
					ng.HBONEPort = l.Port
				}
				k := ng.key()
				if _, dup := byKey[k]; !dup {
					order = append(order, k)
				} else if !local {
					continue
				}
				byKey[k] = ng
			}
		}
	}
	out := make([]networkGateway, 0, len(order))
	for _, k := range order {
		out = append(out, byKey[k])
	}
	slices.SortStableFunc(out, func(a, b networkGateway) int {
		return strings.Compare(a.Network+"\x00"+a.Source+"\x00"+a.Address, b.Network+"\x00"+b.Source+"\x00"+b.Address)
	})
	return out
}

func hboneListener(g model.K8sGateway, needTerminate bool) (model.GatewayListener, bool) {
	for _, l := range g.Listeners {
		if l.Protocol == "HBONE" && (!needTerminate || l.TLSMode == "Terminate") {
			return l, true
		}
	}
	return model.GatewayListener{}, false
}

// gatewaysFor returns istiod's gateways of one network.
func (v *View) gatewaysFor(network string) []networkGateway {
	var out []networkGateway
	for _, g := range v.Gateways {
		if g.Network == network {
			out = append(out, g)
		}
	}
	return out
}

// GatewayWorkloads are the workloads istiod sends for its network gateways
// (workloads.go convertGateway), one per gateway, in every network: its IP
// as the address, or a DNS name as the hostname (unresolved, no address).
func (v *View) GatewayWorkloads() []Workload {
	out := make([]Workload, 0, len(v.Gateways))
	for _, g := range v.Gateways {
		w := Workload{
			UID:  "NetworkGateway/" + g.Network + "/" + g.Address + "/" + strconv.FormatUint(uint64(g.HBONEPort), 10),
			Kind: KindGateway, Network: g.Network, Cluster: g.Cluster, Status: xdsclient.Healthy, TunnelProtocol: xdsclient.TunnelNone,
			Why: "network gateway " + g.Source + " in " + g.Cluster,
		}
		if g.Hostname {
			w.Hostname = g.Address
			w.Why += "; its address " + g.Address + " is a DNS name, sent unresolved (ztunnel resolves it)"
		} else {
			w.Addresses = []string{g.Address}
		}
		out = append(out, w)
	}
	return out
}

// Scope is whether a service is global in a cluster.
type Scope string

const (
	Global Scope = "global"
	Local  Scope = "local"
)

// scopeIn decides a service's scope in one cluster with istiod's mesh
// config (services.go matchServiceScope): global when an entry of
// serviceScopeConfigs with scope GLOBAL selects both the namespace's labels
// (in that cluster) and the Service's labels; an entry whose namespace is
// unknown is skipped; a missing selector selects everything.
func (v *View) scopeIn(cluster, namespace, hostname string) Scope {
	a := v.snap.AmbientFor(cluster)
	if a == nil {
		return Local
	}
	nsLabels, nsKnown := a.Namespaces[namespace]
	svcLabels := a.ServiceLabels[hostname]
	for _, sc := range v.mesh.ServiceScopeConfigs {
		if !nsKnown {
			continue
		}
		if model.Selects(sc.NamespaceSelector, nsLabels) && model.Selects(sc.ServicesSelector, svcLabels) &&
			strings.EqualFold(sc.Scope, "GLOBAL") {
			return Global
		}
	}
	return Local
}

// ServiceScope is the scope of the service istiod merges for a hostname
// (the ServiceInfo its sidecar EDS reads, multicluster.go
// mergeServiceInfosWithCluster): its own cluster's Service when it reads
// one, else the first other cluster's that is global there (istiod reads
// only global services from other clusters). ok is false when istiod holds
// no Service for the hostname.
func (v *View) ServiceScope(hostname string) (scope Scope, ok bool) {
	svc := v.snap.Service(hostname)
	if svc == nil {
		return Local, false
	}
	for _, id := range v.Clusters {
		sc := svc.Clusters[id]
		if sc == nil || sc.NoService || sc.Type == "ExternalName" {
			continue
		}
		s := v.scopeIn(id, svc.Namespace, hostname)
		if id == v.cluster {
			return s, true
		}
		if s == Global && !ok {
			scope, ok = Global, true
		}
	}
	if !ok {
		return Local, false
	}
	return scope, true
}
