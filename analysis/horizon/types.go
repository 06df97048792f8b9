package horizon

import "github.com/meshscope/meshscope/model"

// Kind says why a predicted endpoint is what it is.
type Kind string

const (
	// Local: sent with its own address — same network as the proxy, or
	// either side has no network, or multi-network is off.
	Local Kind = "local"
	// Gateway: endpoints of another network, replaced by that network's
	// east-west gateway.
	Gateway Kind = "gateway"
	// Leaked: another network's endpoint sent with its own (unreachable)
	// address because no gateway is known for its network.
	Leaked Kind = "leaked"
	// Forced: replaced by its network's gateway because the proxy has no
	// NETWORK (istiod's forceGateway), even when it is "local".
	Forced Kind = "forced"
)

// DropReason says why an endpoint of the service is not in the EDS.
type DropReason string

const (
	// DropNoMTLS: a cross-network endpoint without mTLS (the pod lacks
	// security.istio.io/tlsMode=istio) cannot go through a gateway (SNI).
	DropNoMTLS DropReason = "no-mtls"
	// DropIPFamily: its network has gateways, but none of the proxy's IP family.
	DropIPFamily DropReason = "ip-family"
	// DropTerminating: not ready and terminating; istiod never sends these.
	DropTerminating DropReason = "not-ready"
	// DropClusterLocal: a cluster-local service's endpoint in another cluster.
	DropClusterLocal DropReason = "cluster-local"
	// DropNetworkView: the proxy's REQUESTED_NETWORK_VIEW excludes its network.
	DropNetworkView DropReason = "network-view"
	// DropSubset: the endpoint lacks a label of the DestinationRule subset.
	DropSubset DropReason = "subset"
	// DropNotDiscovered: its namespace is outside the mesh config's
	// discoverySelectors: istiod does not read it.
	DropNotDiscovered DropReason = "not-discovered"
	// DropNotIP: a ServiceEntry endpoint whose address is a DNS name.
	DropNotIP DropReason = "not-ip"
	// DropNoAddress: a WorkloadEntry without address that would be sent
	// directly (no gateway replaces it).
	DropNoAddress DropReason = "no-address"
	// DropPortName: the endpoint has no port of the service port's name —
	// its cluster's Service names the port otherwise (istiod matches
	// endpoints to the port of the first registry's Service by name).
	DropPortName DropReason = "port-name"
	// DropPodMissing: the EndpointSlice names a Pod that does not exist
	// (yet): istiod skips the endpoint until it does.
	DropPodMissing DropReason = "pod-missing"
	// DropNotGlobal: in ambient multi-network mode, a service that is not
	// global reaches sidecars with the endpoints of their own cluster only.
	DropNotGlobal DropReason = "not-global"
	// DropDistribute: the locality load balancing setting's distribute
	// rule for the proxy's locality names no locality of the endpoint:
	// istiod sends its group without endpoints.
	DropDistribute DropReason = "locality-distribute"
	// DropUnhealthy: a not-ready endpoint of a cluster whose
	// DestinationRule sets outlierDetection.minHealthPercent above 0.
	DropUnhealthy DropReason = "unhealthy"
)

// Health is the EDS health status istiod sets.
type Health string

const (
	Healthy   Health = "HEALTHY"
	Unhealthy Health = "UNHEALTHY"
)

// Ref is one real endpoint of the service (a pod address in a cluster).
type Ref struct {
	Address string `json:"address"`
	Port    uint32 `json:"port"`
	Pod     string `json:"pod,omitempty"`
	// Workload names a non-pod endpoint (WorkloadEntry/NAME, ServiceEntry/NAME[i]).
	Workload string `json:"workload,omitempty"`
	Cluster  string `json:"cluster"`
	Network  string `json:"network,omitempty"`
	Health   Health `json:"health"`
}

