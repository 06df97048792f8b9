package xdsclient

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// Ambient mode: ztunnel does not get EDS. istiod sends it the workload
// discovery API (WDS): resources of type istio.workload.Address over Delta
// ADS, each either a Workload (a pod, a WorkloadEntry, a network gateway, or
// a split-horizon workload standing for a remote network's pods) or a
// Service. The views below are the decoded form of the messages of istio's
// pkg/workloadapi/workload.proto (decoded in wds_decode.go without istio's
// generated code); enums are kept as their proto names.

// Type URLs of the workload API, as ztunnel subscribes to them.
const (
	AddressTypeURL       = "type.googleapis.com/istio.workload.Address"
	authorizationTypeURL = "type.googleapis.com/istio.security.Authorization"
)

// WDS is the workload discovery (Address) resource type, as ztunnel
// subscribes to it; EventWDS the event of a response to it.
const (
	WDS      Type      = "wds"
	EventWDS EventType = EventType(WDS)
)

// WDSWorkload is an istio.workload.Workload. (The small fields come last,
// packed: ten thousand views are decoded per full push.)
type WDSWorkload struct {
	UID       string `json:"uid"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	// Addresses are the workload's IPs (none for a split-horizon workload,
	// which is reached through its NetworkGateway only).
	Addresses      []string    `json:"addresses,omitempty"`
	Hostname       string      `json:"hostname,omitempty"`
	Network        string      `json:"network,omitempty"`
	TrustDomain    string      `json:"trustDomain,omitempty"`
	ServiceAccount string      `json:"serviceAccount,omitempty"`
	Waypoint       *WDSGateway `json:"waypoint,omitempty"`
	// NetworkGateway is the east-west gateway through which other networks
	// reach this workload.
	NetworkGateway    *WDSGateway `json:"networkGateway,omitempty"`
	Node              string      `json:"node,omitempty"`
	CanonicalName     string      `json:"canonicalName,omitempty"`
	CanonicalRevision string      `json:"canonicalRevision,omitempty"`
	WorkloadName      string      `json:"workloadName,omitempty"`
	// ApplicationTunnel is "PROXY:15088"-like ("" when unset).
	ApplicationTunnel string `json:"applicationTunnel,omitempty"`
	// Services are the services this workload backs, sorted by key
	// ("namespace/hostname").
	Services              []WDSServicePorts `json:"services,omitempty"`
	AuthorizationPolicies []string          `json:"authorizationPolicies,omitempty"`
	ClusterID             string            `json:"clusterId,omitempty"`
	Locality              *Locality         `json:"locality,omitempty"`
	Extensions            []string          `json:"extensions,omitempty"`
	// Capacity is the relative amount of traffic the workload takes; unset
	// on the wire means 1 (CapacitySet false).
	Capacity       uint32         `json:"capacity"`
	CapacitySet    bool           `json:"capacitySet,omitempty"`
	NativeTunnel   bool           `json:"nativeTunnel,omitempty"`
	TunnelProtocol TunnelProtocol `json:"tunnelProtocol"`
	Status         WorkloadStatus `json:"status"`
	WorkloadType   WorkloadType   `json:"workloadType"`
	NetworkMode    networkMode    `json:"networkMode"`
}

// The workload API's enums are kept as their numbers (a view is smaller,
// and cheaper to build by the ten thousand) and read and written as their
// proto names (JSON both ways); a number newer than this schema reads as
// itself.

// TunnelProtocol is how a workload is reached.
type TunnelProtocol uint8

const (
	TunnelNone            TunnelProtocol = iota // NONE: as is
	TunnelHBONE                                 // HBONE: tunnelled over HTTP/2 (ztunnel, waypoints, split-horizon)
	TunnelLegacyIstioMTLS                       // LEGACY_ISTIO_MTLS: a sidecar's mTLS
)

func (t TunnelProtocol) String() string               { return enumName(tunnelProtocols, uint64(t)) }
func (t TunnelProtocol) MarshalText() ([]byte, error) { return []byte(t.String()), nil }
func (t *TunnelProtocol) UnmarshalText(b []byte) error {
	v, err := enumValue(tunnelProtocols, string(b))
	*t = TunnelProtocol(v)
	return err
}

// WorkloadStatus is whether a workload takes traffic.
type WorkloadStatus uint8

const (
	Healthy   WorkloadStatus = iota // HEALTHY
	Unhealthy                       // UNHEALTHY
)

func (s WorkloadStatus) String() string               { return enumName(workloadStatus, uint64(s)) }
func (s WorkloadStatus) MarshalText() ([]byte, error) { return []byte(s.String()), nil }
func (s *WorkloadStatus) UnmarshalText(b []byte) error {
	v, err := enumValue(workloadStatus, string(b))
	*s = WorkloadStatus(v)
	return err
}

// WorkloadType is what kind of object a workload is (for telemetry).
type WorkloadType uint8

const (
	WorkloadDeployment WorkloadType = iota // DEPLOYMENT
	WorkloadCronJob                        // CRONJOB
	WorkloadPod                            // POD
	WorkloadJob                            // JOB
)

func (t WorkloadType) String() string               { return enumName(workloadTypes, uint64(t)) }
func (t WorkloadType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }
func (t *WorkloadType) UnmarshalText(b []byte) error {
	v, err := enumValue(workloadTypes, string(b))
	*t = WorkloadType(v)
	return err
}

// networkMode is STANDARD or HOST_NETWORK (the address is shared).
type networkMode uint8

const (
	networkStandard networkMode = iota // STANDARD
	networkHost                        // HOST_NETWORK
)

func (m networkMode) String() string               { return enumName(networkModes, uint64(m)) }
func (m networkMode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }
func (m *networkMode) UnmarshalText(b []byte) error {
	v, err := enumValue(networkModes, string(b))
	*m = networkMode(v)
	return err
}

// WDSServicePorts is one entry of a workload's services map.
type WDSServicePorts struct {
	Service string    `json:"service"` // namespace/hostname
	Ports   []WDSPort `json:"ports,omitempty"`
}

// WDSPort is an istio.workload.Port.
type WDSPort struct {
	ServicePort uint32 `json:"servicePort"`
	TargetPort  uint32 `json:"targetPort"`
	// AppProtocol is UNKNOWN, HTTP11, HTTP2, GRPC, TCP or TLS.
	AppProtocol string `json:"appProtocol,omitempty"`
}

// WDSGateway is an istio.workload.GatewayAddress: an IP on a network, or a
// namespaced hostname, with the HBONE port.
type WDSGateway struct {
	Network   string `json:"network,omitempty"`
	Address   string `json:"address,omitempty"`
	Namespace string `json:"namespace,omitempty"` // with Hostname
	Hostname  string `json:"hostname,omitempty"`
	HBONEPort uint32 `json:"hbonePort"`
}

// String is "ADDR:PORT" or "NAMESPACE/HOSTNAME:PORT".
func (g *WDSGateway) String() string {
	if g == nil {
		return ""
	}
	dest := g.Address
	if g.Hostname != "" {
		dest = g.Namespace + "/" + g.Hostname
	}
	return model.HostPort(dest, g.HBONEPort)
}

// WDSNetworkAddress is an istio.workload.NetworkAddress (a service VIP).
type WDSNetworkAddress struct {
	Network string `json:"network,omitempty"`
	// Address is an IP, or a CIDR when the VIP is a range.
	Address string `json:"address"`
}

// WDSService is an istio.workload.Service.
type WDSService struct {
	Name      string              `json:"name"`
	Namespace string              `json:"namespace"`
	Hostname  string              `json:"hostname"`
	Addresses []WDSNetworkAddress `json:"addresses,omitempty"`
	Ports     []WDSPort           `json:"ports,omitempty"`
	// SubjectAltNames are sorted (istiod sends them in set order).
	SubjectAltNames    []string    `json:"subjectAltNames,omitempty"`
	Waypoint           *WDSGateway `json:"waypoint,omitempty"`
	LoadBalancing      string      `json:"loadBalancing,omitempty"`
	IPFamilies         string      `json:"ipFamilies,omitempty"`
	Canonical          bool        `json:"canonical,omitempty"`
	IngressUseWaypoint bool        `json:"ingressUseWaypoint,omitempty"`
	// Visibility is PUBLIC or NAMESPACE.
	Visibility string   `json:"visibility,omitempty"`
	Extensions []string `json:"extensions,omitempty"`
}

// key is the service's WDS resource name, "namespace/hostname".
func (s *WDSService) key() string { return s.Namespace + "/" + s.Hostname }

// WDSAddress is one Address resource: exactly one of Workload and Service.
type WDSAddress struct {
	// Name is the resource name: a workload's UID, or a service's
	// "namespace/hostname".
	Name     string       `json:"name"`
	Workload *WDSWorkload `json:"workload,omitempty"`
	Service  *WDSService  `json:"service,omitempty"`
}

// kind is "workload" or "service".
func (a WDSAddress) kind() string {
	if a.Service != nil {
		return "service"
	}
	return "workload"
}

// Backs reports whether the workload backs the service key
// ("namespace/hostname").
func (w *WDSWorkload) Backs(serviceKey string) bool {
	_, ok := slices.BinarySearchFunc(w.Services, serviceKey, func(s WDSServicePorts, k string) int { return strings.Compare(s.Service, k) })
	return ok
}

// EffectiveCapacity is the capacity ztunnel uses: 1 when unset.
func (w *WDSWorkload) EffectiveCapacity() uint32 {
	if !w.CapacitySet {
		return 1
	}
	return w.Capacity
}

// SplitHorizon reports whether the workload is istiod's stand-in for a
// remote network's pods of one service (no addresses, a network gateway).
func (w *WDSWorkload) SplitHorizon() bool {
	return strings.Contains(w.UID, "/SplitHorizonWorkload/")
}

// enumValue is the number of an enum's proto name (or of the number
// itself, as enumName writes one newer than this schema).
func enumValue(names []string, s string) (uint8, error) {
	if i := slices.Index(names, s); i >= 0 {
		return uint8(i), nil
	}
	n, err := strconv.ParseUint(s, 10, 8)
	if err != nil {
		return 0, fmt.Errorf("%q is none of %s", s, strings.Join(names, ", "))
	}
	return uint8(n), nil
}
