package horizon

import (
	"fmt"
	"math"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// Health of a gateway LbEndpoint: istiod sets none on it.
const Unknown Health = "UNKNOWN"

// EDSClusterName is the Envoy cluster name istiod uses for a service port.
func EDSClusterName(hostname string, port int32) string {
	return "outbound|" + strconv.Itoa(int(port)) + "||" + hostname
}

// Predict computes the EDS istiod sends proxy for hostname:port in snap.
func Predict(snap *model.Snapshot, hostname string, port int32, proxy Proxy) Prediction {
	return PredictWith(snap, newGatewayIndex(snapGateways(snap)), hostname, port, proxy)
}

func snapGateways(snap *model.Snapshot) []model.Gateway {
	if snap == nil {
		return nil
	}
	return snap.Gateways
}

// Index is the gateway index of one snapshot, to predict many services
// without rebuilding it.
type Index = gatewayIndex

// NewIndex indexes a snapshot's gateways for PredictWith.
func NewIndex(snap *model.Snapshot) *Index { return newGatewayIndex(snapGateways(snap)) }

// PredictWith is Predict with a prebuilt gateway index.
func PredictWith(snap *model.Snapshot, ix *Index, hostname string, port int32, proxy Proxy) Prediction {
	return PredictSubset(snap, ix, hostname, "", port, proxy)
}

// PredictSubset is PredictWith for the EDS cluster of a DestinationRule
// subset (outbound|PORT|SUBSET|HOST; "" for the whole service).
func PredictSubset(snap *model.Snapshot, ix *Index, hostname, subset string, port int32, proxy Proxy) Prediction {
	return predict(snap, ix, hostname, subset, port, proxy, false)
}

// PredictSNI is PredictSubset for the SNI-DNAT cluster of a gateway
// (outbound_.PORT_.SUBSET_.HOST): after the split horizon, istiod keeps
// only endpoints reached with mTLS (endpoint_builder.go, IsDNSSrvSubsetKey:
// EndpointsWithMTLSFilter), since the gateway passes TLS through unread.
func PredictSNI(snap *model.Snapshot, ix *Index, hostname, subset string, port int32, proxy Proxy) Prediction {
	p := predict(snap, ix, hostname, subset, port, proxy, true)
	p.EDSCluster = model.SNIName(hostname, subset, port)
	return p
}

func predict(snap *model.Snapshot, ix *Index, hostname, subset string, port int32, proxy Proxy, sni bool) Prediction {
	p := Prediction{Service: hostname, Port: port, Subset: subset, EDSCluster: SubsetClusterName(hostname, subset, port), Endpoints: []Endpoint{}}
	svc := snap.Service(hostname)
	if svc == nil {
		return p
	}
	t, ok := resolveTarget(snap, ix, svc, subset, port, proxy)
	if !ok {
		return p
	}
	p.Found = true
	p.Namespace, p.Source, p.Resolution, p.NoEndpoints = t.namespace, t.source, t.resolution, t.noEndpoints
	if t.noEndpoints != "" {
		return p
	}
	ix = ix.forConfigCluster(t.cfg.cluster)
	p.MultiNetwork = ix.multiNetwork()
	p.ScaleFactor = 1
	if p.MultiNetwork {
		p.ScaleFactor = ix.scale
	}
	f := newEndpointFilter(&t, hostname, proxy)
	var lbuf [16]string
	var gwBuf [8]gatewaySentence
	var h splitHorizon
	h.init(&t, ix, hostname, port, proxy, lbuf[:0], gwBuf[:0])
	h.sni = sni
	for si := range t.sources {
		src := &t.sources[si]
		for ei, ep := range src.endpoints {
			epPort, ok := endpointPort(ep, t.portName)
			ref := Ref{Address: ep.Address, Port: epPort, Pod: ep.Pod, Workload: ep.Workload, Cluster: ep.Cluster, Network: ep.Network, Health: healthOf(ep)}
			if d, drop := f.drop(&t, src, &ep, ref, ok); drop {
				if d.Reason != "" {
					p.Dropped = append(p.Dropped, d)
				}
				continue
			}
			// Unhealthy (not ready, not terminating) endpoints ARE sent, as
			// UNHEALTHY, by default (PILOT_AUTO_SEND_UNHEALTHY_ENDPOINTS=true),
			// and count in gateway weights below like healthy ones.
			h.place(&p, &t, h.groups.groupOf(si, ei), ep, epPort, ref)
		}
	}
	h.gwWhy.names = ix.names
	ends := h.groups.assemble(&p, h.refs, &h.gwWhy, proxy)
	p.finishGroups(ends)
	p.LB.PanicThreshold = t.panicThreshold()
	if l, ok := t.effectiveLocalityLB(); ok {
		p.applyLocalityLB(l, ends, ix, snap, proxy, t.directSources())
	}
	// Then what Envoy makes of them (not for a gateway's SNI-DNAT cluster:
	// no reader shows its shares).
	if !sni {
		p.applyEffects()
	}
	return p
}

// endpointFilter decides which endpoints istiod sends a proxy at all,
// before the split horizon: the port by name, the pod, the source's own
// rules (exclude), then filterIstioEndpoint (network view, cluster-local,
// terminating) and the rule's minHealthPercent.
type endpointFilter struct {
	hostname                                string
	proxy                                   Proxy
	clusterLocal, ownCluster, sendUnhealthy bool
	minHealth                               int32
}

func newEndpointFilter(t *target, hostname string, proxy Proxy) endpointFilter {
	f := endpointFilter{hostname: hostname, proxy: proxy, clusterLocal: t.clusterLocal, ownCluster: t.ownClusterOnly(hostname)}
	f.sendUnhealthy, f.minHealth = t.sendsUnhealthy()
	return f
}

// drop says whether istiod leaves ep out, and why (a Dropped without a
// Reason: left out without a word, an endpoint with no ports at all).
// portOK says the endpoint has the service port's name.
func (f *endpointFilter) drop(t *target, src *source, ep *model.Endpoint, ref Ref, portOK bool) (Dropped, bool) {
	proxy := f.proxy
	if !portOK {
		if len(ep.Ports) > 0 {
			return Dropped{Ref: ref, Reason: DropPortName,
				Why: fmt.Sprintf("it has no port named %q (its ports: %s): istiod matches endpoints to the port of the service it uses by name", t.portName, portNames(ep.Ports))}, true
		}
		return Dropped{}, true
	}
	if ep.PodMissing {
		return Dropped{Ref: ref, Reason: DropPodMissing,
			Why: fmt.Sprintf("its EndpointSlice names pod %s, which does not exist (yet): istiod skips the endpoint until the pod does", orNone(ep.Pod))}, true
	}
	if reason, why := t.exclude(src, ep); reason != "" {
		return Dropped{Ref: ref, Reason: reason, Why: why}, true
	}
	// filterIstioEndpoint: network view, cluster-local, terminating.
	if len(proxy.NetworkView) > 0 && ep.Network != "" && !slices.Contains(proxy.NetworkView, ep.Network) {
		return Dropped{Ref: ref, Reason: DropNetworkView,
			Why: fmt.Sprintf("the proxy's REQUESTED_NETWORK_VIEW (%s) does not include %s", strings.Join(proxy.NetworkView, ","), ep.Network)}, true
	}
	if f.clusterLocal && ep.Cluster != proxy.Cluster {
		return Dropped{Ref: ref, Reason: DropClusterLocal,
			Why: fmt.Sprintf("%s is cluster-local: only endpoints of the proxy's own cluster (%s) are sent", f.hostname, orNone(proxy.Cluster))}, true
	}
	if f.ownCluster && ep.Cluster != proxy.Cluster {
		return Dropped{Ref: ref, Reason: DropNotGlobal,
			Why: fmt.Sprintf("%s is not global (ambient multi-network mode): istiod sends sidecars only the endpoints of their own cluster (%s)", f.hostname, orNone(proxy.Cluster))}, true
	}
	if !ep.Ready && ep.Terminating {
		return Dropped{Ref: ref, Reason: DropTerminating,
			Why: "the endpoint is terminating: istiod never sends terminating endpoints"}, true
	}
	if !f.sendUnhealthy && ref.Health == Unhealthy {
		return Dropped{Ref: ref, Reason: DropUnhealthy,
			Why: fmt.Sprintf("the endpoint is not ready, and %s sets outlierDetection.minHealthPercent %d: istiod then leaves unhealthy endpoints out (else Envoy's panic threshold would send them traffic)", ruleNames(t.rule), f.minHealth)}, true
	}
	return Dropped{}, false
}

// splitHorizon is one prediction's split horizon (EndpointsByNetworkFilter):
// every endpoint sent goes directly into its locality group, or behind
// the gateways of its network (groups.go).
type splitHorizon struct {
	ix       *Index
	hostname string
	port     int32
	proxy    Proxy
	v4, v6   bool
	// Endpoints are grouped by locality like istiod's LocalityLbEndpoints;
	// the gateway rewrite happens inside each group.
	groups groupSet
	// refs is one backing array for every endpoint's Ref: StandsFor of
	// direct endpoints slices into it instead of allocating per endpoint.
	refs  []Ref
	why   sentences
	gwWhy gatewaySentences
	// Endpoints of one cluster share their gateways: look them up once.
	lastNC  [2]string
	lastGws []gwKey
	// sni: an SNI-DNAT cluster, which keeps only mTLS endpoints.
	sni bool
}

// init readies h for the endpoints of t, with buffers for the locality
// names and gateway sentences of the prediction.
func (h *splitHorizon) init(t *target, ix *Index, hostname string, port int32, proxy Proxy, lbuf []string, gwBuf []gatewaySentence) {
	h.ix, h.hostname, h.port, h.proxy = ix, hostname, port, proxy
	h.v4, h.v6 = ipFamily(proxy.IP)
	total := 0
	for _, src := range t.sources {
		total += len(src.endpoints)
	}
	h.groups.init(t.sources, total, lbuf)
	h.refs = make([]Ref, 0, total)
	h.gwWhy = gatewaySentences{cache: gwBuf}
}

// place puts an endpoint istiod sends into group grp: directly (one
// network, or the proxy's own, or a network without gateways), or behind
// each gateway of its network the proxy can reach, its weight shared
// between them — unless it has no mTLS or no gateway of the proxy's IP
// family, when it is dropped.
func (h *splitHorizon) place(p *Prediction, t *target, grp int, ep model.Endpoint, epPort uint32, ref Ref) {
	proxy := h.proxy
	h.refs = append(h.refs, ref)
	self := h.refs[len(h.refs)-1 : len(h.refs) : len(h.refs)]
	direct := Endpoint{Address: ep.Address, Port: epPort, Weight: epWeight(ep), Health: ref.Health, Kind: Local,
		Locality: ep.Locality, Cluster: ep.Cluster, Network: ep.Network, Pod: ep.Pod, Workload: ep.Workload, StandsFor: self}
	if !p.MultiNetwork {
		if ep.Address == "" {
			p.Dropped = append(p.Dropped, noAddress(ref))
			return
		}
		if h.plaintextSNI(p, t, ep, epPort, ref) {
			return
		}
		direct.Why = "no network has a gateway: split horizon is off, every endpoint is sent directly"
		h.groups.addDirect(grp, direct)
		return
	}
	weight := scaleWeight(epWeight(ep), p.ScaleFactor)
	direct.Weight = weight
	if ep.Network != h.lastNC[0] || ep.Cluster != h.lastNC[1] || h.lastGws == nil {
		h.lastNC, h.lastGws = [2]string{ep.Network, ep.Cluster}, h.ix.forEndpoint(ep.Network, ep.Cluster)
		if h.lastGws == nil {
			h.lastGws = []gwKey{}
		}
	}
	gws := h.lastGws
	force := proxy.Network == "" && ep.Network != "" && len(gws) > 0
	inNetwork := proxy.Network == "" || ep.Network == "" || proxy.Network == ep.Network
	if !force && (inNetwork || len(gws) == 0) {
		if ep.Address == "" {
			p.Dropped = append(p.Dropped, noAddress(ref))
			return
		}
		if h.plaintextSNI(p, t, ep, epPort, ref) {
			return
		}
		direct.Kind, direct.Why = h.why.direct(proxy.Network, ep.Network)
		h.groups.addDirect(grp, direct)
		return
	}
	reach := reachable(gws, h.v4, h.v6)
	if len(reach) == 0 {
		p.Dropped = append(p.Dropped, Dropped{Ref: ref, Reason: DropIPFamily,
			Why: fmt.Sprintf("%s has gateways, but none of the proxy's IP family (%s)", ep.Network, family(h.v4, h.v6))})
		return
	}
	if ok, cause, why, config := t.mtlsFor(h.hostname, h.port, ep, epPort); !ok {
		p.Dropped = append(p.Dropped, Dropped{Ref: ref, Reason: DropNoMTLS, Cause: cause, Config: config,
			Why: "cross-network endpoint without mTLS: " + why + "; the gateway routes by SNI, which needs mTLS"})
		return
	}
	per := weight / uint32(len(reach))
	kind := Gateway
	if proxy.Network == "" {
		kind = Forced
	}
	for _, gk := range reach {
		h.groups.addToGateway(grp, ep.Locality, gk, kind, len(h.refs)-1, per)
	}
}

// plaintextSNI drops, from an SNI-DNAT cluster, a direct endpoint that is
// not reached with mTLS (EndpointsWithMTLSFilter: its tlsMode metadata,
// which checkMtlsEnabled decides, is not istio); gateway entries carry
// tlsMode istio and stay.
func (h *splitHorizon) plaintextSNI(p *Prediction, t *target, ep model.Endpoint, epPort uint32, ref Ref) bool {
	if !h.sni {
		return false
	}
	ok, cause, why, config := t.mtlsFor(h.hostname, h.port, ep, epPort)
	if ok {
		return false
	}
	p.Dropped = append(p.Dropped, Dropped{Ref: ref, Reason: DropNoMTLS, Cause: cause, Config: config,
		Why: "not reached with mTLS: " + why + "; a gateway's SNI-DNAT cluster keeps only mTLS endpoints (the gateway passes TLS through unread)"})
	return true
}

// sentences caches the reason of direct endpoints per (proxy network,
// endpoint network) within one prediction: thousands of endpoints share a
// handful of sentences.
type sentences []sentence

type sentence struct {
	key  [2]string
	kind Kind
	why  string
}

func (s *sentences) direct(proxyNet, epNet string) (Kind, string) {
	k := [2]string{proxyNet, epNet}
	for _, v := range *s {
		if v.key == k {
			return v.kind, v.why
		}
	}
	kind, why := Local, ""
	switch {
	case proxyNet != "" && proxyNet == epNet:
		why = fmt.Sprintf("same network as the proxy (%s)", epNet)
	case epNet == "":
		why = "the endpoint has no network: it counts as reachable from every network"
	case proxyNet == "":
		why = fmt.Sprintf("the proxy sends no NETWORK and %s has no gateway: sent directly", epNet)
	default:
		kind = Leaked
		why = fmt.Sprintf("%s is not the proxy's network %s, but no gateway is known for %s: the pod IP is sent across networks and is likely unreachable", epNet, proxyNet, epNet)
	}
	*s = append(*s, sentence{key: k, kind: kind, why: why})
	return kind, why
}

// gatewayWhy builds its sentence by concatenation, one allocation: with
// localities there is a gateway entry per group, thousands per mesh. A
// gateway address that came from a DNS name is said with its name:
// "gateway NAME (ADDR) of NETWORK".
func gatewayWhy(e *Endpoint, proxy Proxy, name string) string {
	n := strconv.Itoa(len(e.StandsFor)) // no allocation below 100
	gw := e.Network + "'s east-west gateway"
	if name != "" {
		gw = "gateway " + name + " (" + e.Address + ") of " + e.Network
	}
	if e.Kind == Forced {
		return "the proxy sends no NETWORK, so " + n + " endpoint(s) of " + e.Network + " go through " + gw + " (istiod forceGateway)"
	}
	return n + " endpoint(s) of " + e.Network + " go through " + gw + ": " + e.Network + " is not the proxy's network " + proxy.Network
}

// scaleWeight mirrors scaleEndpointLBWeight (clipped at MaxUint32).
func scaleWeight(w, scale uint32) uint32 {
	if w == 0 {
		return scale
	}
	if w < math.MaxUint32/scale {
		return w * scale
	}
	return math.MaxUint32
}

func endpointPort(ep model.Endpoint, name string) (uint32, bool) {
	for _, p := range ep.Ports {
		if p.Name == name {
			return uint32(p.Port), true
		}
	}
	return 0, false
}

func sortedClusters(svc *model.Service) []string {
	ids := make([]string, 0, len(svc.Clusters))
	for id := range svc.Clusters {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// ipFamily says which families a proxy at ip supports; an empty or invalid
// IP counts as IPv4 (meshscope's default probe address is IPv4).
func ipFamily(ip string) (v4, v6 bool) {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return true, false
	}
	a = a.Unmap()
	return a.Is4(), a.Is6()
}

func family(v4, v6 bool) string {
	switch {
	case v4 && !v6:
		return "IPv4"
	case v6 && !v4:
		return "IPv6"
	}
	return "dual-stack"
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// portNames lists ports as name=number for a sentence.
func portNames(ps []model.EndpointPort) string {
	parts := make([]string, 0, len(ps))
	for _, p := range ps {
		parts = append(parts, fmt.Sprintf("%s=%d", orNone(p.Name), p.Port))
	}
	return strings.Join(parts, ", ")
}
