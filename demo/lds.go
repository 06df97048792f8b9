package demo

import (
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	corsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/cors/v3"
	faultv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/fault/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	httpinspectorv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/http_inspector/v3"
	originaldstv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/original_dst/v3"
	tlsinspectorv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/tls_inspector/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	previoushostsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/retry/host/previous_hosts/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/wellknown"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/meshscope/meshscope/model"
)

// The demo's LDS and RDS, shaped like what istiod sends a sidecar
// (pilot/pkg/networking/core: listener.go, listener_builder.go,
// listener_inbound.go, httproute.go) under a default install: no Sidecar,
// VirtualService, DestinationRule or EnvoyFilter; outboundTrafficPolicy
// ALLOW_ANY; PERMISSIVE mTLS; iptables REDIRECT interception. The proxy is
// impersonated, so it has no workload of its own and gets no inbound chains
// for service ports, only the passthrough ones. istiod's Istio-specific
// filters (metadata exchange, stats, ALPN) and access logs are left out: their
// configs are Istio protos, and no reader of the demo looks at them.

const (
	wildcardIP = "0.0.0.0"
	// istiod's virtual listeners: where iptables redirects outbound (15001)
	// and inbound (15006) traffic.
	virtualOutboundName = "virtualOutbound"
	virtualInboundName  = "virtualInbound"
	proxyListenPort     = 15001
	proxyInboundPort    = 15006

	passthroughCluster        = "PassthroughCluster"
	blackHoleCluster          = "BlackHoleCluster"
	inboundPassthroughCluster = "InboundPassthroughCluster"
)

// ALPNs istiod matches on (listener.go, HTTP/1.0 off as by default).
var (
	plaintextHTTPALPNs  = []string{"http/1.1", "h2c"}
	mtlsHTTPALPNs       = []string{"istio-http/1.0", "istio-http/1.1", "istio-h2"}
	mtlsTCPWithMxcALPNs = []string{"istio-peer-exchange", "istio"}
)

// listenerProtocol is how istiod builds an outbound listener for a port
// (istionetworking.ModelProtocolToListenerProtocol).
type listenerProtocol int

const (
	protoNone listenerProtocol = iota // UDP: no outbound listener
	protoHTTP
	protoTCP
	protoAuto // protocol sniffing: a TCP and an HTTP chain
)

// protocolOf reads a Service port's protocol the way istiod does
// (pkg/config/kube ConvertProtocol): UDP, else appProtocol, else the port
// name's prefix before '-'; unknown names are sniffed, except on the
// well-known TCP ports. tls reports TLS/HTTPS (matched by SNI without a VIP).
func protocolOf(p model.ServicePort) (lp listenerProtocol, tls bool) {
	if strings.EqualFold(p.Protocol, "UDP") {
		return protoNone, false
	}
	name := p.Name
	if p.AppProtocol != "" {
		name = p.AppProtocol
		switch name {
		case "kubernetes.io/h2c", "kubernetes.io/ws":
			return protoHTTP, false
		case "kubernetes.io/wss":
			return protoTCP, true
		}
	}
	name = strings.ToLower(name)
	if strings.HasPrefix(name, "grpc-web") {
		return protoHTTP, false
	}
	if i := strings.IndexByte(name, '-'); i >= 0 {
		name = name[:i]
	}
	switch name {
	case "http", "http2", "grpc", "http_proxy":
		return protoHTTP, false
	case "https", "tls":
		return protoTCP, true
	case "tcp", "mongo", "redis", "mysql":
		return protoTCP, false
	case "udp":
		return protoNone, false
	}
	switch p.Port {
	case 25, 53, 3306, 27017: // SMTP, DNS, MySQL, MongoDB
		return protoTCP, false
	}
	return protoAuto, false
}

