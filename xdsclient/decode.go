package xdsclient

import (
	"fmt"
	"strings"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpproxy "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/meshscope/meshscope/model"
)

// The decoded views are small, comparable-by-value summaries: readers (the
// collector, the TUI, `watch`) never touch protos.

// Cluster summarizes a CDS resource.
type Cluster struct {
	Name string `json:"name"`
	// Type is the discovery type: EDS, STATIC, STRICT_DNS, LOGICAL_DNS,
	// ORIGINAL_DST, or the custom cluster type's name.
	Type           string `json:"type"`
	EDSServiceName string `json:"edsServiceName,omitempty"`
	// TLSMode summarizes upstream TLS: "none", "simple", "mutual",
	// "istio-mutual" (Istio's SDS "default" certificate), or "auto" when
	// Istio's transport_socket_matches choose mTLS per endpoint tlsMode.
	TLSMode string `json:"tlsMode"`
	// TransportSocket is the default transport socket's name, if any.
	TransportSocket string `json:"transportSocket,omitempty"`
	// SocketMatches names the transport_socket_matches (e.g. tlsMode-istio).
	SocketMatches []string `json:"socketMatches,omitempty"`
	// LBPolicy is the lb_policy (LEAST_REQUEST, ROUND_ROBIN, RANDOM, ...),
	// or the first load_balancing_policy's type when that is set.
	LBPolicy string `json:"lbPolicy,omitempty"`
	// LocalityWeighted is common_lb_config.locality_weighted_lb_config:
	// only then does Envoy use the endpoints' locality weights.
	LocalityWeighted bool `json:"localityWeighted,omitempty"`
	// PanicThreshold is common_lb_config.healthy_panic_threshold in
	// percent, Envoy's 50 when unset.
	PanicThreshold float64 `json:"panicThreshold"`
}

// envoyDefaultPanicThreshold is Envoy's healthy_panic_threshold default.
const envoyDefaultPanicThreshold = 50

// EDSName is the name EDS knows this cluster by.
func (c Cluster) EDSName() string {
	if c.EDSServiceName != "" {
		return c.EDSServiceName
	}
	return c.Name
}

// Locality is where an endpoint runs.
type Locality struct {
	Region  string `json:"region,omitempty"`
	Zone    string `json:"zone,omitempty"`
	SubZone string `json:"subZone,omitempty"`
}

func (l Locality) String() string {
	if l == (Locality{}) {
		return ""
	}
	return l.Region + "/" + l.Zone + "/" + l.SubZone
}

// Workload is Istio's `istio.workload` endpoint metadata,
// "workload;namespace;canonical-service;canonical-revision;cluster"
// (istiod's AppendLbEndpointMetadata). The workload is the name of what
// runs the pod (its Deployment, from GetWorkloadMetaFromPod), the pod's own
// name only for a pod no controller owns. A gateway endpoint carries only
// the cluster (";;;;cluster2"), which is how a reader tells a rewritten
// endpoint from a real one.
type Workload struct {
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Service   string `json:"service,omitempty"`
	Revision  string `json:"revision,omitempty"`
	Cluster   string `json:"cluster,omitempty"`
}

// parseWorkload splits the `istio.workload` string; missing fields stay empty.
func parseWorkload(s string) Workload {
	var f [5]string
	for i := 0; i < 5; i++ {
		var ok bool
		f[i], s, ok = strings.Cut(s, ";")
		if !ok {
			break
		}
	}
	return Workload{Name: f[0], Namespace: f[1], Service: f[2], Revision: f[3], Cluster: f[4]}
}

// Endpoint is one LbEndpoint of a ClusterLoadAssignment.
type Endpoint struct {
	Address  string   `json:"address"`
	Port     uint32   `json:"port"`
	Weight   uint32   `json:"weight"`
	Health   string   `json:"health"`
	Locality Locality `json:"locality,omitzero"`
	// LocalityWeight and Priority are the load_balancing_weight (0 when
	// unset) and priority of the endpoint's LocalityLbEndpoints.
	LocalityWeight uint32 `json:"localityWeight,omitempty"`
	Priority       uint32 `json:"priority,omitempty"`
	// TLSMode is the `tlsMode` under filter metadata
	// `envoy.transport_socket_match` ("istio" or "disabled"/"").
	TLSMode  string   `json:"tlsMode,omitempty"`
	Workload Workload `json:"workload,omitzero"`
}

