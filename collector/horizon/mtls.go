package horizon

import (
	"fmt"
	"sort"
	"strings"

	"github.com/meshscope/meshscope/collector"
)

// RootNamespace is istiod's root (config) namespace: mesh-wide
// PeerAuthentications and DestinationRules live there.
const RootNamespace = "istio-system"

// Causes of a no-mTLS drop.
const (
	CausePodLabel           = "pod-label"
	CausePeerAuthentication = "peer-authentication"
	CauseDestinationRule    = "destination-rule"
)

// policies are the Istio TLS settings the proxy's istiod reads.
type policies struct {
	drs []collector.DestinationRule
	pas []collector.PeerAuthentication
}

func policiesFor(snap *collector.Snapshot, configCluster string) policies {
	var p policies
	for _, d := range snap.DestinationRules {
		if configCluster == "" || d.Cluster == configCluster {
			p.drs = append(p.drs, d)
		}
	}
	for _, a := range snap.PeerAuthentications {
		if configCluster == "" || a.Cluster == configCluster {
			p.pas = append(p.pas, a)
		}
	}
	return p
}

// mtlsFor mirrors istiod's mtlsChecker (pilot/pkg/xds/endpoints/mtls_checker.go)
// as it decides the endpoint's tlsMode metadata, which the network filter
// then reads: a DestinationRule TLS mode for the service port decides when
// present, but cannot turn on mTLS for a pod without the tlsMode label (its
// metadata stays "disabled"); otherwise the label must be "istio" and the
// PeerAuthentication for the endpoint's port must not DISABLE mTLS.
func (p policies) mtlsFor(host, svcNS string, svcPort int32, ep collector.Endpoint, epPort uint32, proxyNS string) (ok bool, cause, why string) {
	labelled := ep.TLSMode == "istio"
	noLabel := func() string { return fmt.Sprintf("pod %s lacks %s=istio (no sidecar)", orNone(ep.Pod), TLSModeLabel) }
	if dr, mode := p.destinationRule(host, svcNS, proxyNS, svcPort); dr != nil {
		if mode != "ISTIO_MUTUAL" {
			return false, CauseDestinationRule, fmt.Sprintf("DestinationRule %s/%s sets TLS mode %s for %s port %d", dr.Namespace, dr.Name, mode, host, svcPort)
		}
		if !labelled {
			return false, CausePodLabel, noLabel() + "; the DestinationRule's ISTIO_MUTUAL cannot change that"
		}
		return true, "", ""
	}
	if !labelled {
		return false, CausePodLabel, noLabel()
	}
	if pa, mode := p.peerAuthentication(svcNS, ep.Labels, epPort); mode == "DISABLE" {
		return false, CausePeerAuthentication, fmt.Sprintf("PeerAuthentication %s/%s disables mTLS for pod %s (port %d)", pa.Namespace, pa.Name, orNone(ep.Pod), epPort)
	}
	return true, "", ""
}

// destinationRule picks the DestinationRule istiod applies to host for a
// proxy in proxyNS (the proxy's namespace, then the service's, then the root
// namespace; in each, the most specific host wins) and its TLS mode for the
// port (port-level settings override the rule's). nil when none sets a mode.
func (p policies) destinationRule(host, svcNS, proxyNS string, port int32) (*collector.DestinationRule, string) {
	if len(p.drs) == 0 {
		return nil, ""
	}
	for _, ns := range [...]string{proxyNS, svcNS, RootNamespace} {
		best := p.bestRule(host, ns)
		if best == nil {
			continue
		}
		mode := best.TLSMode
		if m, ok := best.PortTLS[uint32(port)]; ok {
			mode = m
		}
		if mode == "" {
			return nil, ""
		}
		return best, mode
	}
	return nil, ""
}

// bestRule is the DestinationRule of namespace ns whose host matches host
// most specifically, or nil.
func (p policies) bestRule(host, ns string) *collector.DestinationRule {
	var best *collector.DestinationRule
	bestLen := -1
	for i := range p.drs {
		d := &p.drs[i]
		if d.Namespace != ns {
			continue
		}
		if n := hostMatch(d.Host, d.Namespace, host); n > bestLen {
			best, bestLen = d, n
		}
	}
	return best
}

// hostMatch says how specifically a DestinationRule host (short names
// resolve in the rule's namespace) matches a service hostname: -1 for no
// match, larger for more specific.
func hostMatch(drHost, drNS, host string) int {
	if drHost == "" {
		return -1
	}
	if !strings.Contains(drHost, ".") && drHost != "*" {
		drHost = drHost + "." + drNS + ".svc.cluster.local"
	}
	switch {
	case drHost == host:
		return 1 << 20
	case drHost == "*":
		return 0
	case strings.HasPrefix(drHost, "*.") && strings.HasSuffix(host, drHost[1:]):
		return len(drHost)
	}
	return -1
}

// peerAuthentication resolves the mTLS mode for an endpoint as istiod's
// authn policy does: the workload policy (selector matching the pod's
// labels; port-level first), else the namespace policy, else the mesh
// policy (root namespace); UNSET inherits; the default is PERMISSIVE.
func (p policies) peerAuthentication(ns string, labels map[string]string, port uint32) (*collector.PeerAuthentication, string) {
	if len(p.pas) == 0 {
		return nil, "PERMISSIVE"
	}
	var workload, namespace, mesh []*collector.PeerAuthentication
	for i := range p.pas {
		a := &p.pas[i]
		switch {
		case a.Namespace == ns && len(a.Selector) > 0 && selects(a.Selector, labels):
			workload = append(workload, a)
		case a.Namespace == ns && len(a.Selector) == 0:
			namespace = append(namespace, a)
		case a.Namespace == RootNamespace && len(a.Selector) == 0:
			mesh = append(mesh, a)
		}
	}
	for _, l := range [][]*collector.PeerAuthentication{workload, namespace, mesh} {
		sort.Slice(l, func(i, j int) bool { return l[i].Name < l[j].Name })
	}
	if len(workload) > 0 {
		w := workload[0]
		if m, ok := w.PortModes[port]; ok && m != "" && m != "UNSET" {
			return w, m
		}
		if w.Mode != "" && w.Mode != "UNSET" {
			return w, w.Mode
		}
	}
	for _, l := range [][]*collector.PeerAuthentication{namespace, mesh} {
		if len(l) > 0 && l[0].Mode != "" && l[0].Mode != "UNSET" {
			return l[0], l[0].Mode
		}
	}
	return nil, "PERMISSIVE"
}

func selects(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}
