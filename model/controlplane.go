package model

import (
	"slices"
	"time"
)

// Each istiod reads its own (config) cluster plus the clusters of the
// remote secrets held in that cluster's system namespace
// (pkg/kube/multicluster secretcontroller.go): in multi-primary every
// primary has its own set, and an endpoint of a cluster missing from a
// primary's set never reaches that primary's proxies. These functions
// model that set and cut a snapshot down to it, so that a prediction from
// the cut snapshot is what that istiod can send.

// IsContext reports whether meshscope reads the cluster through a kube
// context (as opposed to only through remote secrets).
func (c *Cluster) IsContext() bool {
	if c.Source.Kind == SourceContext {
		return true
	}
	for _, s := range c.Sources {
		if s.Kind == SourceContext {
			return true
		}
	}
	return false
}

// SecretsFrom returns the remote-secret sources of c held in cluster holder.
func (c *Cluster) SecretsFrom(holder string) []SourceRef {
	var out []SourceRef
	for _, s := range c.allSources() {
		if s.Kind == SourceSecret && s.In == holder {
			out = append(out, s)
		}
	}
	return out
}

func (c *Cluster) allSources() []SourceRef {
	if len(c.Sources) > 0 {
		return c.Sources
	}
	return []SourceRef{c.Source}
}

// ControlPlanes lists, in cluster order, the clusters an istiod reads from
// as its config cluster: those where an istiod pod runs, and the context
// clusters holding remote secrets meshscope follows. With neither (no
// permission to list pods in the system namespace, a single cluster), the
// first context cluster.
func (s *Snapshot) ControlPlanes() []string {
	if s == nil {
		return nil
	}
	var out []string
	for i := range s.Clusters {
		c := &s.Clusters[i]
		if c.State == StateRemoved {
			continue
		}
		if len(c.Istiods) > 0 || (c.IsContext() && s.holdsSecrets(c.ID)) {
			out = append(out, c.ID)
		}
	}
	if len(out) == 0 {
		for i := range s.Clusters {
			if s.Clusters[i].IsContext() && s.Clusters[i].State != StateRemoved {
				return []string{s.Clusters[i].ID}
			}
		}
	}
	return out
}

func (s *Snapshot) holdsSecrets(holder string) bool {
	for i := range s.Clusters {
		if s.Clusters[i].ID != holder && len(s.Clusters[i].SecretsFrom(holder)) > 0 {
			return true
		}
	}
	return false
}

// ClustersReadBy returns the clusters the istiod of config cluster id
// reads: id itself and every cluster declared by a remote secret held in
// id. known is false when meshscope does not read id's remote secrets (id
// is not a context, or its secrets cannot be listed): the set is then
// unknown and only id is returned.
func (s *Snapshot) ClustersReadBy(id string) (ids []string, known bool) {
	id = ControlPlaneCluster(id) // every revision of a primary reads its remote secrets
	self := s.ClusterByID(id)
	if self == nil {
		return nil, false
	}
	ids = []string{id}
	known = self.IsContext() && self.SecretsRead
	for i := range s.Clusters {
		c := &s.Clusters[i]
		if c.ID == id || c.State == StateRemoved || slices.Contains(ids, c.ID) {
			continue
		}
		if len(c.SecretsFrom(id)) > 0 {
			ids = append(ids, c.ID)
		}
	}
	return ids, known
}

// ForControlPlane is the mesh as the istiod of config cluster id sees it
// (see Restrict), from the clusters its remote secrets declare. When
// meshscope does not know that set (ClustersReadBy's known is false), or
// the istiod reads every cluster anyway, it returns s itself.
func (s *Snapshot) ForControlPlane(id string) *Snapshot {
	ids, known := s.ClustersReadBy(id)
	if !known {
		if s.RevisionPlane(id) != nil {
			return s.Restrict(id, s.clusterIDs())
		}
		return s
	}
	return s.Restrict(id, ids)
}

func (s *Snapshot) clusterIDs() []string {
	ids := make([]string, 0, len(s.Clusters))
	for i := range s.Clusters {
		ids = append(ids, s.Clusters[i].ID)
	}
	return ids
}