// Key identifies an endpoint within its cluster.
func (e Endpoint) Key() string { return model.HostPort(e.Address, e.Port) }

// Gateway reports whether istiod put this endpoint in for a network gateway
// (workload metadata with a cluster but no pod).
func (e Endpoint) Gateway() bool { return e.Workload.Name == "" && e.Workload.Cluster != "" }

// LoadAssignment summarizes an EDS resource.
type LoadAssignment struct {
	Cluster   string     `json:"cluster"`
	Endpoints []Endpoint `json:"endpoints"`
	// raw is the encoded resource every string above points into, and
	// spans locate each endpoint in it (parallel to Endpoints), so the
	// next push of this cluster can reuse unchanged endpoints.
	raw   string
	spans []epSpan
	// shared is the Shared table's entry this view came from, if any:
	// holding the view keeps the entry (share.go).
	shared *sharedLA
}

// Listener summarizes an LDS resource.
type Listener struct {
	Name         string   `json:"name"`
	Address      string   `json:"address,omitempty"`
	Port         uint32   `json:"port,omitempty"`
	Direction    string   `json:"direction,omitempty"`
	FilterChains int      `json:"filterChains"`
	Routes       []string `json:"routes,omitempty"` // RDS names its HTTP connection managers ask for
	// SNIChains are the filter chains that match on server names (SNI),
	// as a gateway's AUTO_PASSTHROUGH listener has one per SNI-DNAT
	// cluster; a sidecar's listeners have few or none.
	SNIChains []SNIChain `json:"sniChains,omitempty"`
}

// SNIChain is one filter chain matching server names: the names and the
// cluster its TCP proxy forwards to ("" when it has none).
type SNIChain struct {
	ServerNames []string `json:"serverNames"`
	Cluster     string   `json:"cluster,omitempty"`
}

// Route summarizes an RDS resource.
type Route struct {
	Name         string        `json:"name"`
	VirtualHosts []VirtualHost `json:"virtualHosts,omitempty"`
}

// VirtualHost is one virtual host of a Route.
type VirtualHost struct {
	Name    string   `json:"name"`
	Domains []string `json:"domains,omitempty"`
	Routes  int      `json:"routes"`
}

// decoded is one resource after decoding: its name and its view.
type decoded struct {
	name string
	view any // Cluster, LoadAssignment, Listener or Route
}

// decodeResource unmarshals one resource of type t. A wrong type URL, bytes
// that do not unmarshal, or a resource without a name is an error: the whole
// response is then NACKed with that reason.
func decodeResource(t Type, a *anypb.Any, prevEDS func(string) *LoadAssignment) (decoded, error) {
	if a == nil {
		return decoded{}, fmt.Errorf("empty resource")
	}
	if a.GetTypeUrl() != t.url() {
		return decoded{}, fmt.Errorf("resource of type %q in a %s response", a.GetTypeUrl(), t)
	}
	switch t {
	case CDS:
		var c cluster.Cluster
		if err := proto.Unmarshal(a.GetValue(), &c); err != nil {
			return decoded{}, fmt.Errorf("cluster: %w", err)
		}
		if c.GetName() == "" {
			return decoded{}, fmt.Errorf("cluster without a name")
		}
		return decoded{c.GetName(), decodeCluster(&c)}, nil
	case EDS:
		if la, err := decodeCLAFast(a.GetValue(), prevEDS); err == nil && la.Cluster != "" {
			return decoded{la.Cluster, la}, nil
		}
		var cla endpoint.ClusterLoadAssignment
		if err := proto.Unmarshal(a.GetValue(), &cla); err != nil {
			return decoded{}, fmt.Errorf("cluster load assignment: %w", err)
		}
		if cla.GetClusterName() == "" {
			return decoded{}, fmt.Errorf("cluster load assignment without a cluster name")
		}
		la, err := decodeLoadAssignment(&cla)
		return decoded{cla.GetClusterName(), la}, err
	case LDS:
		var l listener.Listener
		if err := proto.Unmarshal(a.GetValue(), &l); err != nil {
			return decoded{}, fmt.Errorf("listener: %w", err)
		}
		if l.GetName() == "" {
			return decoded{}, fmt.Errorf("listener without a name")
		}
		return decoded{l.GetName(), decodeListener(&l)}, nil
	case RDS:
		var r route.RouteConfiguration
		if err := proto.Unmarshal(a.GetValue(), &r); err != nil {
			return decoded{}, fmt.Errorf("route configuration: %w", err)
		}
		if r.GetName() == "" {
			return decoded{}, fmt.Errorf("route configuration without a name")
		}
		return decoded{r.GetName(), decodeRoute(&r)}, nil
	}
	return decoded{}, fmt.Errorf("unknown type %q", t)
}

