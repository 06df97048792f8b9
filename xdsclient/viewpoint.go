package xdsclient

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
)

// NodeType is the kind of proxy impersonated: a sidecar or a gateway (router).
type NodeType string

// Node types istiod knows (the first field of the node ID).
const (
	Sidecar NodeType = "sidecar"
	Router  NodeType = "router"
)

// Defaults for the parts of an impersonated proxy that a viewpoint leaves
// open. The IP is from TEST-NET-1 (RFC 5737): a valid IPv4 address (istiod
// rejects a node ID without one and picks gateways by IP family) that can
// never be a real pod's IP, so istiod never mistakes meshscope for a workload.
const (
	defaultIP        = "192.0.2.10"
	DefaultPodName   = "meshscope-probe"
	DefaultNamespace = "default"
)

// PodRef names a real Pod whose identity a viewpoint copies (`pod:NS/NAME@CLUSTER`).
type PodRef struct {
	Namespace, Name, Cluster string
}

func (p PodRef) String() string {
	s := "pod:" + p.Namespace + "/" + p.Name
	if p.Cluster != "" {
		s += "@" + p.Cluster
	}
	return s
}

// Viewpoint is "a proxy here": where in the mesh meshscope pretends to be.
type Viewpoint struct {
	// Cluster is the proxy's CLUSTER_ID: the registry it claims to live in.
	Cluster string
	// Network is the proxy's NETWORK. Empty with NoNetwork false means "not
	// decided yet" (see Resolve); NoNetwork true means the proxy sends no
	// NETWORK at all, which makes istiod route every endpoint of a network
	// with a gateway through that gateway (istiod's forceGateway in EndpointsByNetworkFilter).
	Network   string
	NoNetwork bool
	Namespace string
	Labels    map[string]string
	NodeType  NodeType
	// IP, PodName and ServiceAccount default to DefaultIP, DefaultPodName, "".
	IP             string
	PodName        string
	ServiceAccount string
	// ControlPlane names the istiod to ask (the cluster it is primary of);
	// empty means "the one serving Cluster", decided by the caller.
	ControlPlane string
	// RequestedNetworkView limits the networks istiod sends (REQUESTED_NETWORK_VIEW).
	RequestedNetworkView []string
	// Metadata holds extra node metadata (e.g. copied ISTIO_META_* env); its
	// keys override nothing that the fields above set.
	Metadata map[string]string
	// Pod is set when the viewpoint is a real Pod still to be read
	// (ParseViewpoint of `pod:...`); ViewpointFromPod fills the rest.
	Pod *PodRef
}

// String renders the viewpoint in the syntax ParseViewpoint reads.
func (v Viewpoint) String() string {
	if v.Pod != nil && v.IP == "" {
		return v.Pod.String()
	}
	net := v.Network
	if v.NoNetwork {
		net = "none"
	}
	s := ""
	switch {
	case v.Cluster != "" && net != "":
		s = v.Cluster + "/" + net
	case v.Cluster != "":
		s = v.Cluster
	case net != "":
		s = net
	default:
		s = "none"
	}
	if v.Pod != nil {
		s = v.Pod.String() + "(" + s + ")"
	}
	if v.ControlPlane != "" {
		s += "@" + v.ControlPlane
	}
	return s
}

// Known is what the caller knows about the mesh, used to tell a bare cluster
// name from a bare network name. Clusters maps a cluster ID to its default
// network ("" when unknown); Networks maps a network to its clusters.
type Known struct {
	Clusters map[string]string
	Networks map[string][]string
}

