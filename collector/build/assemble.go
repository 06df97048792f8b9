package build

import (
	"sort"
	"time"

	"github.com/meshscope/meshscope/model"
)

// Share is what one cluster contributes to a snapshot, as gathered
// from its watcher (gather.go): the input of assemble.
type Share struct {
	Key         string // the registry entry's key (meshNetworks warnings)
	FromContext bool
	Cluster     model.Cluster
	// part is nil for a cluster that is not watched (removed, in error,
	// not started); selectedNow says its ServiceEntry selections are of
	// the current selectors.
	Part                *Part
	SelectedNow         bool
	DestinationRules    []model.DestinationRule
	PeerAuthentications []model.PeerAuthentication
	Sidecars            []model.Sidecar
	VirtualServices     []model.VirtualService
	IstioGateways       []model.IstioGateway
	// mesh is the mesh config of a context cluster's istiod.
	MeshConfig *model.MeshConfig
	// RevisionPlanes are its other running revisions (a primary in a
	// canary upgrade), each with its own config.
	RevisionPlanes []model.RevisionPlane
}

// DeclaredMeshNetworks is the meshNetworks of one cluster's ConfigMap.
type DeclaredMeshNetworks struct {
	Cluster  string
	Networks *model.MeshNetworks
}

// Input is everything a snapshot is made of.
type Input struct {
	Version         uint64
	Time            time.Time
	SystemNamespace string
	Clusters        []Share
	MeshNetworks    *model.MeshNetworks
	// MeshNetworksIn are the meshNetworks of each cluster's ConfigMap, in
	// cluster order: each istiod uses the static gateways of its own
	// (MeshNetworks, their merge, decides endpoint networks). Empty: the
	// static gateways of MeshNetworks, for every istiod.
	MeshNetworksIn  []DeclaredMeshNetworks
	NetworkIndex    *NetworkIndex
	NetworkWarnings map[string][]string
	ServiceEntries  []model.ServiceEntry
	WorkloadEntries []model.WorkloadEntry
	// IstiodEnv are the settings the user states (--istiod-env).
	IstiodEnv []model.IstiodEnv
	// GatewayNames are the answers for the gateways' DNS names
	// (GatewayNames), resolved by the caller.
	GatewayNames []model.GatewayName
	// RemoteSecrets are the remote-secret keys read, described and
	// tested, as the snapshot shows them.
	RemoteSecrets []model.RemoteSecret
}

