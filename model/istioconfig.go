package model

import "time"

// DestinationRule is the part of an Istio DestinationRule that decides
// which endpoints a proxy gets and whether they are reached with mTLS.
type DestinationRule struct {
	Cluster   string    `json:"cluster"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	Created   time.Time `json:"created,omitzero"`
	Host      string    `json:"host"`
	// TLSMode is trafficPolicy.tls.mode (DISABLE, SIMPLE, MUTUAL,
	// ISTIO_MUTUAL), "" when there is no tls (a tls without a mode is
	// DISABLE, the enum's zero value, as istiod reads it); PortTLS the
	// portLevelSettings' modes.
	TLSMode string            `json:"tlsMode,omitempty"`
	PortTLS map[uint32]string `json:"portTls,omitempty"`
	// TrafficPolicy says the rule has a trafficPolicy: when rules for one
	// host merge, the oldest one with a traffic policy gives it (and so
	// the TLS mode).
	TrafficPolicy bool `json:"trafficPolicy,omitempty"`
	// ExportTo is spec.exportTo (empty: the mesh's
	// defaultDestinationRuleExportTo).
	ExportTo []string `json:"exportTo,omitempty"`
	// WorkloadSelector limits the rule to proxies with these labels (in
	// its own namespace).
	WorkloadSelector map[string]string `json:"workloadSelector,omitempty"`
	Subsets          []Subset          `json:"subsets,omitempty"`
	// LocalityLb is trafficPolicy.loadBalancer.localityLbSetting (nil when
	// unset); OutlierDetection says whether the rule sets outlierDetection
	// (at the top or on any port): istiod turns locality failover on only
	// with outlier detection (policy_traffic.go).
	LocalityLb       *LocalityLbSetting `json:"localityLbSetting,omitempty"`
	OutlierDetection bool               `json:"outlierDetection,omitempty"`
	// LB is the locality load-balancing part of the traffic policy, with
	// its portLevelSettings (nil: no trafficPolicy); LBFor resolves it for
	// one port and subset as istiod does.
	LB *TrafficLB `json:"lb,omitempty"`
	// Fingerprint identifies the whole spec, to compare one rule as two
	// control planes read it.
	Fingerprint string `json:"fingerprint,omitempty"`
}

// Subset is one DestinationRule subset: the endpoints whose labels include
// Labels, with its own TLS settings (falling back to the rule's).
type Subset struct {
	Name    string            `json:"name"`
	Labels  map[string]string `json:"labels,omitempty"`
	TLSMode string            `json:"tlsMode,omitempty"`
	PortTLS map[uint32]string `json:"portTls,omitempty"`
	// LB is the subset's trafficPolicy's locality load balancing (nil:
	// the subset has no trafficPolicy).
	LB *TrafficLB `json:"lb,omitempty"`
}

// PeerAuthentication is the mTLS part of an Istio PeerAuthentication.
type PeerAuthentication struct {
	Cluster   string    `json:"cluster"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	Created   time.Time `json:"created,omitzero"`
	// Selector is spec.selector.matchLabels (empty: the whole namespace,
	// or the mesh when in the system namespace).
	Selector map[string]string `json:"selector,omitempty"`
	// Mode is spec.mtls.mode (UNSET, DISABLE, PERMISSIVE, STRICT), "" when
	// unset; PortModes are portLevelMtls.
	Mode      string            `json:"mode,omitempty"`
	PortModes map[uint32]string `json:"portModes,omitempty"`
	// Fingerprint identifies the whole spec (see DestinationRule).
	Fingerprint string `json:"fingerprint,omitempty"`
}

// LBPolicy is what one traffic policy (or one of its portLevelSettings)
// says about locality load balancing: whether it sets outlierDetection,
// and its loadBalancer's localityLbSetting or zoneAwareLbSetting
// (LoadBalancer: a loadBalancer is set at all, which replaces the whole of
// an outer one).
type LBPolicy struct {
	OutlierDetection bool `json:"outlierDetection,omitempty"`
	// MinHealthPercent is outlierDetection.minHealthPercent (0: unset).
	MinHealthPercent int32               `json:"minHealthPercent,omitempty"`
	LoadBalancer     bool                `json:"loadBalancer,omitempty"`
	LocalityLb       *LocalityLbSetting  `json:"localityLbSetting,omitempty"`
	ZoneAware        *ZoneAwareLbSetting `json:"zoneAwareLbSetting,omitempty"`
}