// serviceAddress is the VIP istiod listens on for a service, seen from a
// proxy in cluster (model.Service.GetAddressForProxy): the ClusterIP in the
// proxy's own cluster, else the merged service's default address (the
// first cluster's ClusterIP), else 0.0.0.0.
func serviceAddress(svc *model.Service, cluster string) string {
	vip := func(sic *model.ServiceInCluster) string {
		if sic == nil || sic.NoService || net.ParseIP(sic.ClusterIP) == nil {
			return "" // none, or headless ("None")
		}
		return sic.ClusterIP
	}
	if ip := vip(svc.Clusters[cluster]); ip != "" {
		return ip
	}
	ids := make([]string, 0, len(svc.Clusters))
	for id := range svc.Clusters {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if ip := vip(svc.Clusters[id]); ip != "" {
			return ip
		}
	}
	return wildcardIP
}

// outboundCluster is istiod's outbound cluster name, as in CDS.
func outboundCluster(port int32, hostname string) string {
	return "outbound|" + strconv.Itoa(int(port)) + "||" + hostname
}

// chainOpt is one filter chain of an outbound listener: an HTTP chain
// (rds set, matched by plaintext HTTP ALPN) or a TCP chain (tcp_proxy to
// cluster, matched by SNI or matching everything).
type chainOpt struct {
	rds     string
	sni     string
	cluster string
}

func (c chainOpt) matchAll() bool { return c.rds == "" && c.sni == "" }

// conflicts: istiod keeps only the first of two chains with the same match.
func (c chainOpt) conflicts(o chainOpt) bool {
	return (c.rds == "") == (o.rds == "") && c.sni == o.sni
}

// outboundEntry is istiod's outboundListenerEntry: one listener being built.
type outboundEntry struct {
	bind   string
	port   int32
	proto  listenerProtocol // protoTCP or protoAuto (HTTP on 0.0.0.0 counts as sniffed)
	chains []chainOpt
}

func (e *outboundEntry) merge(in []chainOpt) {
next:
	for _, c := range in {
		for _, have := range e.chains {
			if have.conflicts(c) {
				continue next
			}
		}
		e.chains = append(e.chains, c)
	}
}

// listenersAndRoutes builds a sidecar's LDS and RDS: one outbound listener
// per port (HTTP on 0.0.0.0_<port> with RDS route "<port>"; TCP and TLS on
// <VIP>_<port>; sniffed ports on <VIP>_<port> with route
// "<hostname>:<port>"), virtualOutbound and virtualInbound; and the route
// configurations those listeners name. Output is sorted by name, so the same
// snapshot and view give the same resources.
func listenersAndRoutes(snap *model.Snapshot, v view) (lds, rds []types.Resource) {
	entries := map[string]*outboundEntry{}
	for _, svc := range snap.Services {
		for _, port := range svc.Ports {
			addOutbound(entries, svc, port, serviceAddress(svc, v.proxy.Cluster))
		}
	}
	names := make([]string, 0, len(entries))
	for name := range entries {
		names = append(names, name)
	}
	sort.Strings(names)
	routeNames := map[string]bool{}
	for _, name := range names {
		e := entries[name]
		lds = append(lds, outboundListener(name, e))
		for _, c := range e.chains {
			if c.rds != "" {
				routeNames[c.rds] = true
			}
		}
	}
	lds = append(lds, virtualOutboundListener(), virtualInboundListener())
	sort.Slice(lds, func(i, j int) bool {
		return lds[i].(*listenerv3.Listener).GetName() < lds[j].(*listenerv3.Listener).GetName()
	})

	rnames := make([]string, 0, len(routeNames))
	for name := range routeNames {
		rnames = append(rnames, name)
	}
	sort.Strings(rnames)
	for _, name := range rnames {
		rds = append(rds, routeConfig(snap, v, name))
	}
	return lds, rds
}

