package collector

import (
	"net/netip"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// MeshNetworks is the meshNetworks configuration (ConfigMap "istio", key
// "meshNetworks"; istio.io/api mesh/v1alpha1 MeshNetworks), the subset that
// decides networks and gateways.
type MeshNetworks struct {
	Networks map[string]MeshNetwork `json:"networks"`
}

// MeshNetwork is one network of meshNetworks.
type MeshNetwork struct {
	Endpoints []MeshNetworkEndpoint `json:"endpoints,omitempty"`
	Gateways  []MeshNetworkGateway  `json:"gateways,omitempty"`
}

// MeshNetworkEndpoint is one "endpoints" rule: fromRegistry (a cluster ID)
// or fromCidr. The proto JSON mapping accepts both lowerCamel and the
// original snake_case names, so both are read.
type MeshNetworkEndpoint struct {
	FromRegistry string `json:"fromRegistry,omitempty"`
	FromCIDR     string `json:"fromCidr,omitempty"`
	FromRegSnake string `json:"from_registry,omitempty"`
	FromCIDRSnak string `json:"from_cidr,omitempty"`
}

// MeshNetworkGateway is one static (address) or registry (registryServiceName) gateway.
type MeshNetworkGateway struct {
	Address             string `json:"address,omitempty"`
	RegistryServiceName string `json:"registryServiceName,omitempty"`
	RegistrySnake       string `json:"registry_service_name,omitempty"`
	Port                uint32 `json:"port,omitempty"`
	Locality            string `json:"locality,omitempty"`
}

// ParseMeshNetworks parses the YAML (or JSON) of meshNetworks. Empty input
// is an empty configuration.
func ParseMeshNetworks(data string) (*MeshNetworks, error) {
	mn := &MeshNetworks{}
	if strings.TrimSpace(data) == "" {
		return mn, nil
	}
	if err := yaml.Unmarshal([]byte(data), mn); err != nil {
		return nil, configError(err)
	}
	for name, n := range mn.Networks {
		for i, e := range n.Endpoints {
			if e.FromRegistry == "" {
				e.FromRegistry = e.FromRegSnake
			}
			if e.FromCIDR == "" {
				e.FromCIDR = e.FromCIDRSnak
			}
			e.FromRegSnake, e.FromCIDRSnak = "", ""
			n.Endpoints[i] = e
		}
		for i, g := range n.Gateways {
			if g.RegistryServiceName == "" {
				g.RegistryServiceName = g.RegistrySnake
			}
			g.RegistrySnake = ""
			n.Gateways[i] = g
		}
		mn.Networks[name] = n
	}
	return mn, nil
}

// networkNames returns the network names sorted, so that where istiod
// iterates a map (and picks an arbitrary first match) meshscope is at least
// deterministic.
func (m *MeshNetworks) networkNames() []string {
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

// meshNetworkIndex is meshNetworks prepared for lookups while building a
// snapshot (istio pilot/pkg/serviceregistry/kube/controller/network.go
// reloadMeshNetworks).
type meshNetworkIndex struct {
	mn *MeshNetworks
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
	key string
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

func newMeshNetworkIndex(mn *MeshNetworks, key string) *meshNetworkIndex {
	ix := &meshNetworkIndex{
		mn:               mn,
		fromRegistry:     map[string]string{},
		registryGateways: map[string]map[string][]meshNetworkGatewayIn{},
		key:              key,
	}
	for _, name := range mn.networkNames() {
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
func (ix *meshNetworkIndex) networkFor(cluster, ip string) (string, NetworkFrom) {
	if ix == nil {
		return "", NetworkFromNone
	}
	if n, ok := ix.fromRegistry[cluster]; ok {
		return n, NetworkFromRegistry
	}
	if len(ix.cidrs) == 0 {
		return "", NetworkFromNone
	}
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return "", NetworkFromNone
	}
	for _, c := range ix.cidrs {
		if c.prefix.Contains(a) {
			return c.network, NetworkFromCIDR
		}
	}
	return "", NetworkFromNone
}

// resolveNetwork applies istiod's order for the network of a Kubernetes
// endpoint ((*EndpointBuilder).endpointNetwork and the kube Controller's
// Network): the pod's topology.istio.io/network label, else the cluster's
// system namespace label, else meshNetworks (fromRegistry, then fromCidr),
// else "".
func resolveNetwork(podLabel, systemNamespaceNetwork string, ix *meshNetworkIndex, cluster, ip string) (string, NetworkFrom) {
	if podLabel != "" {
		return podLabel, NetworkFromPodLabel
	}
	if systemNamespaceNetwork != "" {
		return systemNamespaceNetwork, NetworkFromNamespaceLabel
	}
	return ix.networkFor(cluster, ip)
}