func decodeCluster(c *cluster.Cluster) Cluster {
	out := Cluster{Name: c.GetName(), TLSMode: "none"}
	switch ct := c.GetClusterDiscoveryType().(type) {
	case *cluster.Cluster_Type:
		out.Type = ct.Type.String()
	case *cluster.Cluster_ClusterType:
		out.Type = ct.ClusterType.GetName()
	default:
		out.Type = cluster.Cluster_STATIC.String() // proto default
	}
	out.EDSServiceName = c.GetEdsClusterConfig().GetServiceName()
	out.LBPolicy = c.GetLbPolicy().String()
	if ps := c.GetLoadBalancingPolicy().GetPolicies(); len(ps) > 0 {
		out.LBPolicy = policyName(ps[0].GetTypedExtensionConfig().GetTypedConfig().GetTypeUrl())
	}
	out.LocalityWeighted = c.GetCommonLbConfig().GetLocalityWeightedLbConfig() != nil
	out.PanicThreshold = envoyDefaultPanicThreshold
	if t := c.GetCommonLbConfig().GetHealthyPanicThreshold(); t != nil {
		out.PanicThreshold = t.GetValue()
	}
	if ts := c.GetTransportSocket(); ts != nil {
		out.TransportSocket = ts.GetName()
		out.TLSMode = tlsModeOf(ts)
	}
	for _, m := range c.GetTransportSocketMatches() {
		out.SocketMatches = append(out.SocketMatches, m.GetName())
		if v := m.GetMatch().GetFields()["tlsMode"].GetStringValue(); v == "istio" {
			out.TLSMode = "auto"
		}
	}
	return out
}