// addOutbound is buildSidecarOutboundListener for one service port, with its
// conflict rules: HTTP ports share 0.0.0.0_<port> (their services are
// virtual hosts of one route); a TCP chain joins an existing listener unless
// one with the same match is there; HTTP and TCP on one listener make it
// sniffed.
func addOutbound(entries map[string]*outboundEntry, svc *model.Service, port model.ServicePort, addr string) {
	lp, tls := protocolOf(port)
	if lp == protoNone {
		return
	}
	cluster := outboundCluster(port.Port, svc.Hostname)
	bind := addr
	var chains []chainOpt
	switch lp {
	case protoHTTP:
		if port.Port == proxyListenPort || port.Port == proxyInboundPort {
			return // would take the virtual listeners' port
		}
		bind = wildcardIP
		chains = []chainOpt{{rds: strconv.Itoa(int(port.Port))}}
	case protoTCP:
		c := chainOpt{cluster: cluster}
		if tls && addr == wildcardIP {
			c.sni = svc.Hostname // no VIP to tell services apart
		}
		chains = []chainOpt{c}
	case protoAuto:
		route := strconv.Itoa(int(port.Port))
		if addr != wildcardIP {
			route = svc.Hostname + ":" + route // a route of its own
		}
		chains = []chainOpt{{cluster: cluster}, {rds: route}}
	}
	name := bind + "_" + strconv.Itoa(int(port.Port))
	cur := entries[name]
	if cur == nil {
		p := lp
		if lp == protoHTTP {
			p = protoAuto // istiod: HTTP on 0.0.0.0 is matched by ALPN, next to the passthrough chain
		}
		entries[name] = &outboundEntry{bind: bind, port: port.Port, proto: p, chains: chains}
		return
	}
	switch {
	case lp == protoTCP:
		cur.merge(chains)
	case cur.proto == protoTCP: // HTTP or sniffed over TCP: merge, now sniffed
		cur.merge(chains)
		cur.proto = protoAuto
	}
	// HTTP or sniffed over sniffed: the listener already exists.
}

func outboundListener(name string, e *outboundEntry) *listenerv3.Listener {
	l := &listenerv3.Listener{
		Name:                             name,
		Address:                          socketAddress(e.bind, uint32(e.port)),
		TrafficDirection:                 corev3.TrafficDirection_OUTBOUND,
		BindToPort:                       wrapperspb.Bool(false),
		ContinueOnListenerFiltersTimeout: true,
		ListenerFiltersTimeout:           durationpb.New(0),
	}
	var sni, http bool
	var def *listenerv3.FilterChain
	for _, c := range e.chains {
		fc := &listenerv3.FilterChain{TransportSocketConnectTimeout: durationpb.New(15 * time.Second)}
		switch {
		case c.rds != "":
			http = true
			fc.FilterChainMatch = &listenerv3.FilterChainMatch{TransportProtocol: "raw_buffer", ApplicationProtocols: plaintextHTTPALPNs}
			fc.Filters = []*listenerv3.Filter{httpConnectionManager("outbound_"+name, c.rds)}
		default:
			fc.Filters = []*listenerv3.Filter{tcpProxy(c.cluster, c.cluster)}
			if c.sni != "" {
				sni = true
				fc.FilterChainMatch = &listenerv3.FilterChainMatch{ServerNames: []string{c.sni}}
			}
		}
		if c.matchAll() {
			def = fc
			continue
		}
		l.FilterChains = append(l.FilterChains, fc)
	}
	switch {
	case def != nil && len(l.FilterChains) == 0:
		l.FilterChains = []*listenerv3.FilterChain{def}
	case def != nil:
		l.DefaultFilterChain = def
	default:
		l.DefaultFilterChain = &listenerv3.FilterChain{
			Name:             "PassthroughFilterChain",
			FilterChainMatch: &listenerv3.FilterChainMatch{},
			Filters:          []*listenerv3.Filter{tcpProxy(passthroughCluster, passthroughCluster)},
		}
	}
	if sni {
		l.ListenerFilters = append(l.ListenerFilters, listenerFilter(wellknown.TLSInspector, &tlsinspectorv3.TlsInspector{}))
	}
	if http {
		l.ListenerFilters = append(l.ListenerFilters, listenerFilter(wellknown.HTTPInspector, &httpinspectorv3.HttpInspector{}))
	}
	return l
}

