package model

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// MeshConfig is the part of istiod's MeshConfig (istio.io/api
// mesh/v1alpha1) that decides which endpoints a proxy is sent, with
// istiod's defaults (pkg/config/mesh DefaultMeshConfig) where the text
// leaves a field out. istiod reads it from the file given by --meshConfig
// when that file exists, else from key "mesh" of ConfigMap "istio" (or
// "istio-<revision>") in its namespace (pilot/pkg/bootstrap/mesh.go); every
// field it sets replaces the default, except defaultConfig, which is merged.
type MeshConfig struct {
	// Cluster is the config cluster whose istiod reads this mesh config;
	// Source says where it was read from ("configmap istio-system/istio",
	// "file PATH", or "default" when there is none).
	Cluster string `json:"cluster,omitempty"`
	Source  string `json:"source"`
	// Error says why the text did not parse (the defaults then apply, and
	// istiod, which refuses it too, keeps its previous config).
	Error string `json:"error,omitempty"`

	RootNamespace string `json:"rootNamespace"`
	TrustDomain   string `json:"trustDomain"`
	// TrustDomainAliases are the other trust domains this istiod's
	// proxies accept as their own (a sidecar's upstream SANs are expanded
	// with them: spiffe.ExpandWithTrustDomains).
	TrustDomainAliases []string `json:"trustDomainAliases,omitempty"`
	// ServiceSettings make hosts cluster-local (or not).
	ServiceSettings []ServiceSettings `json:"serviceSettings,omitempty"`
	// Default exportTo of Services/ServiceEntries, DestinationRules and
	// VirtualServices without one of their own ("*" by default).
	DefaultServiceExportTo         []string `json:"defaultServiceExportTo"`
	DefaultDestinationRuleExportTo []string `json:"defaultDestinationRuleExportTo"`
	DefaultVirtualServiceExportTo  []string `json:"defaultVirtualServiceExportTo"`
	// ServiceScopeConfigs decide which services are global in ambient
	// multi-network meshes.
	ServiceScopeConfigs []ServiceScopeConfig `json:"serviceScopeConfigs,omitempty"`
	// LocalityLbSetting is the mesh-wide locality load balancing.
	LocalityLbSetting *LocalityLbSetting `json:"localityLbSetting,omitempty"`
	// ZoneAwareLbSetting is the mesh-wide zone-aware load balancing
	// (it wins over localityLbSetting).
	ZoneAwareLbSetting *ZoneAwareLbSetting `json:"zoneAwareLbSetting,omitempty"`
	// DiscoverySelectors limit the namespaces istiod reads (none: all);
	// DiscoveryNamespaces are, by cluster, the namespaces they select
	// (computed by the collector from the namespaces' labels; nil: all).
	DiscoverySelectors  []metav1.LabelSelector `json:"discoverySelectors,omitempty"`
	DiscoveryNamespaces map[string][]string    `json:"discoveryNamespaces,omitempty"`
	EnableAutoMTLS      bool                   `json:"enableAutoMtls"`
	// DefaultConfig is the part of the default proxy config that matters.
	DefaultConfig ProxyConfig `json:"defaultConfig"`
}

// ServiceSettings is one meshConfig.serviceSettings entry.
type ServiceSettings struct {
	Hosts    []string `json:"hosts"`
	Settings struct {
		ClusterLocal bool `json:"clusterLocal"`
	} `json:"settings"`
}

// ServiceScopeConfig is one meshConfig.serviceScopeConfigs entry.
type ServiceScopeConfig struct {
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
	ServicesSelector  *metav1.LabelSelector `json:"servicesSelector,omitempty"`
	// Scope is LOCAL (the default) or GLOBAL.
	Scope string `json:"scope,omitempty"`
}

// LocalityLbSetting is networking.istio.io LocalityLoadBalancerSetting, as
// the mesh config and DestinationRules carry it.
type LocalityLbSetting struct {
	// Enabled is nil when unset (istiod's mesh default is true).
	Enabled    *bool `json:"enabled,omitempty"`
	Distribute []struct {
		From string            `json:"from"`
		To   map[string]uint32 `json:"to"`
	} `json:"distribute,omitempty"`
	Failover []struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"failover,omitempty"`
	FailoverPriority []string `json:"failoverPriority,omitempty"`
}

// ZoneAwareLbSetting is a zoneAwareLbSetting (of a DestinationRule's
// loadBalancer or the mesh config): Envoy's zone-aware routing within the
// proxy's region, other regions at lower priorities.
type ZoneAwareLbSetting struct {
	// Enabled is nil when unset (on).
	Enabled  *bool `json:"enabled,omitempty"`
	Failover []struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"failover,omitempty"`
	FailoverPriority []string `json:"failoverPriority,omitempty"`
}

