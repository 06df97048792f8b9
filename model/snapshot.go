package model

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// Snapshot is one consistent view of the mesh. It is immutable: the Registry
// builds a new one for every change and swaps a pointer, so a reader holding
// a *Snapshot never sees a half-applied update. Readers must not modify it
// (slices and maps inside may be shared with later snapshots).
type Snapshot struct {
	// Version grows by one with every published snapshot.
	Version uint64 `json:"version"`
	// SystemNamespace is istiod's namespace, where remote secrets live.
	SystemNamespace string `json:"systemNamespace,omitempty"`
	// Time is when the snapshot was built.
	Time     time.Time  `json:"time"`
	Clusters []Cluster  `json:"clusters"`
	Networks []Network  `json:"networks"`
	Gateways []Gateway  `json:"gateways"`
	Services []*Service `json:"services"`
	// DestinationRules and PeerAuthentications are the TLS settings of the
	// Istio config in the context clusters (istiod's config clusters).
	DestinationRules    []DestinationRule    `json:"destinationRules,omitempty"`
	PeerAuthentications []PeerAuthentication `json:"peerAuthentications,omitempty"`
	// Sidecars are the Sidecar resources of the config clusters: their
	// egress hosts narrow the services a proxy gets (sidecar.go).
	Sidecars []Sidecar `json:"sidecars,omitempty"`
	// VirtualServices are those of the config clusters: their route
	// destinations are imported into Sidecar scopes too.
	VirtualServices []VirtualService `json:"virtualServices,omitempty"`
	// IstioGateways are the networking.istio.io Gateways of the config
	// clusters: the servers istiod gives the gateway proxies they select
	// (an east-west gateway's AUTO_PASSTHROUGH server, istiogateway.go).
	IstioGateways []IstioGateway `json:"istioGateways,omitempty"`
	// ServiceEntries are those of the context clusters; WorkloadEntries
	// those of every cluster (istiod reads remote clusters' too).
	ServiceEntries  []ServiceEntry  `json:"serviceEntries,omitempty"`
	WorkloadEntries []WorkloadEntry `json:"workloadEntries,omitempty"`
	// MeshConfigs is the mesh config of each context cluster's istiod
	// (its config cluster), in cluster order; see MeshConfigFor.
	MeshConfigs []MeshConfig `json:"meshConfigs,omitempty"`
	// Ambient holds each cluster's ambient-mode facts, in cluster order
	// (see AmbientFor).
	Ambient []AmbientCluster `json:"ambient,omitempty"`
	// Proxies are the pods that run an Istio proxy or that ambient mode
	// captures, in cluster order, then by namespace and name (proxypod.go).
	Proxies []ProxyPod `json:"proxies,omitempty"`
	// Settings are each control plane's istiod settings that predictions
	// depend on, with where each value came from (settings.go).
	Settings []IstiodSettings `json:"settings,omitempty"`
	// GatewayNames are the gateway DNS names and their answers, by name
	// (gatewaynames.go).
	GatewayNames []GatewayName `json:"gatewayNames,omitempty"`
	// RevisionPlanes are the other running revisions of each primary, as
	// control planes of their own (revisionplane.go), in cluster order.
	RevisionPlanes []RevisionPlane `json:"revisionPlanes,omitempty"`
	// RemoteSecrets are the keys of the remote secrets read in the context
	// clusters, each credential described and, once tried, tested
	// (credential.go), by holder, secret and key.
	RemoteSecrets []RemoteSecret `json:"remoteSecrets,omitempty"`
}