// virtualOutboundListener is 0.0.0.0_15001, where iptables sends outbound
// traffic: use_original_dst hands each connection to the listener of its
// original destination; what none takes passes through (ALLOW_ANY).
func virtualOutboundListener() *listenerv3.Listener {
	return &listenerv3.Listener{
		Name:             virtualOutboundName,
		Address:          socketAddress(wildcardIP, proxyListenPort),
		UseOriginalDst:   wrapperspb.Bool(true),
		TrafficDirection: corev3.TrafficDirection_OUTBOUND,
		FilterChains: []*listenerv3.FilterChain{
			{
				Name:             "virtualOutbound-blackhole",
				FilterChainMatch: &listenerv3.FilterChainMatch{DestinationPort: wrapperspb.UInt32(proxyListenPort)},
				Filters:          []*listenerv3.Filter{tcpProxy(blackHoleCluster, blackHoleCluster)},
			},
			{
				Name:    "virtualOutbound-catchall-tcp",
				Filters: []*listenerv3.Filter{tcpProxy(passthroughCluster, passthroughCluster)},
			},
		},
	}
}

// virtualInboundListener is 0.0.0.0_15006, where iptables sends inbound
// traffic. With no workload behind the impersonated proxy it holds only
// istiod's passthrough chains: the blackhole for 15006 itself, then the five
// PERMISSIVE chains (mTLS HTTP, plaintext HTTP, mTLS TCP, plaintext TCP, TLS).
func virtualInboundListener() *listenerv3.Listener {
	httpChain := func(match *listenerv3.FilterChainMatch, mtls []string) *listenerv3.FilterChain {
		fc := &listenerv3.FilterChain{
			Name:             "virtualInbound-catchall-http",
			FilterChainMatch: match,
			Filters:          []*listenerv3.Filter{inboundPassthroughHCM()},
		}
		if mtls != nil {
			fc.TransportSocket = istioMTLS(mtls)
		}
		return fc
	}
	tcpChain := func(match *listenerv3.FilterChainMatch, mtls []string) *listenerv3.FilterChain {
		fc := &listenerv3.FilterChain{
			Name:             virtualInboundName,
			FilterChainMatch: match,
			Filters:          []*listenerv3.Filter{tcpProxy(inboundPassthroughCluster, inboundPassthroughCluster)},
		}
		if mtls != nil {
			fc.TransportSocket = istioMTLS(mtls)
		}
		return fc
	}
	return &listenerv3.Listener{
		Name:                             virtualInboundName,
		Address:                          socketAddress(wildcardIP, proxyInboundPort),
		TrafficDirection:                 corev3.TrafficDirection_INBOUND,
		ContinueOnListenerFiltersTimeout: true,
		ListenerFiltersTimeout:           durationpb.New(0),
		ListenerFilters: []*listenerv3.ListenerFilter{
			listenerFilter(wellknown.OriginalDestination, &originaldstv3.OriginalDst{}),
			listenerFilter(wellknown.TLSInspector, &tlsinspectorv3.TlsInspector{}),
			listenerFilter(wellknown.HTTPInspector, &httpinspectorv3.HttpInspector{}),
		},
		FilterChains: []*listenerv3.FilterChain{
			{
				Name:             "virtualInbound-blackhole",
				FilterChainMatch: &listenerv3.FilterChainMatch{DestinationPort: wrapperspb.UInt32(proxyInboundPort)},
				Filters:          []*listenerv3.Filter{tcpProxy(blackHoleCluster, blackHoleCluster)},
			},
			httpChain(&listenerv3.FilterChainMatch{TransportProtocol: "tls", ApplicationProtocols: mtlsHTTPALPNs}, []string{"h2", "http/1.1"}),
			httpChain(&listenerv3.FilterChainMatch{TransportProtocol: "raw_buffer", ApplicationProtocols: plaintextHTTPALPNs}, nil),
			tcpChain(&listenerv3.FilterChainMatch{TransportProtocol: "tls", ApplicationProtocols: mtlsTCPWithMxcALPNs}, []string{"istio-peer-exchange", "istio"}),
			tcpChain(&listenerv3.FilterChainMatch{TransportProtocol: "raw_buffer"}, nil),
			tcpChain(&listenerv3.FilterChainMatch{TransportProtocol: "tls"}, nil),
		},
	}
}

