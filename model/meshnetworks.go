package model

import (
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
