package xdsclient

import (
	"encoding/json"
	"fmt"
	"net"
	"strings"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/meshscope/meshscope/model"
)

// defaultIstioVersion is the ISTIO_VERSION meshscope claims when the
// viewpoint does not copy one from a real pod. istiod gates some features on
// the proxy's version; claiming a current one gets the current behaviour.
const defaultIstioVersion = "1.31.0"

// probeSuffix marks the ISTIO_VERSION of every proxy meshscope
// impersonates ("1.31.0-meshscope"), so that istiod's /debug/syncz, which
// shows a proxy's ID, type, cluster and version only, tells meshscope's
// probes from the mesh's proxies — even a probe that copies a real pod's
// name. istiod reads a version through a regexp that stops at the suffix
// (ParseIstioVersion): what it sends does not change.
const probeSuffix = "-meshscope"

// probeVersion is the ISTIO_VERSION sent for a proxy of version v.
func probeVersion(v string) string {
	if strings.HasSuffix(v, probeSuffix) {
		return v
	}
	return v + probeSuffix
}

// IsProbeVersion says whether an ISTIO_VERSION (as syncz shows it) is a
// meshscope probe's.
func IsProbeVersion(v string) bool { return strings.HasSuffix(v, probeSuffix) }

// nodeMetadata is the part of istiod's NodeMetadata
// (pkg/model/proxy.go) that decides what a proxy is sent. The JSON
// names are istiod's. List-valued fields (INSTANCE_IPS,
// REQUESTED_NETWORK_VIEW) are istiod "StringList"s: one comma-separated
// string, not a JSON array.
type nodeMetadata struct {
	IstioVersion         string            `json:"ISTIO_VERSION"`
	ClusterID            string            `json:"CLUSTER_ID,omitempty"`
	Network              string            `json:"NETWORK,omitempty"`
	Namespace            string            `json:"NAMESPACE,omitempty"`
	Labels               map[string]string `json:"LABELS,omitempty"`
	InstanceIPs          string            `json:"INSTANCE_IPS,omitempty"`
	ServiceAccount       string            `json:"SERVICE_ACCOUNT,omitempty"`
	MeshID               string            `json:"MESH_ID,omitempty"`
	RequestedNetworkView string            `json:"REQUESTED_NETWORK_VIEW,omitempty"`
	WorkloadName         string            `json:"WORKLOAD_NAME,omitempty"`
	// ProxyConfig is present (even empty) because istiod's syncz and
	// proxy-status count a node as a proxy only when it has one.
	ProxyConfig map[string]any `json:"PROXY_CONFIG"`
	// Extra carries other metadata (copied ISTIO_META_* env) verbatim.
	Extra map[string]string `json:"-"`
}

// Defaulted fills the identity fields a viewpoint leaves open.
func (v Viewpoint) Defaulted() Viewpoint {
	if v.NodeType == "" {
		v.NodeType = Sidecar
	}
	if v.IP == "" {
		v.IP = defaultIP
	}
	if v.Namespace == "" {
		v.Namespace = DefaultNamespace
	}
	if v.PodName == "" {
		v.PodName = DefaultPodName
	}
	return v
}

// NodeID is istiod's TYPE~IP~POD.NAMESPACE~NAMESPACE.svc.cluster.local.
func (v Viewpoint) NodeID() string {
	v = v.Defaulted()
	return nodeID(string(v.NodeType), v.IP, v.PodName, v.Namespace)
}

// nodeID is the node ID istiod parses (ParseServiceNodeWithMetadata):
// TYPE~IP~POD.NAMESPACE~NAMESPACE.svc.cluster.local, for a sidecar, a
// router and a ztunnel alike.
func nodeID(typ, ip, pod, ns string) string {
	return typ + "~" + ip + "~" + pod + "." + ns + "~" + ns + "." + model.DNSDomain
}

// validate reports what istiod would refuse in this identity.
func (v Viewpoint) validate() error {
	v = v.Defaulted()
	if v.NodeType != Sidecar && v.NodeType != Router {
		return fmt.Errorf("node type %q: want sidecar or router", v.NodeType)
	}
	if net.ParseIP(v.IP) == nil {
		return fmt.Errorf("node IP %q is not an IP address", v.IP)
	}
	if v.Pod != nil && v.IP == defaultIP {
		return fmt.Errorf("viewpoint %s names a pod that has not been read yet (use ViewpointFromPod)", v.Pod)
	}
	if v.NoNetwork && v.Network != "" {
		return fmt.Errorf("viewpoint has network %q and 'none' at once", v.Network)
	}
	return nil
}

// nodeMetadata returns the metadata istiod will read for this viewpoint.
func (v Viewpoint) nodeMetadata() nodeMetadata {
	v = v.Defaulted()
	md := nodeMetadata{
		IstioVersion:   defaultIstioVersion,
		ClusterID:      v.Cluster,
		Network:        v.Network,
		Namespace:      v.Namespace,
		Labels:         v.Labels,
		InstanceIPs:    v.IP,
		ServiceAccount: v.ServiceAccount,
		ProxyConfig:    map[string]any{},
		Extra:          map[string]string{},
	}
	if v.NoNetwork {
		md.Network = ""
	}
	if len(v.RequestedNetworkView) > 0 {
		md.RequestedNetworkView = strings.Join(v.RequestedNetworkView, ",")
	}
	// Copied metadata fills what the viewpoint does not say itself, but the
	// viewpoint's network and cluster always win: they are the point of it.
	for k, val := range v.Metadata {
		switch k {
		case "ISTIO_VERSION":
			md.IstioVersion = val
		case "MESH_ID":
			md.MeshID = val
		case "WORKLOAD_NAME":
			md.WorkloadName = val
		case "INSTANCE_IPS":
			md.InstanceIPs = val
		case "CLUSTER_ID":
			if md.ClusterID == "" {
				md.ClusterID = val
			}
		case "NETWORK":
			if md.Network == "" && !v.NoNetwork {
				md.Network = val
			}
		case "REQUESTED_NETWORK_VIEW":
			if md.RequestedNetworkView == "" {
				md.RequestedNetworkView = val
			}
		case "NAMESPACE", "LABELS", "SERVICE_ACCOUNT", "PROXY_CONFIG":
			// set from the viewpoint's own fields
		default:
			md.Extra[k] = val
		}
	}
	md.IstioVersion = probeVersion(md.IstioVersion)
	return md
}

// MarshalJSON flattens Extra next to the named fields, as istiod's
// metadata is one flat JSON object.
func (m nodeMetadata) MarshalJSON() ([]byte, error) {
	type plain nodeMetadata
	b, err := json.Marshal(plain(m))
	if err != nil || len(m.Extra) == 0 {
		return b, err
	}
	all := map[string]any{}
	for k, v := range m.Extra {
		all[k] = v
	}
	if err := json.Unmarshal(b, &all); err != nil { // named fields win over Extra
		return nil, err
	}
	return json.Marshal(all)
}

// toStruct encodes the metadata as the google.protobuf.Struct of core.Node.
func (m nodeMetadata) toStruct() (*structpb.Struct, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	return structpb.NewStruct(raw)
}

// Node builds the core.Node sent in the first request of every stream.
func (v Viewpoint) Node() (*core.Node, error) {
	if err := v.validate(); err != nil {
		return nil, err
	}
	md, err := v.nodeMetadata().toStruct()
	if err != nil {
		return nil, fmt.Errorf("node metadata: %w", err)
	}
	return &core.Node{
		Id:            v.NodeID(),
		Metadata:      md,
		UserAgentName: "meshscope",
	}, nil
}
