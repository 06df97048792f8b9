package horizon

import (
	"net/netip"
	"sort"
	"sync"

	"github.com/meshscope/meshscope/model"
)

// gwKey identifies one gateway the way istiod's model.NetworkGateway does
// (a gateway Service and a Gateway API Gateway on one address differ by
// their service account).
type gwKey struct {
	Network, Cluster, Addr string
	Port, HBONEPort        uint32
	ServiceAccount         string
}

// gatewayIndex mirrors istiod's NetworkGateways (pilot/pkg/model/network.go):
// gateways by network and by (network, cluster), and the LCM of their
// counts as the weight scale factor.
type gatewayIndex struct {
	byNetwork map[string][]gwKey
	byNC      map[[2]string][]gwKey
	scale     uint32
	// sidecar holds forEndpoint's answers, computed once per index: the
	// prediction asks for every endpoint.
	sidecar map[[2]string][]gwKey
	// configs are the snapshot's config views, per config cluster.
	configs configCache
	// gws are the snapshot's gateways; when some are used by one istiod
	// only (istio-remote Gateways), byCC holds the index of each config
	// cluster (see forConfigCluster).
	gws []model.Gateway
	// names are the DNS names the gateways resolved from came from (a
	// gateway Service's load-balancer hostname, ...): the reason sentence
	// names them.
	names  map[gwKey]string
	ccOnly bool
	mu     sync.Mutex
	byCC   map[string]*gatewayIndex
	// pods holds the pod endpoints by (cluster, address), built the first
	// time a prediction needs a proxy's pod (localitylb.go podAt).
	podsMu   sync.Mutex
	podsSnap *model.Snapshot
	pods     map[[2]string]*model.Endpoint
}

// newGatewayIndex indexes the snapshot's gateways. A gateway DNS name is
// in the snapshot as one gateway per address it resolved to (the build
// does what istiod's resolveHostnameGateways does); a name that gave no
// address is left out, as istiod drops it.
func newGatewayIndex(gws []model.Gateway) *gatewayIndex {
	return newGatewayIndexFor(gws, "")
}

// newGatewayIndexFor indexes the gateways the istiod of config cluster cc
// uses ("": all of them).
func newGatewayIndexFor(gws []model.Gateway, cc string) *gatewayIndex {
	ix := &gatewayIndex{byNetwork: map[string][]gwKey{}, byNC: map[[2]string][]gwKey{}, gws: gws}
	seen := map[gwKey]bool{}
	for _, g := range gws {
		// Some istiods use a gateway and others not: an istio-remote
		// Gateway, a resolved name where RESOLVE_HOSTNAME_GATEWAYS is off.
		ix.ccOnly = ix.ccOnly || g.ConfigClusterOnly || len(g.NotResolvedBy) > 0
		if g.Hostname || !g.UsedBy(cc) {
			continue
		}
		k := gwKey{Network: g.Network, Cluster: g.Cluster, Addr: g.Address, Port: g.Port, HBONEPort: g.HBONEPort, ServiceAccount: g.ServiceAccount}
		if seen[k] { // istiod keeps a set
			continue
		}
		seen[k] = true
		if g.Name != "" {
			if ix.names == nil {
				ix.names = map[gwKey]string{}
			}
			ix.names[k] = g.Name
		}
		ix.byNetwork[k.Network] = append(ix.byNetwork[k.Network], k)
		nc := [2]string{k.Network, k.Cluster}
		ix.byNC[nc] = append(ix.byNC[nc], k)
	}
	ix.scale = 1
	for _, l := range ix.byNetwork {
		sortGateways(l)
		ix.scale = lcm(ix.scale, uint32(len(l)))
	}
	for _, l := range ix.byNC {
		sortGateways(l)
		ix.scale = lcm(ix.scale, uint32(len(l)))
	}
	ix.sidecar = map[[2]string][]gwKey{}
	for nc := range ix.byNC {
		ix.sidecar[nc] = ix.selectForSidecar(nc[0], nc[1])
	}
	for nw := range ix.byNetwork {
		ix.sidecar[[2]string{nw, ""}] = ix.selectForSidecar(nw, "")
	}
	return ix
}

// forConfigCluster is the index of the gateways the istiod of config
// cluster cc uses: ix itself unless some gateway is used by one istiod only
// (an istio-remote Gateway, read from istiod's config cluster alone).
func (ix *gatewayIndex) forConfigCluster(cc string) *gatewayIndex {
	if !ix.ccOnly || cc == "" {
		return ix
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if v := ix.byCC[cc]; v != nil {
		return v
	}
	if ix.byCC == nil {
		ix.byCC = map[string]*gatewayIndex{}
	}
	v := newGatewayIndexFor(ix.gws, cc)
	ix.byCC[cc] = v
	return v
}

// multiNetwork mirrors IsMultiNetworkEnabled: any gateway at all.
func (ix *gatewayIndex) multiNetwork() bool { return len(ix.byNetwork) > 0 }

// forEndpoint mirrors selectNetworkGateways for a sidecar: the gateways of
// the endpoint's network in its own cluster, else any of its network; a
// sidecar can only use gateways with an mTLS port.
func (ix *gatewayIndex) forEndpoint(network, cluster string) []gwKey {
	if l, ok := ix.sidecar[[2]string{network, cluster}]; ok {
		return l
	}
	return ix.sidecar[[2]string{network, ""}]
}

func (ix *gatewayIndex) selectForSidecar(network, cluster string) []gwKey {
	gws := ix.byNC[[2]string{network, cluster}]
	if len(gws) == 0 {
		gws = ix.byNetwork[network]
	}
	var out []gwKey
	for _, g := range gws {
		if g.Port != 0 {
			out = append(out, g)
		}
	}
	return out
}

// reachable mirrors filterGatewaysByIPFamily: a single-stack proxy can only
// use gateways of its own IP family; a dual-stack (or unknown) one, any.
func reachable(gws []gwKey, v4, v6 bool) []gwKey {
	if v4 == v6 {
		return gws
	}
	all := true
	for _, g := range gws {
		if a, err := netip.ParseAddr(g.Addr); err != nil || a.Unmap().Is4() != v4 {
			all = false
			break
		}
	}
	if all { // the common case: no copy
		return gws
	}
	var out []gwKey
	for _, g := range gws {
		a, err := netip.ParseAddr(g.Addr)
		if err != nil {
			continue
		}
		a = a.Unmap()
		if (a.Is4() && v4) || (a.Is6() && v6) {
			out = append(out, g)
		}
	}
	return out
}

func sortGateways(l []gwKey) {
	sort.Slice(l, func(i, j int) bool { return gwLess(l[i], l[j]) })
}

func gwLess(a, b gwKey) bool {
	// istiod's SortGateways: address, then port; network and cluster only
	// break ties (one address in two networks is a misconfiguration).
	if a.Addr != b.Addr {
		return a.Addr < b.Addr
	}
	if a.Port != b.Port {
		return a.Port < b.Port
	}
	if a.Network != b.Network {
		return a.Network < b.Network
	}
	if a.Cluster != b.Cluster {
		return a.Cluster < b.Cluster
	}
	if a.HBONEPort != b.HBONEPort {
		return a.HBONEPort < b.HBONEPort
	}
	return a.ServiceAccount < b.ServiceAccount
}

func gcd(a, b uint32) uint32 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func lcm(a, b uint32) uint32 {
	if a == 0 || b == 0 {
		return a + b
	}
	return a / gcd(a, b) * b
}
