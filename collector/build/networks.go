package build

import (
	"net/netip"
	"sort"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// networkNames returns the network names sorted, so that where istiod
// iterates a map (and picks an arbitrary first match) meshscope is at least
// deterministic.
func meshNetworkNames(m *model.MeshNetworks) []string {
	if m == nil {
		return nil
	}
	names := make([]string, 0, len(m.Networks))
	for n := range m.Networks {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NetworkIndex is meshNetworks prepared for lookups while building a
// snapshot (istio pilot/pkg/serviceregistry/kube/controller/network.go
// reloadMeshNetworks).
type NetworkIndex struct {
	mn *model.MeshNetworks
	// fromRegistry maps a cluster ID to the first (sorted) network whose
	// endpoints say fromRegistry: <cluster>.
	fromRegistry map[string]string
	cidrs        []namedPrefix
	// registryGateways maps cluster ID → service hostname → gateways
	// declared by registryServiceName in a network with fromRegistry equal
	// to that cluster.
	registryGateways map[string]map[string][]meshNetworkGatewayIn
	// key identifies the content, to know when cached per-cluster parts
	// must be rebuilt.
	Key string
}

type namedPrefix struct {
	network string
	prefix  netip.Prefix
}

// meshNetworkGatewayIn is a registryServiceName gateway with its network.
type meshNetworkGatewayIn struct {
	Network string
	Port    uint32
}

func NewNetworkIndex(mn *model.MeshNetworks, key string) *NetworkIndex {
	ix := &NetworkIndex{
		mn:               mn,
		fromRegistry:     map[string]string{},
		registryGateways: map[string]map[string][]meshNetworkGatewayIn{},
		Key:              key,
	}
	for _, name := range meshNetworkNames(mn) {
		n := mn.Networks[name]
		var registries []string
		for _, e := range n.Endpoints {
			if e.FromCIDR != "" {
				if p, err := netip.ParsePrefix(strings.TrimSpace(e.FromCIDR)); err == nil {
					ix.cidrs = append(ix.cidrs, namedPrefix{name, p.Masked()})
				}
			}
			if e.FromRegistry != "" {
				registries = append(registries, e.FromRegistry)
				if _, taken := ix.fromRegistry[e.FromRegistry]; !taken {
					ix.fromRegistry[e.FromRegistry] = name
				}
			}
		}
		// registryServiceName counts only in the clusters this network
		// takes endpoints from (fromRegistry = the cluster holding the Service).
		for _, g := range n.Gateways {
			if g.RegistryServiceName == "" {
				continue
			}
			for _, reg := range registries {
				m := ix.registryGateways[reg]
				if m == nil {
					m = map[string][]meshNetworkGatewayIn{}
					ix.registryGateways[reg] = m
				}
				m[g.RegistryServiceName] = append(m[g.RegistryServiceName], meshNetworkGatewayIn{Network: name, Port: g.Port})
			}
		}
	}
	return ix
}

// networkFor returns the meshNetworks network of an endpoint IP in a
// cluster: fromRegistry first, then the first fromCidr containing it.
func (ix *NetworkIndex) networkFor(cluster, ip string) (string, model.NetworkFrom) {
	if ix == nil {
		return "", model.NetworkFromNone
	}
	if n, ok := ix.fromRegistry[cluster]; ok {
		return n, model.NetworkFromRegistry
	}
	if len(ix.cidrs) == 0 {
		return "", model.NetworkFromNone
	}
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return "", model.NetworkFromNone
	}
	for _, c := range ix.cidrs {
		if c.prefix.Contains(a) {
			return c.network, model.NetworkFromCIDR
		}
	}
	return "", model.NetworkFromNone
}

// resolveNetwork applies istiod's order for the network of a Kubernetes
// endpoint ((*EndpointBuilder).endpointNetwork and the kube Controller's
// Network): the pod's topology.istio.io/network label, else the cluster's
// system namespace label, else meshNetworks (fromRegistry, then fromCidr),
// else "".
func resolveNetwork(podLabel, systemNamespaceNetwork string, ix *NetworkIndex, cluster, ip string) (string, model.NetworkFrom) {
	if podLabel != "" {
		return podLabel, model.NetworkFromPodLabel
	}
	if systemNamespaceNetwork != "" {
		return systemNamespaceNetwork, model.NetworkFromNamespaceLabel
	}
	return ix.networkFor(cluster, ip)
}
