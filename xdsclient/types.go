package xdsclient

import "fmt"

// Type is an xDS resource type as readers name it: lower case, short.
type Type string

// The resource types meshscope subscribes to.
const (
	CDS Type = "cds"
	EDS Type = "eds"
	LDS Type = "lds"
	RDS Type = "rds"
)

// Type URLs of the v3 resources, as sent in DiscoveryRequest.type_url.
const (
	ClusterTypeURL  = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
	endpointTypeURL = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"
	listenerTypeURL = "type.googleapis.com/envoy.config.listener.v3.Listener"
	routeTypeURL    = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"
)

// allTypes is the order in which types are (re)subscribed: clusters before
// endpoints and listeners before routes, as Envoy does, so the server never
// sees a request for names it has not announced yet.
var allTypes = []Type{CDS, EDS, LDS, RDS}

// url returns the type URL of t.
func (t Type) url() string {
	switch t {
	case CDS:
		return ClusterTypeURL
	case EDS:
		return endpointTypeURL
	case LDS:
		return listenerTypeURL
	case RDS:
		return routeTypeURL
	}
	return ""
}

// wildcard reports whether t is subscribed without names (all resources).
// CDS and LDS are wildcard in Istio; EDS and RDS are always asked by name.
func (t Type) wildcard() bool { return t == CDS || t == LDS }

// typeFromURL maps a type URL back to its Type.
func typeFromURL(url string) (Type, error) {
	for _, t := range allTypes {
		if t.url() == url {
			return t, nil
		}
	}
	return "", fmt.Errorf("unexpected type URL %q", url)
}

// Mode selects the ADS protocol variant.
type Mode string

// ADS variants. Delta is the default because the istio agent uses it, so it
// is what istiod is most exercised with.
const (
	ModeDelta Mode = "delta"
	ModeSotW  Mode = "sotw"
)

// ParseMode accepts "delta", "sotw" (and "" for the default, delta).
func ParseMode(s string) (Mode, error) {
	switch s {
	case "", "delta":
		return ModeDelta, nil
	case "sotw", "SotW", "state-of-the-world":
		return ModeSotW, nil
	}
	return "", fmt.Errorf("xds mode %q: want sotw or delta", s)
}