// routeConfig is one RDS resource: for route "<port>", a virtual host per
// HTTP or sniffed service on the port and istiod's catch-all "allow_any";
// for a sniffed "<hostname>:<port>", that service's host alone, for any
// domain.
func routeConfig(snap *model.Snapshot, v view, name string) *routev3.RouteConfiguration {
	rc := &routev3.RouteConfiguration{
		Name:                           name,
		ValidateClusters:               wrapperspb.Bool(false),
		MaxDirectResponseBodySizeBytes: wrapperspb.UInt32(1 << 20),
		IgnorePortInHostMatching:       true,
	}
	if host, p, ok := strings.Cut(name, ":"); ok { // sniffed: "<hostname>:<port>"
		port, _ := strconv.Atoi(p)
		rc.VirtualHosts = []*routev3.VirtualHost{virtualHost(host, int32(port), []string{"*"})}
		return rc
	}
	port, _ := strconv.Atoi(name)
	used := map[string]bool{} // istiod drops a domain a previous host already has
	for _, svc := range snap.Services {
		for _, sp := range svc.Ports {
			if sp.Port != int32(port) {
				continue
			}
			if lp, _ := protocolOf(sp); lp != protoHTTP && lp != protoAuto {
				continue
			}
			var domains []string
			for _, d := range hostDomains(svc.Hostname, serviceAddress(svc, v.proxy.Cluster), v.dnsDomain) {
				if !used[d] {
					used[d] = true
					domains = append(domains, d)
				}
			}
			if len(domains) > 0 {
				rc.VirtualHosts = append(rc.VirtualHosts, virtualHost(svc.Hostname, sp.Port, domains))
			}
			break
		}
	}
	sort.SliceStable(rc.VirtualHosts, func(i, j int) bool { return rc.VirtualHosts[i].Name < rc.VirtualHosts[j].Name })
	rc.VirtualHosts = append(rc.VirtualHosts, &routev3.VirtualHost{
		Name:    "allow_any",
		Domains: []string{"*"},
		Routes: []*routev3.Route{{
			Name:  "allow_any",
			Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
			Action: &routev3.Route_Route{Route: istiodGRPCTimeout(&routev3.RouteAction{
				ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: passthroughCluster},
				Timeout:          durationpb.New(0),
			})},
		}},
	})
	return rc
}

// hostDomains is istiod's generateVirtualHostDomains for a sidecar (which
// ignores ports in host matching): the hostname, its absolute form, the
// short names a client in dnsDomain ("<ns>.svc.cluster.local", from the node
// ID) can use, and the VIP.
func hostDomains(hostname, vip, dnsDomain string) []string {
	out := []string{hostname, hostname + "."}
	if i := strings.Index(dnsDomain, ".svc."); i > 0 && strings.HasSuffix(hostname, dnsDomain[i:]) {
		proxyNS := dnsDomain[:i]
		if ih := strings.Index(hostname, ".svc."); ih > 0 {
			name, ns, _ := strings.Cut(hostname[:ih], ".")
			if ns == proxyNS {
				out = append(out, name, hostname[:ih]+".svc", hostname[:ih])
			} else {
				out = append(out, hostname[:ih], hostname[:ih]+".svc")
			}
		}
	}
	if vip != wildcardIP {
		if strings.Contains(vip, ":") {
			vip = "[" + vip + "]"
		}
		out = append(out, vip)
	}
	return out
}