// Cluster is the state of one Kubernetes cluster as meshscope sees it.
type Cluster struct {
	ID string `json:"id"`
	// IDFrom says where the ID comes from: the --cluster-id flag, the
	// CLUSTER_ID of the cluster's istiod, a remote secret, the sidecar
	// injector's clusterName, or the context name.
	IDFrom IDSource `json:"idFrom,omitempty"`
	// Source is how the cluster was first found; Sources lists every way
	// it is reached (a context and the remote secrets that point at the
	// same API server are one cluster).
	Source  SourceRef   `json:"source"`
	Sources []SourceRef `json:"sources,omitempty"`
	// Server is the API server URL (never credentials).
	Server string `json:"server,omitempty"`
	// Network is the cluster's default network: the
	// topology.istio.io/network label of its system namespace.
	Network string `json:"network,omitempty"`
	State   State  `json:"state"`
	// ErrorKind is a stable code for the reason (see ErrorKind constants);
	// Reason is the sentence a person reads.
	ErrorKind ErrorKind `json:"errorKind,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	// Warnings are problems that do not stop the cluster from being
	// watched, e.g. "cannot read remote secrets: forbidden".
	Warnings    []string  `json:"warnings,omitempty"`
	SyncedAt    time.Time `json:"syncedAt,omitzero"`
	LastEventAt time.Time `json:"lastEventAt,omitzero"`
	// WatchErrors counts errors reported by the informers' watches after
	// start; Reconnects counts recoveries from an unhealthy state after
	// the first sync.
	WatchErrors int    `json:"watchErrors,omitempty"`
	Reconnects  int    `json:"reconnects,omitempty"`
	Counts      Counts `json:"counts"`
	// Control-plane facts (controlplane.go): the istiods running in the
	// cluster, the root bundle its istiod publishes, and whether meshscope
	// reads its remote secrets (then it knows which clusters its istiod reads).
	Istiods       []IstiodPod `json:"istiods,omitempty"`
	RootCerts     []RootCert  `json:"rootCerts,omitempty"`
	RootCertError string      `json:"rootCertError,omitempty"`
	SecretsRead   bool        `json:"secretsRead,omitempty"`
	// RevisionTags are the cluster's revision tags; RevisionConfigs the
	// ConfigMap of each revision whose istiod runs in it (revisions.go).
	RevisionTags    []RevisionTag    `json:"revisionTags,omitempty"`
	RevisionConfigs []RevisionConfig `json:"revisionConfigs,omitempty"`
	// PredictedRevision is the revision meshscope predicts for
	// (--revision, else "default"), set where another one is in sight
	// (several revisions run, or config is labelled for another);
	// OtherRevisionsConfig lists, by
	// revision, the Istio config labelled istio.io/rev for another one,
	// which that istiod ignores ("DestinationRule sample/x").
	PredictedRevision    string              `json:"predictedRevision,omitempty"`
	OtherRevisionsConfig map[string][]string `json:"otherRevisionsConfig,omitempty"`
	// Forbidden lists the resources meshscope's credentials for this
	// cluster may not list or watch (for a cluster read through a remote
	// secret: what that secret's user lacks).
	Forbidden []string `json:"forbidden,omitempty"`
}

// SourceRef names where a cluster came from.
type SourceRef struct {
	Kind SourceKind `json:"kind"`
	// Name is the context name, or "namespace/name" of the remote secret.
	Name string `json:"name"`
	// In is, for a secret, the ID of the cluster that holds it.
	In string `json:"in,omitempty"`
	// Key is, for a secret, the data key (the cluster ID it declares).
	Key string `json:"key,omitempty"`
}

// SourceKind says whether a cluster came from a kube context or a remote secret.
type SourceKind string

const (
	SourceContext SourceKind = "context"
	SourceSecret  SourceKind = "secret"
)

// Counts are the numbers of objects in a cluster's informer caches.
type Counts struct {
	Services       int `json:"services"`
	EndpointSlices int `json:"endpointSlices"`
	Endpoints      int `json:"endpoints"`
	Pods           int `json:"pods"`
	Nodes          int `json:"nodes"`
	RemoteSecrets  int `json:"remoteSecrets"`
}

// Network is one network of the mesh and where it is declared.
type Network struct {
	Name string `json:"name"`
	// Clusters whose endpoints are (at least partly) in this network or
	// whose system namespace names it as the default network.
	Clusters []string `json:"clusters,omitempty"`
	// Gateways is the number of gateways for this network.
	Gateways int `json:"gateways"`
	// FromRegistry and FromCIDR are the meshNetworks endpoint rules.
	FromRegistry []string `json:"fromRegistry,omitempty"`
	FromCIDR     []string `json:"fromCidr,omitempty"`
}

// GatewayFrom says how a gateway was found.
type GatewayFrom string

const (
	GatewayFromService      GatewayFrom = "service"
	GatewayFromMeshNetworks GatewayFrom = "meshNetworks"
	GatewayFromGatewayAPI   GatewayFrom = "gatewayAPI"
)

// Gateway is one network gateway address as istiod would list it in
// /debug/networkz.
type Gateway struct {
	Network string `json:"network"`
	// Cluster holding the gateway Service; empty for a static
	// meshNetworks address (istiod leaves it empty too).
	Cluster string `json:"cluster,omitempty"`
	Address string `json:"address"`
	// Port is the mTLS port (0 when the Service only exposes HBONE);
	// HBONEPort is 15008 when exposed, else 0.
	Port      uint32 `json:"port"`
	HBONEPort uint32 `json:"hbonePort,omitempty"`
	// Hostname is true when Address is a DNS name (e.g. an AWS ELB) that
	// gave no address (it does not resolve, or is not asked yet): split
	// horizon uses only IP gateways, and istiod drops it.
	Hostname bool `json:"hostname,omitempty"`
	// Name is the DNS name Address was resolved from (gatewaynames.go);
	// NotResolvedBy lists the control planes whose istiod does not
	// resolve names (RESOLVE_HOSTNAME_GATEWAYS=false) and so drops it.
	Name          string      `json:"name,omitempty"`
	NotResolvedBy []string    `json:"notResolvedBy,omitempty"`
	From          GatewayFrom `json:"from"`
	// Service is "namespace/name" of the gateway Service, if any.
	Service string `json:"service,omitempty"`
	// Gateway is "namespace/name" of the Gateway API Gateway, if any;
	// ServiceAccount "namespace/name" of its service account (istiod tells
	// gateways apart by it too: a Service and a Gateway on one address are
	// two gateways).
	Gateway        string `json:"gateway,omitempty"`
	ServiceAccount string `json:"serviceAccount,omitempty"`
	// ConfigClusterOnly: only the istiod whose config cluster is Cluster
	// uses this gateway (a Gateway of class istio-remote).
	ConfigClusterOnly bool `json:"configClusterOnly,omitempty"`
	// DeclaredIn is, for a static meshNetworks gateway, the cluster whose
	// ConfigMap istio declares it: each istiod reads its own meshNetworks,
	// so only the istiod of that (config) cluster uses it.
	DeclaredIn string `json:"declaredIn,omitempty"`
}

// Source says where the gateway comes from: "service NS/NAME",
// "Gateway API Gateway NS/NAME" or "meshNetworks".
func (g Gateway) Source() string {
	switch {
	case g.Service != "":
		return "service " + g.Service
	case g.Gateway != "":
		return "Gateway API Gateway " + g.Gateway
	}
	return string(g.From)
}

// UsedBy reports whether the istiod whose config cluster is cc uses the
// gateway ("" stands for any istiod).
func (g Gateway) UsedBy(cc string) bool {
	if cc != "" && slices.Contains(g.NotResolvedBy, cc) {
		return false
	}
	return !g.ConfigClusterOnly || cc == "" || g.Cluster == cc
}

// HostOrAddress is the name a gateway was given: its DNS name if it has
// one, else its address.
func (g Gateway) HostOrAddress() string {
	if g.Name != "" {
		return g.Name
	}
	return g.Address
}

// ServiceSource says where istiod learns a hostname from.
type ServiceSource string

const (
	SourceKube         ServiceSource = "kube"
	SourceServiceEntry ServiceSource = "ServiceEntry"
	// SourceBoth: Kubernetes Services and ServiceEntries declare the same
	// hostname; istiod merges them (see ServiceEntryHost).
	SourceBoth ServiceSource = "both"
)

// Service is one hostname across all clusters: Kubernetes Services of that
// name, and ServiceEntries that declare it.
type Service struct {
	Hostname string `json:"hostname"`
	// Namespace and Name: of the Kubernetes Service, else of the first
	// ServiceEntry.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Ports: the union of the Kubernetes Services' and ServiceEntries' ports.
	Ports  []ServicePort `json:"ports,omitempty"`
	Source ServiceSource `json:"source"`
	// Clusters holds the Kubernetes Service as each cluster has it, by
	// cluster ID.
	Clusters map[string]*ServiceInCluster `json:"clusters"`
	// ServiceEntries holds the hostname as each ServiceEntry declaring it
	// has it, with its endpoints, oldest first.
	ServiceEntries []*ServiceEntryHost `json:"serviceEntries,omitempty"`
}

// ServiceEntryHost is one hostname of one ServiceEntry, as istiod's
// ServiceEntry registry turns it into a service with endpoints. For a
// proxy, istiod uses one namespace per hostname (the proxy's own if it has
// the hostname, else a Kubernetes Service's, else the oldest exported to
// it); in that namespace a Kubernetes Service's ports win, and the
// endpoints of every source (each cluster's EndpointSlices and every
// ServiceEntry of the namespace) are merged by port name.
type ServiceEntryHost struct {
	// Cluster is the config cluster of the ServiceEntry.
	Cluster    string        `json:"cluster"`
	Namespace  string        `json:"namespace"`
	Name       string        `json:"name"`
	Created    time.Time     `json:"created,omitzero"`
	Resolution string        `json:"resolution"`
	Location   string        `json:"location"`
	Ports      []ServicePort `json:"ports,omitempty"`
	ExportTo   []string      `json:"exportTo,omitempty"`
	// WorkloadSelector: nil when the endpoints are inline.
	WorkloadSelector map[string]string `json:"workloadSelector,omitempty"`
	// Endpoints: one per workload (inline endpoint, WorkloadEntry or Pod),
	// with one port per ServiceEntry port (by name).
	Endpoints []Endpoint `json:"endpoints"`
}

// ServicePort is one port of a Service.
type ServicePort struct {
	Name        string `json:"name,omitempty"`
	Port        int32  `json:"port"`
	TargetPort  string `json:"targetPort,omitempty"`
	Protocol    string `json:"protocol,omitempty"`
	AppProtocol string `json:"appProtocol,omitempty"`
}

// ServiceInCluster is the part of a Service that one cluster holds.
type ServiceInCluster struct {
	Cluster   string        `json:"cluster"`
	Type      string        `json:"type,omitempty"`
	ClusterIP string        `json:"clusterIP,omitempty"`
	Ports     []ServicePort `json:"ports,omitempty"`
	// Labels of the Service that matter to the mesh (network, gateway port).
	Labels    map[string]string `json:"labels,omitempty"`
	Endpoints []Endpoint        `json:"endpoints"`
	// NoService is true when EndpointSlices exist but the Service does
	// not (yet) in this cluster.
	NoService bool `json:"noService,omitempty"`
	// Selector is spec.selector (nil: endpoints are managed by hand);
	// Headless is clusterIP None; Created is the Service's creation time;
	// LBPending is a LoadBalancer Service with no ingress address yet.
	Selector  map[string]string `json:"selector,omitempty"`
	Headless  bool              `json:"headless,omitempty"`
	Created   time.Time         `json:"created,omitzero"`
	LBPending bool              `json:"lbPending,omitempty"`
	// ExportTo is the annotation networking.istio.io/exportTo, split at
	// commas (empty: the mesh's defaultServiceExportTo).
	ExportTo []string `json:"exportTo,omitempty"`
	// TrafficDistribution is how istiod reads the Service's preference for
	// near endpoints: "PreferSameZone" (spec.trafficDistribution
	// PreferClose or PreferSameZone), "PreferSameNode", or "" (any).
	TrafficDistribution string `json:"trafficDistribution,omitempty"`
}

// EndpointPort is a port of an EndpointSlice.
type EndpointPort struct {
	Name     string `json:"name,omitempty"`
	Port     int32  `json:"port"`
	Protocol string `json:"protocol,omitempty"`
}

// NetworkFrom says which rule gave an endpoint its network (docs/istiod-rules.md).
// It is a small number, not a string, because every endpoint of every
// snapshot holds one; it reads and writes (JSON, %s) as the rule's name.
type NetworkFrom uint8

const (
	NetworkFromNone           NetworkFrom = iota // ""
	NetworkFromPodLabel                          // "podLabel"
	NetworkFromNamespaceLabel                    // "systemNamespaceLabel"
	NetworkFromRegistry                          // "meshNetworksFromRegistry"
	NetworkFromCIDR                              // "meshNetworksFromCidr"
	// NetworkFromWorkloadEntry: the network field of a WorkloadEntry (or
	// inline ServiceEntry endpoint), its only source in istiod.
	NetworkFromWorkloadEntry // "workloadEntry"
)

var networkFromNames = [...]string{"", "podLabel", "systemNamespaceLabel", "meshNetworksFromRegistry", "meshNetworksFromCidr", "workloadEntry"}

func (f NetworkFrom) String() string {
	if int(f) < len(networkFromNames) {
		return networkFromNames[f]
	}
	return fmt.Sprintf("NetworkFrom(%d)", uint8(f))
}

func (f NetworkFrom) MarshalText() ([]byte, error) {
	if int(f) >= len(networkFromNames) {
		return nil, fmt.Errorf("unknown network source %d", uint8(f))
	}
	return []byte(networkFromNames[f]), nil
}

func (f *NetworkFrom) UnmarshalText(b []byte) error {
	i := slices.Index(networkFromNames[:], string(b))
	if i < 0 {
		return fmt.Errorf("unknown network source %q", b)
	}
	*f = NetworkFrom(i)
	return nil
}

// Endpoint is one address of a service in one cluster: a pod behind an
// EndpointSlice, or a workload of a ServiceEntry (a WorkloadEntry, an
// inline endpoint, or a pod its workloadSelector picks).
type Endpoint struct {
	Cluster string         `json:"cluster"`
	Network string         `json:"network"`
	Address string         `json:"address"`
	Ports   []EndpointPort `json:"ports,omitempty"`
	Pod     string         `json:"pod,omitempty"`
	// Workload names a non-pod endpoint: "WorkloadEntry/NAME" or
	// "ServiceEntry/NAME[INDEX]" (an inline endpoint), in the service's
	// namespace.
	Workload string `json:"workload,omitempty"`
	Node     string `json:"node,omitempty"`
	// Labels are the pod's (or WorkloadEntry's) labels.
	Labels map[string]string `json:"labels,omitempty"`
	// TLSMode is the pod label security.istio.io/tlsMode ("istio" when
	// the sidecar accepts mTLS; empty when the label is missing); for a
	// WorkloadEntry istiod's rule (label, else "istio" when it names a
	// service account, else "disabled").
	TLSMode string `json:"tlsMode,omitempty"`
	// Locality is the endpoint's locality exactly as istiod holds it: a
	// pod's topology.istio.io/locality (or istio-locality) label with dots
	// turned into slashes, else "region/zone/subzone" from its node's
	// labels — always two slashes, so "us-east-1/us-east-1a/" without a
	// subzone; a WorkloadEntry's own. istiod groups endpoints by this
	// string; Envoy sees its three parts.
	Locality string `json:"locality,omitempty"`
	// PodMissing is true when the endpoint's targetRef names a Pod that
	// is not in the cache (not created yet, or pods cannot be read):
	// istiod skips such an endpoint until the Pod exists.
	PodMissing  bool `json:"podMissing,omitempty"`
	Ready       bool `json:"ready"`
	Serving     bool `json:"serving"`
	Terminating bool `json:"terminating,omitempty"`
	// NetworkFrom is the rule that gave Network. It sits with the flags,
	// not next to Network, so that it packs with them: every snapshot
	// holds one Endpoint per endpoint (TestEndpointSize).
	NetworkFrom NetworkFrom `json:"networkFrom,omitempty"`
	// Weight is a WorkloadEntry's weight (0: istiod's default, 1).
	Weight uint32 `json:"weight,omitempty"`
}

// ClusterByID returns the cluster with that ID (the first, when a duplicate
// ID is in error), or nil.
func (s *Snapshot) ClusterByID(id string) *Cluster {
	if s == nil {
		return nil
	}
	for i := range s.Clusters {
		if s.Clusters[i].ID == id {
			return &s.Clusters[i]
		}
	}
	return nil
}

// Service returns the service with that hostname, or nil.
func (s *Snapshot) Service(hostname string) *Service {
	if s == nil {
		return nil
	}
	i := sort.Search(len(s.Services), func(i int) bool { return s.Services[i].Hostname >= hostname })
	if i < len(s.Services) && s.Services[i].Hostname == hostname {
		return s.Services[i]
	}
	return nil
}

// GatewaysFor returns the gateways of one network.
func (s *Snapshot) GatewaysFor(network string) []Gateway {
	var out []Gateway
	for _, g := range s.Gateways {
		if g.Network == network {
			out = append(out, g)
		}
	}
	return out
}

// Settled reports whether every cluster has finished its initial sync one
// way or another (synced, timeout, error or removed).
func (s *Snapshot) Settled() bool {
	for _, c := range s.Clusters {
		if !c.State.settled() {
			return false
		}
	}
	return true
}

// IDSource says where a cluster's ID comes from.
type IDSource string

// Where a cluster ID comes from, in the order a context cluster takes them.
const (
	// IDFromFlag: --cluster-id CONTEXT=ID.
	IDFromFlag IDSource = "cluster-id-flag"
	// IDFromIstiod: the CLUSTER_ID of the istiod pod running in the cluster,
	// which is what that istiod calls its own cluster.
	IDFromIstiod IDSource = "istiod"
	// IDFromRemoteSecret: the data key of a remote secret (in another
	// cluster) whose kubeconfig points at the cluster's API server — what
	// the istiod reading that secret calls it; for a cluster found only
	// through a secret, its key.
	IDFromRemoteSecret IDSource = "remote-secret"
	// IDFromInjector: global.multiCluster.clusterName in the values of
	// ConfigMap istio-sidecar-injector: the CLUSTER_ID injected sidecars
	// of the cluster send.
	IDFromInjector IDSource = "injector"
	// IDFromContext: nothing else names the cluster: the context name.
	IDFromContext IDSource = "context"
)

// MergePorts is the union of the clusters' ports by number, the first
// cluster (by ID) defining each, then the ServiceEntries' (oldest first).
func MergePorts(svc *Service) []ServicePort {
	ids := make([]string, 0, len(svc.Clusters))
	for id := range svc.Clusters {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if len(ids) == 1 && len(svc.ServiceEntries) == 0 {
		return svc.Clusters[ids[0]].Ports
	}
	var out []ServicePort
	seen := map[int32]bool{}
	add := func(ps []ServicePort) {
		for _, p := range ps {
			if !seen[p.Port] {
				seen[p.Port] = true
				out = append(out, p)
			}
		}
	}
	for _, id := range ids {
		add(svc.Clusters[id].Ports)
	}
	for _, se := range svc.ServiceEntries {
		add(se.Ports)
	}
	return out
}