// Restrict is the mesh as an istiod with config cluster configCluster sees
// it when it reads exactly the clusters ids (from its remote secrets, or
// from its own /debug/clusterz): those clusters, their parts of each
// service, their gateways (and meshNetworks' static ones), the networks
// they make, and the Istio config and mesh config of configCluster only.
// It is pure: s is not changed, and parts that need no cut are shared.
// When ids covers every cluster and configCluster's config is all there
// is, s itself is returned. configCluster may name another revision of a
// primary (cluster1@canary, see RevisionPlane): its mesh config, Istio
// config and settings replace the predicted revision's.
func (s *Snapshot) Restrict(configCluster string, ids []string) *Snapshot {
	if s == nil {
		return nil
	}
	plane := s.RevisionPlane(configCluster)
	configCluster = ControlPlaneCluster(configCluster)
	in := make(map[string]bool, len(ids))
	for _, id := range ids {
		in[id] = true
	}
	if plane == nil && s.coversAll(configCluster, in) {
		return s
	}
	out := &Snapshot{Version: s.Version, Time: s.Time, SystemNamespace: s.SystemNamespace}
	for _, c := range s.Clusters {
		if in[c.ID] {
			out.Clusters = append(out.Clusters, c)
		}
	}
	gwCount := map[string]int{}
	for _, g := range s.Gateways {
		if (g.Cluster == "" || in[g.Cluster]) && (g.DeclaredIn == "" || g.DeclaredIn == configCluster) {
			out.Gateways = append(out.Gateways, g)
			gwCount[g.Network]++
		}
	}
	for _, n := range s.Networks {
		m := n
		m.Clusters = nil
		for _, c := range n.Clusters {
			if in[c] {
				m.Clusters = append(m.Clusters, c)
			}
		}
		m.Gateways = gwCount[n.Name]
		if len(m.Clusters) > 0 || m.Gateways > 0 || len(m.FromRegistry) > 0 || len(m.FromCIDR) > 0 {
			out.Networks = append(out.Networks, m)
		}
	}
	out.Services = make([]*Service, 0, len(s.Services))
	for _, svc := range s.Services {
		if cut := restrictService(svc, configCluster, in); cut != nil {
			out.Services = append(out.Services, cut)
		}
	}
	inConfig := func(c string) bool { return c == configCluster }
	out.ServiceEntries = keep(s.ServiceEntries, func(x ServiceEntry) bool { return inConfig(x.Cluster) })
	out.WorkloadEntries = keep(s.WorkloadEntries, func(x WorkloadEntry) bool { return in[x.Cluster] })
	out.DestinationRules = keep(s.DestinationRules, func(x DestinationRule) bool { return inConfig(x.Cluster) })
	out.PeerAuthentications = keep(s.PeerAuthentications, func(x PeerAuthentication) bool { return inConfig(x.Cluster) })
	out.Sidecars = keep(s.Sidecars, func(x Sidecar) bool { return inConfig(x.Cluster) })
	out.VirtualServices = keep(s.VirtualServices, func(x VirtualService) bool { return inConfig(x.Cluster) })
	out.IstioGateways = keep(s.IstioGateways, func(x IstioGateway) bool { return inConfig(x.Cluster) })
	// The gateway proxies of the clusters it reads: the second hop of
	// their networks (analysis/gatewayhop).
	out.Proxies = keep(s.Proxies, func(x ProxyPod) bool { return in[x.Cluster] })
	out.MeshConfigs = keep(s.MeshConfigs, func(x MeshConfig) bool { return inConfig(x.Cluster) })
	// The istiod's own settings decide its predictions (ambient
	// multi-network mode): without them SettingsFor would guess from its
	// pod and lose what --istiod-env (or a what-if) states.
	out.Settings = keep(s.Settings, func(x IstiodSettings) bool { return inConfig(x.ControlPlane) })
	out.Ambient = keep(s.Ambient, func(x AmbientCluster) bool { return in[x.Cluster] })
	// What the gateways' DNS names resolved to is the mesh's, not one
	// istiod's: the cut gateways carry their names.
	out.GatewayNames = s.GatewayNames
	if plane != nil {
		out.withPlane(s, plane)
	}
	return out
}