// virtualHost is "<hostname>:<port>" with istiod's default route: every
// path to outbound|<port>||<hostname>, no timeout, the default retries.
func virtualHost(hostname string, port int32, domains []string) *routev3.VirtualHost {
	name := hostname + ":" + strconv.Itoa(int(port))
	return &routev3.VirtualHost{
		Name:    name,
		Domains: domains,
		Routes: []*routev3.Route{{
			Name:      "default",
			Match:     &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
			Decorator: &routev3.Decorator{Operation: name + "/*"},
			Action: &routev3.Route_Route{Route: istiodGRPCTimeout(&routev3.RouteAction{
				ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: outboundCluster(port, hostname)},
				Timeout:          durationpb.New(0),
				RetryPolicy: &routev3.RetryPolicy{
					RetryOn:    "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes",
					NumRetries: wrapperspb.UInt32(2),
					RetryHostPredicate: []*routev3.RetryPolicy_RetryHostPredicate{{
						Name:       "envoy.retry_host_predicates.previous_hosts",
						ConfigType: &routev3.RetryPolicy_RetryHostPredicate_TypedConfig{TypedConfig: mustAny(&previoushostsv3.PreviousHostsPredicate{})},
					}},
					HostSelectionRetryMaxAttempts: 5,
				},
			})},
		}},
	}
}

// httpConnectionManager is istiod's outbound HCM: routes from RDS over ADS.
func httpConnectionManager(statPrefix, route string) *listenerv3.Filter {
	m := baseHCM(statPrefix)
	m.RouteSpecifier = &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{
		ConfigSource: &corev3.ConfigSource{
			ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}},
			InitialFetchTimeout:   durationpb.New(0),
			ResourceApiVersion:    corev3.ApiVersion_V3,
		},
		RouteConfigName: route,
	}}
	return &listenerv3.Filter{Name: wellknown.HTTPConnectionManager, ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: mustAny(m)}}
}

// inboundPassthroughHCM is the HTTP passthrough chain's HCM: an inline route
// (not RDS) to InboundPassthroughCluster.
func inboundPassthroughHCM() *listenerv3.Filter {
	m := baseHCM(inboundPassthroughCluster)
	m.RouteSpecifier = &hcmv3.HttpConnectionManager_RouteConfig{RouteConfig: &routev3.RouteConfiguration{
		Name:             inboundPassthroughCluster,
		ValidateClusters: wrapperspb.Bool(false),
		VirtualHosts: []*routev3.VirtualHost{{
			Name:    "inbound|http|0",
			Domains: []string{"*"},
			Routes: []*routev3.Route{{
				Name:      "default",
				Match:     &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
				Decorator: &routev3.Decorator{Operation: ":0/*"},
				Action: &routev3.Route_Route{Route: istiodGRPCTimeout(&routev3.RouteAction{
					ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: inboundPassthroughCluster},
					Timeout:          durationpb.New(0),
				})},
			}},
		}},
	}}
	return &listenerv3.Filter{Name: wellknown.HTTPConnectionManager, ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: mustAny(m)}}
}

func baseHCM(statPrefix string) *hcmv3.HttpConnectionManager {
	return &hcmv3.HttpConnectionManager{
		CodecType:                    hcmv3.HttpConnectionManager_AUTO,
		StatPrefix:                   statPrefix,
		ServerName:                   "istio-envoy",
		UseRemoteAddress:             wrapperspb.Bool(false),
		NormalizePath:                wrapperspb.Bool(true),
		PathWithEscapedSlashesAction: hcmv3.HttpConnectionManager_KEEP_UNCHANGED,
		UpgradeConfigs:               []*hcmv3.HttpConnectionManager_UpgradeConfig{{UpgradeType: "websocket"}},
		StreamIdleTimeout:            durationpb.New(0),
		HttpFilters: []*hcmv3.HttpFilter{
			httpFilter(wellknown.Fault, &faultv3.HTTPFault{}),
			httpFilter(wellknown.CORS, &corsv3.Cors{}),
			httpFilter(wellknown.Router, &routerv3.Router{}),
		},
	}
}