// TrafficLB is a traffic policy's LBPolicy and its port-level ones.
type TrafficLB struct {
	LBPolicy
	Ports map[uint32]LBPolicy `json:"ports,omitempty"`
}

// forPort is the policy for one port: its portLevelSettings entry, which
// replaces the whole policy (hasPortLevel), else the policy itself.
func (t *TrafficLB) forPort(port uint32) (p LBPolicy, hasPortLevel bool) {
	if t == nil {
		return LBPolicy{}, false
	}
	if pp, ok := t.Ports[port]; ok {
		return pp, true
	}
	return t.LBPolicy, false
}

// LBFor mirrors getOutlierDetectionAndLoadBalancerSettings: the rule's
// policy for the port, overridden by the subset's (for the port) field by
// field — every field when the subset has port-level settings for it
// (MergeSubsetTrafficPolicy, MergeTrafficPolicy). A nil rule has none.
func (d *DestinationRule) LBFor(port uint32, subset string) LBPolicy {
	if d == nil {
		return LBPolicy{}
	}
	orig, _ := d.LB.forPort(port)
	var sub *TrafficLB
	for i := range d.Subsets {
		if d.Subsets[i].Name == subset {
			sub = d.Subsets[i].LB
			break
		}
	}
	if subset == "" || sub == nil {
		return orig
	}
	sp, hasPortLevel := sub.forPort(port)
	if d.LB == nil {
		return sp
	}
	if sp.OutlierDetection || hasPortLevel {
		orig.OutlierDetection, orig.MinHealthPercent = sp.OutlierDetection, sp.MinHealthPercent
	}
	if sp.LoadBalancer || hasPortLevel {
		orig.LoadBalancer, orig.LocalityLb, orig.ZoneAware = sp.LoadBalancer, sp.LocalityLb, sp.ZoneAware
	}
	return orig
}

// FailsOver reports whether a locality setting asks for failover: explicit
// failover or failoverPriority, not turned off, and not a weighted
// distribution (which istiod applies instead of failover).
func (l *LocalityLbSetting) FailsOver() bool {
	if l == nil || (l.Enabled != nil && !*l.Enabled) || len(l.Distribute) > 0 {
		return false
	}
	return len(l.Failover) > 0 || len(l.FailoverPriority) > 0
}

// Sidecar is the part of an Istio Sidecar resource that decides which
// services a proxy gets (its SidecarScope): the egress listeners' hosts,
// "namespace/dnsName" ("*" and "." namespaces, "*" and "*.suffix" names,
// "~namespace/dnsName" excluding), each listener limited to its port when
// it has one. istiod reads Sidecars from its config cluster.
type Sidecar struct {
	Cluster   string    `json:"cluster"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	Created   time.Time `json:"created,omitzero"`
	// WorkloadSelector limits it to proxies with these labels (nil: every
	// proxy of its namespace, or of the mesh in the root namespace).
	WorkloadSelector map[string]string `json:"workloadSelector,omitempty"`
	// Egress is empty when the Sidecar sets none (istiod then imports
	// "*/*").
	Egress []SidecarEgress `json:"egress,omitempty"`
}

// SidecarEgress is one egress listener.
type SidecarEgress struct {
	// Port is the listener's port number (0: none); Protocol its protocol.
	Port     uint32   `json:"port,omitempty"`
	Protocol string   `json:"protocol,omitempty"`
	Hosts    []string `json:"hosts"`
}

// VirtualService is the part of an Istio VirtualService that imports
// services into a Sidecar scope: its hosts, the gateways it is bound to,
// its exportTo, and where its routes send traffic. istiod reads
// VirtualServices from its config cluster.
type VirtualService struct {
	Cluster   string    `json:"cluster"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	Created   time.Time `json:"created,omitzero"`
	Hosts     []string  `json:"hosts,omitempty"`
	// Gateways are spec.gateways (empty: "mesh", the sidecars).
	Gateways []string `json:"gateways,omitempty"`
	ExportTo []string `json:"exportTo,omitempty"`
	// Destinations are the route destinations (http, tls, tcp; http
	// mirrors too), hosts as written.
	Destinations []VSDestination `json:"destinations,omitempty"`
}