// ProxyConfig is the part of meshConfig.defaultConfig meshscope reads.
type ProxyConfig struct {
	DiscoveryAddress string            `json:"discoveryAddress,omitempty"`
	MeshID           string            `json:"meshId,omitempty"`
	ProxyMetadata    map[string]string `json:"proxyMetadata,omitempty"`
}

// DefaultMeshConfig is istiod's default, for a cluster with no mesh config.
func DefaultMeshConfig() MeshConfig {
	t := true
	return MeshConfig{
		Source:                         "default",
		RootNamespace:                  "istio-system",
		TrustDomain:                    DefaultTrustDomain,
		DefaultServiceExportTo:         []string{"*"},
		DefaultDestinationRuleExportTo: []string{"*"},
		DefaultVirtualServiceExportTo:  []string{"*"},
		LocalityLbSetting:              &LocalityLbSetting{Enabled: &t},
		EnableAutoMTLS:                 true,
		DefaultConfig:                  ProxyConfig{DiscoveryAddress: "istiod.istio-system.svc:15012"},
	}
}

// ParseMeshConfig reads the YAML (or JSON) of a MeshConfig onto istiod's
// defaults. Field names may be lowerCamel or snake_case, as istiod's proto
// decoding accepts both; unknown fields are ignored, as istiod does.
func ParseMeshConfig(text string) (MeshConfig, error) {
	mc := DefaultMeshConfig()
	if strings.TrimSpace(text) == "" {
		return mc, nil
	}
	var raw map[string]any
	if err := yaml.Unmarshal([]byte(text), &raw); err != nil {
		return mc, fmt.Errorf("mesh config: %w", configError(err))
	}
	raw, _ = camelKeys(raw).(map[string]any)
	// defaultConfig is merged into the default proxy config, not replaced.
	pc := mc.DefaultConfig
	b, err := json.Marshal(raw)
	if err != nil {
		return mc, fmt.Errorf("mesh config: %w", err)
	}
	if err := json.Unmarshal(b, &mc); err != nil {
		return DefaultMeshConfig(), fmt.Errorf("mesh config: %w", configError(err))
	}
	if dc, ok := raw["defaultConfig"].(map[string]any); ok {
		merged := pc
		b, _ := json.Marshal(dc)
		if err := json.Unmarshal(b, &merged); err != nil {
			return DefaultMeshConfig(), fmt.Errorf("mesh config: %w", configError(err))
		}
		if merged.DiscoveryAddress == "" {
			merged.DiscoveryAddress = pc.DiscoveryAddress
		}
		mc.DefaultConfig = merged
	}
	// Fields present but empty keep the default where istiod's would be
	// empty too; an explicit null or [] of exportTo means "*" in istiod.
	for _, l := range []*[]string{&mc.DefaultServiceExportTo, &mc.DefaultDestinationRuleExportTo, &mc.DefaultVirtualServiceExportTo} {
		if len(*l) == 0 {
			*l = []string{"*"}
		}
	}
	if mc.RootNamespace == "" {
		mc.RootNamespace = "istio-system"
	}
	for i, s := range mc.ServiceScopeConfigs {
		if s.Scope == "" {
			mc.ServiceScopeConfigs[i].Scope = "LOCAL"
		}
	}
	return mc, nil
}

// camelKeys rewrites snake_case map keys to lowerCamel, recursively. Map
// keys that are data (labels, proxyMetadata) never contain "_" in the
// forms istiod accepts for field names, so only keys with "_" are touched
// and label keys with "_" survive when no camel form of them is a field.
func camelKeys(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			out[snakeToCamel(k)] = camelKeys(val)
		}
		return out
	case []any:
		for i := range t {
			t[i] = camelKeys(t[i])
		}
		return t
	}
	return v
}

