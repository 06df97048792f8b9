package collector

import (
	"github.com/meshscope/meshscope/collector/gatewaydns"
	"github.com/meshscope/meshscope/model"
)

// resolvConf is where istiod (and so meshscope) finds its DNS servers.
const resolvConf = "/etc/resolv.conf"

// newNameCache makes the cache that resolves gateway DNS names as istiod
// does (see Options.GatewayDNSServers); onChange republishes when an
// answer changes after its TTL. With no resolver it returns why.
func newNameCache(opts Options, onChange func()) (*gatewaydns.Cache, string) {
	r := opts.GatewayResolver
	switch {
	case r != nil:
	case len(opts.GatewayDNSServers) > 0:
		r = gatewaydns.Client{Servers: opts.GatewayDNSServers}
	case len(opts.Sources) > 0:
		return nil, "meshscope resolves no gateway names for clusters given in-process"
	default:
		servers, err := gatewaydns.ResolvConf(resolvConf)
		if err != nil {
			return nil, "meshscope cannot read " + resolvConf + ": " + err.Error()
		}
		r = gatewaydns.Client{Servers: servers}
	}
	return gatewaydns.NewCache(r, onChange), ""
}

// resolveGatewayNames answers every gateway name of a build: from the
// cache (resolving new or expired names now, as istiod does when its
// gateways change), or, with no resolver, as not resolved and why.
func (r *Registry) resolveGatewayNames(names []string) []model.GatewayName {
	if r.names != nil {
		return r.names.Resolve(names)
	}
	return r.unresolved(names)
}

// whatIfGatewayNames answers the gateway names of a what-if build from
// the cache, changing nothing in it (a name the what-if adds is asked
// once).
func (r *Registry) whatIfGatewayNames(names []string) []model.GatewayName {
	if r.names != nil {
		return r.names.Lookup(names)
	}
	return r.unresolved(names)
}

func (r *Registry) unresolved(names []string) []model.GatewayName {
	out := make([]model.GatewayName, 0, len(names))
	for _, n := range names {
		out = append(out, model.GatewayName{Name: n, Err: r.namesErr, Pending: true, By: model.ResolvedByMeshscope})
	}
	return out
}