// Assemble puts the clusters' shares together into a snapshot: services
// merged by hostname (the first cluster to hold one names it), the
// ServiceEntries' workloads attached, gateways and networks collected. It
// reads nothing but its input.
func Assemble(in Input) *model.Snapshot {
	s := &model.Snapshot{Version: in.Version, Time: in.Time, SystemNamespace: in.SystemNamespace, RemoteSecrets: in.RemoteSecrets}
	services := map[string]*model.Service{}
	selected := map[string][][]model.Endpoint{}
	nsLabels := map[string]map[string]map[string]string{}
	nets := networkSet{}
	for _, sh := range in.Clusters {
		c := sh.Cluster
		c.Warnings = append(c.Warnings, in.NetworkWarnings[sh.Key]...)
		if p := sh.Part; p != nil {
			id := c.ID
			c.Network, c.Counts = p.Network, p.Counts
			if sh.SelectedNow {
				selected[id] = p.Selected
			}
			nsLabels[id] = p.NamespaceLabels
			if p.ambient != nil {
				s.Ambient = append(s.Ambient, *p.ambient)
			}
			s.Proxies = append(s.Proxies, p.proxies...)
			if p.Network != "" {
				nets.add(p.Network, id)
			}
			for n := range p.networks {
				nets.add(n, id)
			}
			s.Gateways = append(s.Gateways, p.gateways...)
			s.DestinationRules = append(s.DestinationRules, sh.DestinationRules...)
			s.PeerAuthentications = append(s.PeerAuthentications, sh.PeerAuthentications...)
			s.Sidecars = append(s.Sidecars, sh.Sidecars...)
			s.VirtualServices = append(s.VirtualServices, sh.VirtualServices...)
			s.IstioGateways = append(s.IstioGateways, sh.IstioGateways...)
			for h, sc := range p.Services {
				svc := services[h]
				if svc == nil {
					m := p.serviceMeta[h]
					svc = &model.Service{Hostname: h, Namespace: m[0], Name: m[1], Clusters: map[string]*model.ServiceInCluster{}}
					services[h] = svc
				}
				if _, dup := svc.Clusters[id]; !dup {
					svc.Clusters[id] = sc
				}
			}
		}
		if sh.MeshConfig != nil {
			s.MeshConfigs = append(s.MeshConfigs, *sh.MeshConfig)
		}
		s.RevisionPlanes = append(s.RevisionPlanes, sh.RevisionPlanes...)
		s.Clusters = append(s.Clusters, c)
	}
	attachServiceEntries(services, in.ServiceEntries, in.WorkloadEntries, selected)
	s.ServiceEntries, s.WorkloadEntries = in.ServiceEntries, in.WorkloadEntries
	for i := range s.MeshConfigs {
		s.MeshConfigs[i].DiscoveryNamespaces = discoveryNamespaces(s.MeshConfigs[i], nsLabels)
	}
	for i := range s.RevisionPlanes {
		mc := &s.RevisionPlanes[i].MeshConfig
		mc.DiscoveryNamespaces = discoveryNamespaces(*mc, nsLabels)
	}
	if len(in.MeshNetworksIn) == 0 {
		s.Gateways = append(s.Gateways, staticGateways(in.MeshNetworks, "")...)
	}
	for _, d := range in.MeshNetworksIn {
		s.Gateways = append(s.Gateways, staticGateways(d.Networks, d.Cluster)...)
	}
	// Settings depend on the clusters and ambient facts only; gateway
	// names need them (RESOLVE_HOSTNAME_GATEWAYS per control plane).
	s.Settings = s.ResolveSettings(in.IstiodEnv)
	s.GatewayNames = in.GatewayNames
	s.Gateways = resolveGateways(s.Gateways, in.GatewayNames, noResolveControlPlanes(s))
	sort.SliceStable(s.Gateways, func(i, j int) bool {
		a, b := s.Gateways[i], s.Gateways[j]
		if a.Network != b.Network {
			return a.Network < b.Network
		}
		if a.Cluster != b.Cluster {
			return a.Cluster < b.Cluster
		}
		return a.Address < b.Address
	})
	s.Services = make([]*model.Service, 0, len(services))
	for _, svc := range services {
		svc.Ports = model.MergePorts(svc)
		svc.Source = serviceSource(svc)
		s.Services = append(s.Services, svc)
	}
	sort.Slice(s.Services, func(i, j int) bool { return s.Services[i].Hostname < s.Services[j].Hostname })
	s.Networks = nets.networks(s.Gateways, in.MeshNetworks)
	return s
}

// networkSet collects the clusters of each network.
type networkSet map[string]map[string]bool

func (ns networkSet) add(network, cluster string) {
	if ns[network] == nil {
		ns[network] = map[string]bool{}
	}
	if cluster != "" {
		ns[network][cluster] = true
	}
}

// networks lists every network — of endpoints, system namespaces, gateways
// and meshNetworks — with its clusters, gateway count and meshNetworks
// endpoint rules, by name.
func (ns networkSet) networks(gws []model.Gateway, mn *model.MeshNetworks) []model.Network {
	gwCount := map[string]int{}
	for _, g := range gws {
		gwCount[g.Network]++
		ns.add(g.Network, g.Cluster)
	}
	for name := range mn.Networks {
		ns.add(name, "")
	}
	names := make([]string, 0, len(ns))
	for n := range ns {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]model.Network, 0, len(names))
	for _, n := range names {
		nw := model.Network{Name: n, Gateways: gwCount[n]}
		for c := range ns[n] {
			nw.Clusters = append(nw.Clusters, c)
		}
		sort.Strings(nw.Clusters)
		for _, ep := range mn.Networks[n].Endpoints {
			if ep.FromRegistry != "" {
				nw.FromRegistry = append(nw.FromRegistry, ep.FromRegistry)
			}
			if ep.FromCIDR != "" {
				nw.FromCIDR = append(nw.FromCIDR, ep.FromCIDR)
			}
		}
		out = append(out, nw)
	}
	return out
}
