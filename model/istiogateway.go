package model

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The second hop of a cross-network request is the remote network's
// east-west gateway: its Envoy accepts the source's SNI on an
// AUTO_PASSTHROUGH server and forwards to the SNI-DNAT cluster of that
// name. istiod builds that config only because a networking.istio.io
// Gateway selects the gateway's pods (pilot/pkg/model/gateway.go
// mergeGateways, PushContext.mergeGateways; docs/istiod-rules.md, the
// second hop).

// Server TLS modes (networking.istio.io ServerTLSSettings.TLSmode) the
// second hop reads.
const (
	TLSPassthrough     = "PASSTHROUGH"
	TLSAutoPassthrough = "AUTO_PASSTHROUGH"
)

// serverTLSModes are the modes a Gateway server's tls.mode may name, in the
// enum's order (its zero value, PASSTHROUGH, is what a tls block without a
// mode means).
var serverTLSModes = []string{TLSPassthrough, "SIMPLE", "MUTUAL", TLSAutoPassthrough, "ISTIO_MUTUAL", "OPTIONAL_MUTUAL"}

// CheckServerTLSMode says why a tls.mode is not one istiod reads (nil when
// it is): the CRD's schema refuses other values, and istiod cannot convert
// an object that has one.
func CheckServerTLSMode(mode string) error {
	if mode == "" || slices.Contains(serverTLSModes, mode) {
		return nil
	}
	return fmt.Errorf("tls.mode %q is not one of %s", mode, strings.Join(serverTLSModes, ", "))
}

// IstioGateway is a networking.istio.io Gateway as istiod reads it from its
// config cluster: which workloads it selects and its servers.
type IstioGateway struct {
	Cluster   string    `json:"cluster"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	Created   time.Time `json:"created,omitzero"`
	// Selector is spec.selector: the Gateway applies to a gateway proxy
	// whose labels include it. nil (no selector) applies to every gateway
	// proxy.
	Selector map[string]string `json:"selector,omitempty"`
	Servers  []GatewayServer   `json:"servers,omitempty"`
	// Error says why istiod cannot read the Gateway (a server's tls.mode
	// it does not know): it then ignores all of it.
	Error string `json:"error,omitempty"`
}

// Key is "namespace/name", as istiod names a Gateway.
func (g IstioGateway) Key() string { return g.Namespace + "/" + g.Name }

// GatewayServer is one server of a Gateway.
type GatewayServer struct {
	Name     string   `json:"name,omitempty"`
	Port     uint32   `json:"port"`
	PortName string   `json:"portName,omitempty"`
	Protocol string   `json:"protocol,omitempty"`
	Hosts    []string `json:"hosts,omitempty"`
	Bind     string   `json:"bind,omitempty"`
	// TLS says the server has a tls block; TLSMode is its mode
	// (PASSTHROUGH when the block names none, the enum's zero value).
	TLS     bool   `json:"tls,omitempty"`
	TLSMode string `json:"tlsMode,omitempty"`
}

// AutoPassthrough says the server forwards by SNI to istiod's SNI-DNAT
// clusters (tls.mode AUTO_PASSTHROUGH).
func (s GatewayServer) AutoPassthrough() bool { return s.TLS && s.TLSMode == TLSAutoPassthrough }

// Selects says whether the Gateway applies to a gateway proxy with these
// labels (PushContext.mergeGateways: no selector applies to all; otherwise
// the selector must be a subset of the proxy's labels).
func (g IstioGateway) Selects(labels map[string]string) bool {
	for k, v := range g.Selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// SNIHosts are a server's hosts as istiod matches them against service
// hostnames (GetSNIHostsForServer): a "namespace/" prefix is dropped, so
// it restricts nothing.
func (s GatewayServer) SNIHosts() []string {
	out := make([]string, 0, len(s.Hosts))
	for _, h := range s.Hosts {
		if _, rest, ok := strings.Cut(h, "/"); ok {
			h = rest
		}
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return out
}

// HostSubsetOf mirrors host.Name.SubsetOf: whether hostname (which may be
// a wildcard ServiceEntry host) is matched by pattern ("*", "*.suffix" or
// a name).
func HostSubsetOf(hostname, pattern string) bool {
	hw, pw := strings.HasPrefix(hostname, "*"), strings.HasPrefix(pattern, "*")
	switch {
	case hw && pw:
		return len(hostname) >= len(pattern) && strings.HasSuffix(hostname[1:], pattern[1:])
	case hw:
		return false
	case pw:
		return strings.HasSuffix(hostname, pattern[1:])
	}
	return hostname == pattern
}

// SNIName is the SNI a sidecar sends for a service port (and subset)
// through a gateway, and the name of the gateway's SNI-DNAT cluster for it
// (model.BuildDNSSrvSubsetKey with TrafficDirectionOutbound):
// outbound_.PORT_.SUBSET_.HOST.
func SNIName(hostname, subset string, port int32) string {
	return "outbound_." + strconv.Itoa(int(port)) + "_." + subset + "_." + hostname
}
