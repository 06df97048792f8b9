package xdsclient

import (
	"fmt"
	"net"
	"strings"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/types/known/structpb"
)

// Defaults of an impersonated ztunnel: the name and namespace of istio's
// ztunnel DaemonSet pods, and the TEST-NET-1 IP of every meshscope identity
// (never a real pod's, so istiod never mistakes meshscope for a workload).
const (
	DefaultZtunnelPod       = "ztunnel-meshscope"
	DefaultZtunnelNamespace = "istio-system"
)

// ZtunnelIdentity is a ztunnel as istiod meets it on an ADS stream.
//
// ztunnel builds its node from its environment (istio/ztunnel
// src/xds/client.rs): node ID "ztunnel~IP~POD.NS~NS.svc.cluster.local" and
// metadata NAME, NAMESPACE, INSTANCE_IPS, NODE_NAME plus every ISTIO_META_*
// variable (the chart sets ISTIO_META_CLUSTER_ID). istiod refuses a ztunnel
// node unless PILOT_ENABLE_AMBIENT is on (pilot/pkg/xds/ads.go
// initConnection) and, on the TLS port, checks the token's namespace and
// service account against the node (auth.go checkConnectionIdentity).
//
// What istiod sends a ztunnel over WDS does not depend on this identity:
// the split horizon is drawn around istiod's own network (the network label
// of its system namespace), not the client's. One identity per control
// plane is enough.
type ZtunnelIdentity struct {
	// Cluster is CLUSTER_ID (default: none, i.e. istiod's "Kubernetes").
	Cluster string
	// IP defaults to DefaultIP; Pod and Namespace to DefaultZtunnelPod and
	// DefaultZtunnelNamespace; NodeName is NODE_NAME (optional).
	IP        string
	Pod       string
	Namespace string
	NodeName  string
	// IstioVersion is ISTIO_VERSION (default DefaultIstioVersion).
	IstioVersion string
	// Metadata adds other metadata, as ISTIO_META_* variables would.
	Metadata map[string]string
}

func (z ZtunnelIdentity) defaulted() ZtunnelIdentity {
	if z.IP == "" {
		z.IP = defaultIP
	}
	if z.Pod == "" {
		z.Pod = DefaultZtunnelPod
	}
	if z.Namespace == "" {
		z.Namespace = DefaultZtunnelNamespace
	}
	if z.IstioVersion == "" {
		z.IstioVersion = defaultIstioVersion
	}
	return z
}

// nodeID is ztunnel's node ID.
func (z ZtunnelIdentity) nodeID() string {
	z = z.defaulted()
	return nodeID("ztunnel", z.IP, z.Pod, z.Namespace)
}

// String names the identity in events: "ztunnel" or "ztunnel@CLUSTER".
func (z ZtunnelIdentity) String() string {
	if z.Cluster == "" {
		return "ztunnel"
	}
	return "ztunnel@" + z.Cluster
}

// Node builds the core.Node of the first request of every stream.
func (z ZtunnelIdentity) Node() (*core.Node, error) {
	z = z.defaulted()
	if net.ParseIP(z.IP) == nil {
		return nil, fmt.Errorf("ztunnel IP %q is not an IP address", z.IP)
	}
	md := map[string]any{}
	for k, v := range z.Metadata {
		md[k] = v
	}
	// ztunnel sends every value as a string.
	md["NAME"] = z.Pod
	md["NAMESPACE"] = z.Namespace
	md["INSTANCE_IPS"] = z.IP
	md["NODE_NAME"] = z.NodeName
	md["ISTIO_VERSION"] = probeVersion(z.IstioVersion)
	if z.Cluster != "" {
		md["CLUSTER_ID"] = z.Cluster
	}
	s, err := structpb.NewStruct(md)
	if err != nil {
		return nil, fmt.Errorf("ztunnel metadata: %w", err)
	}
	return &core.Node{Id: z.nodeID(), Metadata: s, UserAgentName: "meshscope"}, nil
}

// ParseZtunnel reads the ztunnel viewpoint of the commands: "ztunnel" (a
// ztunnel on every control plane: controlPlane is "") or
// "ztunnel@CONTROLPLANE". ok is false for any other viewpoint.
func ParseZtunnel(s string) (controlPlane string, ok bool) {
	s = strings.TrimSpace(s)
	if s == "ztunnel" {
		return "", true
	}
	if cp, found := strings.CutPrefix(s, "ztunnel@"); found && cp != "" {
		return cp, true
	}
	return "", false
}