// ParseViewpoint reads a viewpoint from the command line (any form may end
// in @CONTROLPLANE to ask one istiod among several, e.g.
// cluster1/network1@cluster2 in a multi-primary mesh):
//
//	network1            a proxy in network1 (its cluster: the only cluster of network1, if known)
//	cluster1            a proxy in cluster1, on cluster1's default network if known
//	cluster1/network1   explicit cluster and network
//	cluster1/none       a proxy in cluster1 that sends no NETWORK
//	none                no cluster, no NETWORK
//	cluster:X, network:X  say explicitly what a bare name is
//	pod:NS/NAME@CLUSTER a real Pod's identity (resolve with ViewpointFromPod)
//
// The rule for a bare name X: if known only as a cluster it is a cluster; if
// known only as a network it is a network; known as both, or as neither, is
// an error that asks for the explicit form, so a typo never silently becomes
// a different view. The parsed viewpoint is a sidecar in DefaultNamespace.
func ParseViewpoint(s string, known Known) (Viewpoint, error) {
	s = strings.TrimSpace(s)
	vp := Viewpoint{NodeType: Sidecar, Namespace: DefaultNamespace}
	if s == "" {
		return vp, fmt.Errorf("empty viewpoint: want NETWORK, CLUSTER, CLUSTER/NETWORK, CLUSTER/none or pod:NS/NAME@CLUSTER")
	}
	// No cluster, network, namespace or pod name holds a control
	// character; one typed by accident would otherwise be echoed into the
	// hints below and break the line.
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return vp, fmt.Errorf("viewpoint %q: a name cannot contain control characters", s)
	}
	// Nor a space: trimming one part but not another would make a viewpoint
	// that String() writes back differently ("cluster: 0" was the cluster
	// " 0"), so a space inside is refused with the form meant.
	if strings.IndexFunc(s, unicode.IsSpace) >= 0 {
		return vp, fmt.Errorf("viewpoint %q: a name cannot contain spaces (write %s)", s, strings.Join(strings.Fields(s), ""))
	}
	if rest, ok := strings.CutPrefix(s, "pod:"); ok {
		// (@ in a pod viewpoint names the pod's cluster, not a control plane.)
		ref, err := parsePodRef(rest)
		if err != nil {
			return vp, fmt.Errorf("viewpoint %q: %w", s, err)
		}
		vp.Pod = &ref
		vp.Cluster = ref.Cluster
		vp.Namespace = ref.Namespace
		return vp, nil
	}
	// VIEWPOINT@CONTROLPLANE: the same proxy asked of one control plane
	// among several (multi-primary).
	if v, cp, ok := strings.Cut(s, "@"); ok {
		if cp == "" || v == "" {
			return vp, fmt.Errorf("viewpoint %q: want VIEWPOINT@CONTROLPLANE", s)
		}
		inner, err := ParseViewpoint(v, known)
		if err != nil {
			return inner, err
		}
		inner.ControlPlane = cp
		return inner, nil
	}
	if s == "none" {
		vp.NoNetwork = true
		return vp, nil
	}
	if c, n, ok := strings.Cut(s, "/"); ok {
		if c == "" || n == "" || strings.Contains(n, "/") {
			return vp, fmt.Errorf("viewpoint %q: want CLUSTER/NETWORK or CLUSTER/none", s)
		}
		vp.Cluster = c
		if n == "none" {
			vp.NoNetwork = true
		} else {
			vp.Network = n
		}
		return vp, nil
	}
	if c, ok := strings.CutPrefix(s, "cluster:"); ok && c != "" {
		vp.Cluster = c
		vp.Network = known.Clusters[c]
		return vp, nil
	}
	if n, ok := strings.CutPrefix(s, "network:"); ok && n != "" {
		vp.Network = n
		vp.Cluster = onlyCluster(known.Networks[n])
		return vp, nil
	}
	_, isCluster := known.Clusters[s]
	_, isNetwork := known.Networks[s]
	switch {
	case isCluster && isNetwork:
		return vp, fmt.Errorf("viewpoint %q is both a cluster and a network: write cluster:%s, network:%s or CLUSTER/NETWORK", s, s, s)
	case isCluster:
		vp.Cluster = s
		vp.Network = known.Clusters[s]
	case isNetwork:
		vp.Network = s
		vp.Cluster = onlyCluster(known.Networks[s])
	default:
		return vp, fmt.Errorf("viewpoint %q is neither a known cluster (%s) nor a known network (%s): write CLUSTER/NETWORK, cluster:%s or network:%s",
			s, listOrNone(known.Clusters), listOrNone(known.Networks), s, s)
	}
	return vp, nil
}

func onlyCluster(cs []string) string {
	if len(cs) == 1 {
		return cs[0]
	}
	return ""
}

func listOrNone[V any](m map[string]V) string {
	if len(m) == 0 {
		return "none known"
	}
	return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}

func parsePodRef(s string) (PodRef, error) {
	var ref PodRef
	if at := strings.LastIndex(s, "@"); at >= 0 {
		ref.Cluster = s[at+1:]
		s = s[:at]
		if ref.Cluster == "" {
			return ref, fmt.Errorf("empty cluster after '@'")
		}
	}
	ns, name, ok := strings.Cut(s, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return ref, fmt.Errorf("want NAMESPACE/POD[@CLUSTER]")
	}
	ref.Namespace, ref.Name = ns, name
	return ref, nil
}

// ParsePodRef reads NAMESPACE/POD[@CLUSTER] (the --as-pod syntax).
func ParsePodRef(s string) (PodRef, error) { return parsePodRef(strings.TrimPrefix(s, "pod:")) }