func snakeToCamel(s string) string {
	if !strings.Contains(s, "_") || strings.ContainsAny(s, "./-") || strings.ToLower(s) != s {
		return s
	}
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// ClusterLocal mirrors istiod's ClusterLocalHosts (pilot/pkg/model
// cluster_local.go): the most specific serviceSettings host pattern that
// matches decides; the defaults (*.kube-system.svc, kubernetes.default.svc
// and istiod's own discovery host) are cluster-local unless a
// clusterLocal=false setting names them or a host under them.
func (mc MeshConfig) ClusterLocal(hostname string) bool {
	return mc.ClusterLocalHosts().IsClusterLocal(hostname)
}

// ClusterLocalHosts are the cluster-local host rules of a mesh config, to
// ask about many hosts (istiod's clusterLocalProvider.onMeshUpdated).
type ClusterLocalHosts struct {
	specific, wildcard map[string]bool
}

// ClusterLocalHosts builds the mesh config's cluster-local host rules.
func (mc MeshConfig) ClusterLocalHosts() ClusterLocalHosts {
	defaults := []string{"*.kube-system.svc." + domainSuffix, Hostname("kubernetes", "default")}
	if h := discoveryHost(mc.DefaultConfig.DiscoveryAddress); h != "" {
		if !strings.HasSuffix(h, domainSuffix) {
			h += "." + domainSuffix
		}
		defaults = append(defaults, h)
	}
	specific, wildcard := map[string]bool{}, map[string]bool{}
	for _, ss := range mc.ServiceSettings {
		local := ss.Settings.ClusterLocal
		for _, h := range ss.Hosts {
			if !local {
				for i, d := range defaults {
					if d != "" && (h == d || (strings.HasPrefix(d, "*") && strings.HasSuffix(h, d[1:]))) {
						defaults[i] = ""
					}
				}
			}
		}
		for _, h := range ss.Hosts {
			if strings.HasPrefix(h, "*") {
				wildcard[h] = local
			} else {
				specific[h] = local
			}
		}
	}
	for _, d := range defaults {
		switch {
		case d == "":
		case strings.HasPrefix(d, "*"):
			wildcard[d] = true
		default:
			specific[d] = true
		}
	}
	return ClusterLocalHosts{specific: specific, wildcard: wildcard}
}

// IsClusterLocal mirrors ClusterLocalHosts.IsClusterLocal: the exact host,
// else the most specific (longest) matching wildcard; false when none.
func (c ClusterLocalHosts) IsClusterLocal(hostname string) bool {
	if v, ok := c.specific[hostname]; ok {
		return v
	}
	best, found, local := -1, false, false
	for pat, v := range c.wildcard {
		if pat == "*" || strings.HasSuffix(hostname, pat[1:]) {
			if len(pat) > best {
				best, found, local = len(pat), true, v
			}
		}
	}
	return found && local
}

func discoveryHost(addr string) string {
	if addr == "" {
		return ""
	}
	h := addr
	if i := strings.LastIndex(addr, ":"); i >= 0 && !strings.Contains(addr[i:], "]") {
		h = addr[:i]
	}
	return strings.Trim(h, "[]")
}

// Selects reports whether a mesh-config label selector matches labels; a
// nil selector matches everything, an invalid one nothing.
func Selects(sel *metav1.LabelSelector, l map[string]string) bool {
	if sel == nil {
		return true
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false
	}
	return s.Matches(labels.Set(l))
}

// MeshConfigFor returns the mesh config the istiod of config cluster reads:
// the one read for that cluster, else the first one read, else istiod's
// defaults.
func (s *Snapshot) MeshConfigFor(cluster string) MeshConfig {
	if s != nil {
		for _, mc := range s.MeshConfigs {
			if mc.Cluster == cluster {
				return mc
			}
		}
		if cluster == "" && len(s.MeshConfigs) > 0 {
			return s.MeshConfigs[0]
		}
	}
	mc := DefaultMeshConfig()
	mc.Cluster = cluster
	return mc
}

// MeshConfigMapName is the ConfigMap istiod of that revision reads its mesh
// config and meshNetworks from (pilot/pkg/bootstrap getMeshConfigMapName).
func MeshConfigMapName(revision string) string {
	if revision == "" || revision == "default" {
		return "istio"
	}
	return "istio-" + revision
}

// Discovered reports whether the istiod reading this mesh config reads
// namespace ns of cluster (its discoverySelectors). A cluster whose
// namespaces meshscope could not read counts as fully read.
func (mc MeshConfig) Discovered(cluster, ns string) bool {
	if mc.DiscoveryNamespaces == nil {
		return true
	}
	names, ok := mc.DiscoveryNamespaces[cluster]
	if !ok {
		return true
	}
	i := sort.SearchStrings(names, ns)
	return i < len(names) && names[i] == ns
}