// policyName names a load_balancing_policy extension by its config type,
// the way lb_policy names the built-in ones: ".../least_request.v3.LeastRequest"
// is LEAST_REQUEST.
func policyName(typeURL string) string {
	name := typeURL[strings.LastIndex(typeURL, ".")+1:]
	var b strings.Builder
	for i, r := range name {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}

// tlsModeOf reads an UpstreamTlsContext: Istio's ISTIO_MUTUAL asks SDS for the
// secret named "default"; other mutual TLS carries a client certificate.
func tlsModeOf(ts *core.TransportSocket) string {
	a := ts.GetTypedConfig()
	if a == nil || !strings.HasSuffix(a.GetTypeUrl(), "UpstreamTlsContext") {
		return "none"
	}
	var up tlsv3.UpstreamTlsContext
	if proto.Unmarshal(a.GetValue(), &up) != nil {
		return "tls"
	}
	common := up.GetCommonTlsContext()
	for _, s := range common.GetTlsCertificateSdsSecretConfigs() {
		if s.GetName() == "default" {
			return "istio-mutual"
		}
	}
	if len(common.GetTlsCertificates()) > 0 || len(common.GetTlsCertificateSdsSecretConfigs()) > 0 {
		return "mutual"
	}
	return "simple"
}

func decodeLoadAssignment(cla *endpoint.ClusterLoadAssignment) (LoadAssignment, error) {
	// lb_endpoints, or the deprecated LbEndpointList form of the same.
	lbsOf := func(l *endpoint.LocalityLbEndpoints) []*endpoint.LbEndpoint {
		if lbs := l.GetLbEndpoints(); len(lbs) > 0 {
			return lbs
		}
		//lint:ignore SA1019 control planes may still send the deprecated LbEndpointList form
		return l.GetLoadBalancerEndpoints().GetLbEndpoints()
	}
	n := 0
	for _, l := range cla.GetEndpoints() {
		n += len(lbsOf(l))
	}
	la := LoadAssignment{Cluster: cla.GetClusterName(), Endpoints: make([]Endpoint, 0, n)}
	for _, l := range cla.GetEndpoints() {
		loc := Locality{Region: l.GetLocality().GetRegion(), Zone: l.GetLocality().GetZone(), SubZone: l.GetLocality().GetSubZone()}
		for _, lb := range lbsOf(l) {
			ep := Endpoint{Locality: loc, LocalityWeight: l.GetLoadBalancingWeight().GetValue(), Priority: l.GetPriority(), Weight: 1, Health: lb.GetHealthStatus().String()}
			if w := lb.GetLoadBalancingWeight(); w != nil {
				ep.Weight = w.GetValue()
			}
			sa := lb.GetEndpoint().GetAddress().GetSocketAddress()
			if sa == nil {
				// Istio sends only socket addresses (pipes are not endpoints
				// a mesh can route to); anything else is a bad resource.
				return la, fmt.Errorf("cluster %s: endpoint without a socket address", cla.GetClusterName())
			}
			ep.Address, ep.Port = sa.GetAddress(), sa.GetPortValue()
			fm := lb.GetMetadata().GetFilterMetadata()
			ep.TLSMode = fm["envoy.transport_socket_match"].GetFields()["tlsMode"].GetStringValue()
			if w := fm["istio"].GetFields()["workload"].GetStringValue(); w != "" {
				ep.Workload = parseWorkload(w)
			}
			la.Endpoints = append(la.Endpoints, ep)
		}
	}
	return la, nil
}

func decodeListener(l *listener.Listener) Listener {
	out := Listener{Name: l.GetName(), FilterChains: len(l.GetFilterChains()), Direction: l.GetTrafficDirection().String()}
	if sa := l.GetAddress().GetSocketAddress(); sa != nil {
		out.Address, out.Port = sa.GetAddress(), sa.GetPortValue()
	}
	seen := map[string]bool{}
	chains := l.GetFilterChains()
	if dc := l.GetDefaultFilterChain(); dc != nil {
		chains = append(chains[:len(chains):len(chains)], dc)
	}
	for _, fc := range chains {
		if names := fc.GetFilterChainMatch().GetServerNames(); len(names) > 0 {
			out.SNIChains = append(out.SNIChains, SNIChain{ServerNames: names, Cluster: tcpProxyCluster(fc)})
		}
		for _, f := range fc.GetFilters() {
			a := f.GetTypedConfig()
			if a == nil || !strings.HasSuffix(a.GetTypeUrl(), "HttpConnectionManager") {
				continue
			}
			var m hcm.HttpConnectionManager
			if proto.Unmarshal(a.GetValue(), &m) != nil {
				continue
			}
			if name := m.GetRds().GetRouteConfigName(); name != "" && !seen[name] {
				seen[name] = true
				out.Routes = append(out.Routes, name)
			}
		}
	}
	return out
}

// tcpProxyCluster is the cluster a filter chain's TCP proxy forwards to.
func tcpProxyCluster(fc *listener.FilterChain) string {
	for _, f := range fc.GetFilters() {
		a := f.GetTypedConfig()
		if a == nil || !strings.HasSuffix(a.GetTypeUrl(), ".TcpProxy") {
			continue
		}
		var tp tcpproxy.TcpProxy
		if proto.Unmarshal(a.GetValue(), &tp) == nil {
			return tp.GetCluster()
		}
	}
	return ""
}

func decodeRoute(r *route.RouteConfiguration) Route {
	out := Route{Name: r.GetName()}
	for _, vh := range r.GetVirtualHosts() {
		out.VirtualHosts = append(out.VirtualHosts, VirtualHost{Name: vh.GetName(), Domains: vh.GetDomains(), Routes: len(vh.GetRoutes())})
	}
	return out
}