// VSDestination is one destination of a VirtualService route.
type VSDestination struct {
	Host string `json:"host"`
	// Port is the destination port number (0: none, every port).
	Port uint32 `json:"port,omitempty"`
	// SourceNamespaces are the sourceNamespace of the http route's
	// matches (empty: any source).
	SourceNamespaces []string `json:"sourceNamespaces,omitempty"`
}

// ServiceEntry is an Istio ServiceEntry as istiod's registry reads it.
type ServiceEntry struct {
	// Cluster is the config cluster it was read from.
	Cluster   string    `json:"cluster"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	Created   time.Time `json:"created,omitzero"`
	Hosts     []string  `json:"hosts"`
	Addresses []string  `json:"addresses,omitempty"`
	// Ports: name, number (port) and targetPort.
	Ports []ServicePort `json:"ports,omitempty"`
	// Location is MESH_EXTERNAL (the default) or MESH_INTERNAL.
	Location string `json:"location"`
	// Resolution is NONE (the default), STATIC, DNS, DNS_ROUND_ROBIN or
	// DYNAMIC_DNS.
	Resolution string   `json:"resolution"`
	ExportTo   []string `json:"exportTo,omitempty"`
	// WorkloadSelector picks WorkloadEntries and Pods of its namespace;
	// without one, Endpoints are the inline endpoints.
	WorkloadSelector map[string]string `json:"workloadSelector,omitempty"`
	Endpoints        []WorkloadEntry   `json:"endpoints,omitempty"`
}

// WorkloadEntry is an Istio WorkloadEntry (or a ServiceEntry's inline
// endpoint): a workload outside Kubernetes, e.g. a VM.
type WorkloadEntry struct {
	// Cluster is the cluster it was read from (for an inline endpoint, its
	// ServiceEntry's).
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Address is an IP, a DNS name (DNS ServiceEntries only), "unix://..."
	// or empty (reached only through its network's gateway).
	Address string            `json:"address,omitempty"`
	Ports   map[string]uint32 `json:"ports,omitempty"`
	// Labels are spec.labels merged with metadata.labels, metadata winning
	// (istiod's ConvertWorkloadEntry).
	Labels         map[string]string `json:"labels,omitempty"`
	Network        string            `json:"network,omitempty"`
	Locality       string            `json:"locality,omitempty"`
	Weight         uint32            `json:"weight,omitempty"`
	ServiceAccount string            `json:"serviceAccount,omitempty"`
	// Unhealthy: health checks are on for it (annotation
	// proxy.istio.io/health-checks-enabled) and its status has no
	// Healthy=True condition: istiod leaves it out (isHealthy).
	Unhealthy bool `json:"unhealthy,omitempty"`
}

// TLSModeOf mirrors istiod's getTLSModeFromWorkloadEntry: the
// security.istio.io/tlsMode label when present, else "istio" when the entry
// names a service account (its proxy then has an Istio certificate), else
// "disabled".
func (we WorkloadEntry) TLSModeOf() string {
	if v, ok := we.Labels[LabelTLSMode]; ok {
		return v
	}
	if we.ServiceAccount != "" {
		return "istio"
	}
	return "disabled"
}

// LocalityOf is the entry's locality, else its topology.istio.io/locality
// or istio-locality label with "." read as "/" (istiod's
// convertWorkloadEntryToWorkloadInstance with GetLocalityLabel and
// SanitizeLocalityLabel).
func (we WorkloadEntry) LocalityOf() string {
	if we.Locality != "" {
		return we.Locality
	}
	return PodLabelLocality(we.Labels)
}
