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
	portName := t.portName
	ix = ix.forConfigCluster(t.cfg.cluster)
	p.MultiNetwork = ix.multiNetwork()
	p.ScaleFactor = 1
	if p.MultiNetwork {
		p.ScaleFactor = ix.scale
	}
	v4, v6 := ipFamily(proxy.IP)
	clusterLocal := t.clusterLocal
	sendUnhealthy, minHealth := t.sendsUnhealthy()
	ownCluster := t.ownClusterOnly(hostname)

	// Endpoints are grouped by locality like istiod's LocalityLbEndpoints;
	// the gateway rewrite happens inside each group (groups.go).
	total := 0
	for _, src := range t.sources {
		total += len(src.endpoints)
	}
	var groups groupSet
	var lbuf [16]string
	groups.init(t.sources, total, lbuf[:0])
	// One backing array for every endpoint's Ref: StandsFor of direct
	// endpoints slices into it instead of allocating per endpoint.
	refs := make([]Ref, 0, total)
	var why sentences
	var gwBuf [8]gatewaySentence
	gwWhy := gatewaySentences(gwBuf[:0])
	// Endpoints of one cluster share their gateways: look them up once.
	var lastNC [2]string
	var lastGws []gwKey

	for si := range t.sources {
		src := &t.sources[si]
		for ei, ep := range src.endpoints {
			epPort, ok := endpointPort(ep, portName)
			ref := Ref{Address: ep.Address, Port: epPort, Pod: ep.Pod, Workload: ep.Workload, Cluster: ep.Cluster, Network: ep.Network, Health: healthOf(ep)}
			if !ok {
				if len(ep.Ports) > 0 {
					p.Dropped = append(p.Dropped, Dropped{Ref: ref, Reason: DropPortName,
						Why: fmt.Sprintf("it has no port named %q (its ports: %s): istiod matches endpoints to the port of the service it uses by name", portName, portNames(ep.Ports))})
				}
				continue
			}
			if ep.PodMissing {
				p.Dropped = append(p.Dropped, Dropped{Ref: ref, Reason: DropPodMissing,
					Why: fmt.Sprintf("its EndpointSlice names pod %s, which does not exist (yet): istiod skips the endpoint until the pod does", orNone(ep.Pod))})
				continue
			}
			if reason, why := t.exclude(src, &ep); reason != "" {
				p.Dropped = append(p.Dropped, Dropped{Ref: ref, Reason: reason, Why: why})
				continue
			}
			// filterIstioEndpoint: network view, cluster-local, terminating.
			if len(proxy.NetworkView) > 0 && ep.Network != "" && !slices.Contains(proxy.NetworkView, ep.Network) {
				p.Dropped = append(p.Dropped, Dropped{Ref: ref, Reason: DropNetworkView,
					Why: fmt.Sprintf("the proxy's REQUESTED_NETWORK_VIEW (%s) does not include %s", strings.Join(proxy.NetworkView, ","), ep.Network)})
				continue
			}
			if clusterLocal && ep.Cluster != proxy.Cluster {
				p.Dropped = append(p.Dropped, Dropped{Ref: ref, Reason: DropClusterLocal,
					Why: fmt.Sprintf("%s is cluster-local: only endpoints of the proxy's own cluster (%s) are sent", hostname, orNone(proxy.Cluster))})
				continue
			}
			if ownCluster && ep.Cluster != proxy.Cluster {
				p.Dropped = append(p.Dropped, Dropped{Ref: ref, Reason: DropNotGlobal,
					Why: fmt.Sprintf("%s is not global (ambient multi-network mode): istiod sends sidecars only the endpoints of their own cluster (%s)", hostname, orNone(proxy.Cluster))})
				continue
			}
			if !ep.Ready && ep.Terminating {
				p.Dropped = append(p.Dropped, Dropped{Ref: ref, Reason: DropTerminating,
					Why: "the endpoint is terminating: istiod never sends terminating endpoints"})
				continue
			}
			if !sendUnhealthy && ref.Health == Unhealthy {
				p.Dropped = append(p.Dropped, Dropped{Ref: ref, Reason: DropUnhealthy,
					Why: fmt.Sprintf("the endpoint is not ready, and %s sets outlierDetection.minHealthPercent %d: istiod then leaves unhealthy endpoints out (else Envoy's panic threshold would send them traffic)", ruleNames(t.rule), minHealth)})
				continue
			}
			// Unhealthy (not ready, not terminating) endpoints ARE sent, as
			// UNHEALTHY, by default (PILOT_AUTO_SEND_UNHEALTHY_ENDPOINTS=true),
			// and count in gateway weights below like healthy ones.
			refs = append(refs, ref)
			self := refs[len(refs)-1 : len(refs) : len(refs)]
			grp := groups.groupOf(si, ei)
			direct := Endpoint{Address: ep.Address, Port: epPort, Weight: epWeight(ep), Health: ref.Health, Kind: Local,
				Locality: ep.Locality, Cluster: ep.Cluster, Network: ep.Network, Pod: ep.Pod, Workload: ep.Workload, StandsFor: self}
			if !p.MultiNetwork {
				if ep.Address == "" {
					p.Dropped = append(p.Dropped, noAddress(ref))
					continue
				}
				direct.Why = "no network has a gateway: split horizon is off, every endpoint is sent directly"
				groups.addDirect(grp, direct)
				continue
			}
			// EndpointsByNetworkFilter.
			weight := scaleWeight(epWeight(ep), p.ScaleFactor)
			direct.Weight = weight
			if ep.Network != lastNC[0] || ep.Cluster != lastNC[1] || lastGws == nil {
				lastNC, lastGws = [2]string{ep.Network, ep.Cluster}, ix.forEndpoint(ep.Network, ep.Cluster)
				if lastGws == nil {
					lastGws = []gwKey{}
				}
			}
			gws := lastGws
			force := proxy.Network == "" && ep.Network != "" && len(gws) > 0
			inNetwork := proxy.Network == "" || ep.Network == "" || proxy.Network == ep.Network
			if !force && (inNetwork || len(gws) == 0) {
				if ep.Address == "" {
					p.Dropped = append(p.Dropped, noAddress(ref))
					continue
				}
				direct.Kind, direct.Why = why.direct(proxy.Network, ep.Network)
				groups.addDirect(grp, direct)
				continue
			}
			reach := reachable(gws, v4, v6)
			if len(reach) == 0 {
				p.Dropped = append(p.Dropped, Dropped{Ref: ref, Reason: DropIPFamily,
					Why: fmt.Sprintf("%s has gateways, but none of the proxy's IP family (%s)", ep.Network, family(v4, v6))})
				continue
			}
			if ok, cause, why := t.mtlsFor(hostname, port, ep, epPort); !ok {
				p.Dropped = append(p.Dropped, Dropped{Ref: ref, Reason: DropNoMTLS, Cause: cause,
					Why: "cross-network endpoint without mTLS: " + why + "; the gateway routes by SNI, which needs mTLS"})
				continue
			}
			per := weight / uint32(len(reach))
			kind := Gateway
			if proxy.Network == "" {
				kind = Forced
			}
			for _, gk := range reach {
				groups.addToGateway(grp, ep.Locality, gk, kind, len(refs)-1, per)
			}
		}
	}
	ends := groups.assemble(&p, refs, &gwWhy, proxy)
	p.finishGroups(ends)
	p.LB.PanicThreshold = t.panicThreshold()
	if l, ok := t.effectiveLocalityLB(); ok {
		p.applyLocalityLB(l, ends, ix, snap, proxy, t.directSources())
	}
	// Then what Envoy makes of them.
	p.applyEffects()
	return p
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
// localities there is a gateway entry per group, thousands per mesh.
func gatewayWhy(e *Endpoint, proxy Proxy) string {
	n := strconv.Itoa(len(e.StandsFor)) // no allocation below 100
	if e.Kind == Forced {
		return "the proxy sends no NETWORK, so " + n + " endpoint(s) of " + e.Network + " go through " + e.Network + "'s east-west gateway (istiod forceGateway)"
	}
	return n + " endpoint(s) of " + e.Network + " go through " + e.Network + "'s east-west gateway: " + e.Network + " is not the proxy's network " + proxy.Network
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
