package build

import (
	"sort"

	"github.com/meshscope/meshscope/model"
)

// GatewayNames are the DNS names among the gateways of in — load-balancer
// hostnames, Gateway API addresses of type Hostname, meshNetworks gateway
// addresses — sorted: what the collector resolves before Assemble (the
// build itself asks no DNS server).
func GatewayNames(in Input) []string {
	seen := map[string]bool{}
	add := func(gws []model.Gateway) {
		for _, g := range gws {
			if g.Hostname {
				seen[g.Address] = true
			}
		}
	}
	for _, sh := range in.Clusters {
		if sh.Part != nil {
			add(sh.Part.gateways)
			if a := sh.Part.ambient; a != nil {
				// Ambient east-west Gateways' DNS names: istiod sends them
				// to ztunnels unresolved; resolved here for doctor only.
				for _, g := range a.Gateways {
					for _, ad := range g.Addresses {
						if g.Class == model.ClassEastWest && g.Network != "" && ad.Type == model.AddressTypeHostname {
							seen[ad.Value] = true
						}
					}
				}
			}
		}
	}
	add(staticGateways(in.MeshNetworks, ""))
	for _, d := range in.MeshNetworksIn {
		add(staticGateways(d.Networks, d.Cluster))
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// resolveGateways mirrors istiod's resolveHostnameGateways: a gateway
// whose address is a DNS name becomes one gateway per address of its
// answer, with the same network, cluster and ports, and keeps the name it
// came from; a name that resolves to nothing (or that no answer is given
// for yet) stays a hostname gateway, which predictions leave out as istiod
// drops it. noResolve are the control planes that do not resolve names
// (RESOLVE_HOSTNAME_GATEWAYS=false): their istiod drops every such gateway.
func resolveGateways(gws []model.Gateway, names []model.GatewayName, noResolve []string) []model.Gateway {
	byName := make(map[string]model.GatewayName, len(names))
	for _, n := range names {
		byName[n.Name] = n
	}
	out := make([]model.Gateway, 0, len(gws))
	for _, g := range gws {
		if !g.Hostname {
			out = append(out, g)
			continue
		}
		ans := byName[g.Address]
		if !ans.Resolves() {
			out = append(out, g)
			continue
		}
		for _, a := range ans.Addresses {
			r := g
			r.Name, r.Address, r.Hostname = g.Address, a, false
			r.NotResolvedBy = noResolve
			out = append(out, r)
		}
	}
	return out
}

// noResolveControlPlanes are the control planes whose istiod does not
// resolve gateway names.
func noResolveControlPlanes(s *model.Snapshot) []string {
	var out []string
	for _, st := range s.Settings {
		if !st.Get(model.SettingResolveHostnameGateways).Value {
			out = append(out, st.ControlPlane)
		}
	}
	return out
}