// istioMTLS is the DownstreamTlsContext of istiod's inbound mTLS chains:
// the workload certificate ("default") and root ("ROOTCA") from the
// agent's SDS, client certificates required.
func istioMTLS(alpn []string) *corev3.TransportSocket {
	sds := func(name string) *tlsv3.SdsSecretConfig {
		return &tlsv3.SdsSecretConfig{Name: name, SdsConfig: &corev3.ConfigSource{
			ResourceApiVersion: corev3.ApiVersion_V3,
			ConfigSourceSpecifier: &corev3.ConfigSource_ApiConfigSource{ApiConfigSource: &corev3.ApiConfigSource{
				ApiType:             corev3.ApiConfigSource_GRPC,
				TransportApiVersion: corev3.ApiVersion_V3,
				GrpcServices: []*corev3.GrpcService{{TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{
					EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{ClusterName: "sds-grpc"},
				}}},
				SetNodeOnFirstMessageOnly: true,
			}},
		}}
	}
	ctx := &tlsv3.DownstreamTlsContext{
		RequireClientCertificate: wrapperspb.Bool(true),
		CommonTlsContext: &tlsv3.CommonTlsContext{
			AlpnProtocols:                  alpn,
			TlsCertificateSdsSecretConfigs: []*tlsv3.SdsSecretConfig{sds("default")},
			ValidationContextType: &tlsv3.CommonTlsContext_CombinedValidationContext{CombinedValidationContext: &tlsv3.CommonTlsContext_CombinedCertificateValidationContext{
				DefaultValidationContext:         &tlsv3.CertificateValidationContext{},
				ValidationContextSdsSecretConfig: sds("ROOTCA"),
			}},
		},
	}
	return &corev3.TransportSocket{Name: wellknown.TransportSocketTLS, ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: mustAny(ctx)}}
}

func tcpProxy(statPrefix, cluster string) *listenerv3.Filter {
	return &listenerv3.Filter{Name: wellknown.TCPProxy, ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: mustAny(&tcpproxyv3.TcpProxy{
		StatPrefix:       statPrefix,
		ClusterSpecifier: &tcpproxyv3.TcpProxy_Cluster{Cluster: cluster},
	})}}
}

func listenerFilter(name string, cfg proto.Message) *listenerv3.ListenerFilter {
	return &listenerv3.ListenerFilter{Name: name, ConfigType: &listenerv3.ListenerFilter_TypedConfig{TypedConfig: mustAny(cfg)}}
}

func httpFilter(name string, cfg proto.Message) *hcmv3.HttpFilter {
	return &hcmv3.HttpFilter{Name: name, ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(cfg)}}
}

func socketAddress(ip string, port uint32) *corev3.Address {
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Address: ip, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port},
	}}}
}

// mustAny packs a message deterministically (same input, same bytes, so
// resource hashes and versions stay stable). Packing a generated message
// cannot fail.
func mustAny(m proto.Message) *anypb.Any {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		panic("demo xDS: " + err.Error())
	}
	return &anypb.Any{TypeUrl: "type.googleapis.com/" + string(m.ProtoReflect().Descriptor().FullName()), Value: b}
}

// istiodGRPCTimeout sets max_grpc_timeout to 0 on a sidecar route, as
// istiod does: it still uses the deprecated field, because
// MaxStreamDuration "has some regressions" (pilot route.go).
func istiodGRPCTimeout(a *routev3.RouteAction) *routev3.RouteAction {
	//lint:ignore SA1019 istiod sets the deprecated field, and the demo imitates istiod
	a.MaxGrpcTimeout = durationpb.New(0)
	return a
}