// Endpoint is one LbEndpoint istiod is predicted to send.
type Endpoint struct {
	Address string `json:"address"`
	Port    uint32 `json:"port"`
	Weight  uint32 `json:"weight"`
	Health  Health `json:"health"`
	Kind    Kind   `json:"kind"`
	// Locality is the endpoint's locality as Envoy receives it
	// (region/zone/subzone, see EnvoyLocality); LocalityWeight and
	// Priority are its LocalityLbEndpoints' load_balancing_weight and
	// priority.
	Locality       string `json:"locality,omitempty"`
	LocalityWeight uint32 `json:"localityWeight"`
	Priority       uint32 `json:"priority"`
	// Effect is what Envoy makes of it: its share of requests.
	Effect
	// Cluster and Network: of the pod for a direct endpoint, of the
	// gateway for a gateway endpoint.
	Cluster string `json:"cluster,omitempty"`
	Network string `json:"network,omitempty"`
	Pod     string `json:"pod,omitempty"`
	// Workload names a non-pod endpoint (WorkloadEntry/NAME, ServiceEntry/NAME[i]).
	Workload string `json:"workload,omitempty"`
	// StandsFor lists the real endpoints behind a gateway endpoint (for a
	// direct one: itself).
	StandsFor []Ref `json:"standsFor,omitempty"`
	// Why is a sentence saying why the endpoint is sent this way.
	Why string `json:"why"`
}

// Dropped is an endpoint of the service that istiod is predicted not to send.
type Dropped struct {
	Ref
	Reason DropReason `json:"reason"`
	// Cause says, for no-mtls, which setting turns mTLS off: pod-label,
	// peer-authentication or destination-rule.
	Cause string `json:"cause,omitempty"`
	// Config is the DestinationRule or PeerAuthentication of that cause.
	Config *model.ObjectRef `json:"config,omitempty"`
	Why    string           `json:"why"`
}

// Proxy is the part of a viewpoint the prediction depends on.
type Proxy struct {
	Cluster string
	// Network is the proxy's NETWORK metadata; "" means none was sent.
	Network string
	// IP is the proxy's address (IP family of gateways; default IPv4).
	IP string
	// NetworkView is REQUESTED_NETWORK_VIEW (empty: every network).
	NetworkView []string
	// Namespace is the proxy's namespace: which services it sees
	// (exportTo) and where its DestinationRules are looked up first
	// ("" is "default", meshscope's probe namespace).
	Namespace string
	// Labels are the proxy's labels (DestinationRule workloadSelectors).
	Labels map[string]string
	// ConfigCluster is the cluster whose istiod serves the proxy (its
	// primary): that istiod's mesh config and Istio config apply. Empty:
	// the first context cluster's.
	ConfigCluster string
	// Router is a gateway proxy (node type router): it always has the
	// default scope of its namespace, Sidecar resources never apply to
	// it (PushContext.getSidecarScope, DefaultSidecarScopeForGateway).
	Router bool
}

// Prediction is the EDS for one (service, port, proxy).
type Prediction struct {
	Service string `json:"service"`
	Port    int32  `json:"port"`
	// EDSCluster is the Envoy cluster name (outbound|PORT|SUBSET|HOST).
	EDSCluster string `json:"edsCluster"`
	// Subset is the DestinationRule subset, if any.
	Subset string `json:"subset,omitempty"`
	// Namespace is the namespace whose service istiod uses for the
	// hostname; Source what that service merges (kube, ServiceEntry,
	// both); Resolution a ServiceEntry's resolution.
	Namespace  string              `json:"namespace,omitempty"`
	Source     model.ServiceSource `json:"source,omitempty"`
	Resolution string              `json:"resolution,omitempty"`
	// NoEndpoints says why istiod sends no endpoints at all for this
	// cluster name (a DNS ServiceEntry, a service not exported to the
	// proxy's namespace, a namespace istiod does not read).
	NoEndpoints string `json:"noEndpoints,omitempty"`
	// MultiNetwork is false when no network has a gateway: split horizon
	// is off and every endpoint is sent as it is.
	MultiNetwork bool `json:"multiNetwork"`
	// ScaleFactor multiplies every weight (LCM of gateway counts).
	ScaleFactor uint32     `json:"scaleFactor"`
	Endpoints   []Endpoint `json:"endpoints"`
	Dropped     []Dropped  `json:"dropped,omitempty"`
	// LB is how the proxy's Envoy is predicted to spread requests over
	// Endpoints (istiod's cluster defaults).
	LB LBConfig `json:"lb"`
	// Found is false when the service or port is unknown.
	Found bool `json:"found"`
}