// restrictService is the part of svc the istiod of configCluster reads:
// the Kubernetes Services of the clusters in in, and the ServiceEntries of
// its config cluster with their workloads in those clusters. nil when
// nothing is left; svc itself when nothing is cut.
func restrictService(svc *Service, configCluster string, in map[string]bool) *Service {
	keep := 0
	for id := range svc.Clusters {
		if in[id] {
			keep++
		}
	}
	var hosts []*ServiceEntryHost
	cutHosts := false
	for _, h := range svc.ServiceEntries {
		if h.Cluster != configCluster {
			cutHosts = true
			continue
		}
		eps := h.Endpoints[:0:0]
		for _, ep := range h.Endpoints {
			if ep.Cluster == "" || in[ep.Cluster] {
				eps = append(eps, ep)
			}
		}
		if len(eps) != len(h.Endpoints) {
			c := *h
			c.Endpoints = eps
			h, cutHosts = &c, true
		}
		hosts = append(hosts, h)
	}
	switch {
	case keep == 0 && len(hosts) == 0:
		return nil
	case keep == len(svc.Clusters) && !cutHosts:
		return svc
	}
	cut := *svc
	cut.Clusters = make(map[string]*ServiceInCluster, keep)
	for id, sic := range svc.Clusters {
		if in[id] {
			cut.Clusters[id] = sic
		}
	}
	cut.ServiceEntries = hosts
	switch {
	case keep > 0 && len(hosts) > 0:
		cut.Source = SourceBoth
	case keep > 0:
		cut.Source = SourceKube
	default:
		cut.Source = SourceServiceEntry
	}
	if keep > 0 && len(hosts) == 0 {
		cut.Ports = MergePorts(&cut)
	}
	return &cut
}

// coversAll: every cluster is read and all Istio config and mesh config
// is configCluster's — nothing to cut.
func (s *Snapshot) coversAll(configCluster string, in map[string]bool) bool {
	for _, c := range s.Clusters {
		if !in[c.ID] {
			return false
		}
	}
	for _, se := range s.ServiceEntries {
		if se.Cluster != configCluster {
			return false
		}
	}
	for _, we := range s.WorkloadEntries {
		if !in[we.Cluster] {
			return false
		}
	}
	for _, d := range s.DestinationRules {
		if d.Cluster != configCluster {
			return false
		}
	}
	for _, p := range s.PeerAuthentications {
		if p.Cluster != configCluster {
			return false
		}
	}
	for _, m := range s.MeshConfigs {
		if m.Cluster != configCluster {
			return false
		}
	}
	for _, g := range s.Gateways {
		if g.DeclaredIn != "" && g.DeclaredIn != configCluster {
			return false
		}
	}
	return true
}

// keep returns the elements of xs that pass, in a new slice (nil when none
// does): Restrict must not share backing arrays with the full snapshot.
func keep[T any](xs []T, pass func(T) bool) []T {
	var out []T
	for _, x := range xs {
		if pass(x) {
			out = append(out, x)
		}
	}
	return out
}

// IstiodPod is an istiod running in a cluster (a Pod labelled app=istiod in
// the system namespace, as istioctl finds it): the cluster is a primary,
// its istiod reads this cluster's Istio config and remote secrets.
type IstiodPod struct {
	Name string `json:"name"`
	// ClusterID is the pod's CLUSTER_ID environment variable: the ID istiod
	// gives its own cluster ("" when not set in the pod spec; istiod's
	// default is then "Kubernetes").
	ClusterID string `json:"clusterID,omitempty"`
	Revision  string `json:"revision,omitempty"`
	// Version is the discovery container's image tag (1.28.0 of
	// pilot:1.28.0-distroless), "" when the image has none.
	Version string `json:"version,omitempty"`
	// Env holds the discovery container's settings that meshscope models
	// (SettingKeys), as literal values.
	Env map[string]string `json:"env,omitempty"`
	// KubeconfigOptions is the discovery container's
	// PILOT_INSECURE_MULTICLUSTER_KUBECONFIG_OPTIONS: the kubeconfig
	// options istiod allows in remote secrets (comma-separated; "" allows
	// none but oidc).
	KubeconfigOptions string `json:"kubeconfigOptions,omitempty"`
	// StartedAt is when the pod started (its status's startTime): istiod
	// has read every remote secret written before it.
	StartedAt time.Time `json:"startedAt,omitzero"`
	Ready     bool      `json:"ready"`
}
