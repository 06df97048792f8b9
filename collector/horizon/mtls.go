package horizon

import (
	"fmt"
	"sort"
	"strings"

	"github.com/meshscope/meshscope/collector"
)

// Causes of a no-mTLS drop.
const (
	CausePodLabel           = "pod-label"
	CausePeerAuthentication = "peer-authentication"
	CauseDestinationRule    = "destination-rule"
)

// mtlsFor mirrors istiod's mtlsChecker (pilot/pkg/xds/endpoints/mtls_checker.go)
// as it decides the endpoint's tlsMode metadata, which the network filter
// then reads: the DestinationRule's TLS mode for the service port (and
// subset) decides when present, but cannot turn on mTLS for a workload
// without the tlsMode label (its metadata stays "disabled"); otherwise the
// tlsMode must be "istio" and the PeerAuthentication for the endpoint's
// port must not DISABLE mTLS.
func (t *target) mtlsFor(host string, svcPort int32, ep collector.Endpoint, epPort uint32) (ok bool, cause, why string) {
	labelled := ep.TLSMode == "istio"
	noLabel := func() string {
		if ep.Workload != "" {
			return fmt.Sprintf("%s has no %s=istio label and names no serviceAccount", ep.Workload, TLSModeLabel)
		}
		return fmt.Sprintf("pod %s lacks %s=istio (no sidecar)", orNone(ep.Pod), TLSModeLabel)
	}
	if mode, set := t.rule.tlsModeFor(t.subset, uint32(svcPort)); set {
		if mode != "ISTIO_MUTUAL" {
			what := fmt.Sprintf("%s port %d", host, svcPort)
			if t.subset != "" {
				what += " subset " + t.subset
			}
			return false, CauseDestinationRule, fmt.Sprintf("DestinationRule %s sets TLS mode %s for %s", strings.Join(t.rule.from, "+"), mode, what)
		}
		if !labelled {
			return false, CausePodLabel, noLabel() + "; the DestinationRule's ISTIO_MUTUAL cannot change that"
		}
		return true, "", ""
	}
	if !labelled {
		return false, CausePodLabel, noLabel()
	}
	if pa, mode := t.cfg.peerAuthentication(t.namespace, &ep, epPort); mode == "DISABLE" {
		return false, CausePeerAuthentication, fmt.Sprintf("PeerAuthentication %s/%s disables mTLS for %s (port %d)", pa.Namespace, pa.Name, endpointName(ep), epPort)
	}
	return true, "", ""
}

func endpointName(ep collector.Endpoint) string {
	if ep.Workload != "" {
		return ep.Workload
	}
	return "pod " + orNone(ep.Pod)
}

// peerAuthentication resolves the mTLS mode for an endpoint as istiod's
// authn policy does (getConfigsForWorkload, ComposePeerAuthentication): the
// workload policy (selector matching the workload's labels as istiod
// augments them; port-level first), else the namespace policy, else the
// mesh policy (the mesh config's root namespace); the oldest of a scope
// wins; UNSET inherits; the default is PERMISSIVE.
func (c *configView) peerAuthentication(ns string, ep *collector.Endpoint, port uint32) (*collector.PeerAuthentication, string) {
	if len(c.pas) == 0 {
		return nil, "PERMISSIVE"
	}
	root := c.mc.RootNamespace
	var workload, namespace, mesh []*collector.PeerAuthentication
	for i := range c.pas {
		a := &c.pas[i]
		switch {
		case a.Namespace == ns && ns != root && len(a.Selector) > 0 && collector.SelectsEndpoint(a.Selector, ep):
			workload = append(workload, a)
		case a.Namespace == root && len(a.Selector) == 0:
			mesh = append(mesh, a)
		case a.Namespace == ns && len(a.Selector) == 0:
			namespace = append(namespace, a)
		}
	}
	for _, l := range [][]*collector.PeerAuthentication{workload, namespace, mesh} {
		sort.SliceStable(l, func(i, j int) bool {
			if !l[i].Created.Equal(l[j].Created) {
				return l[i].Created.Before(l[j].Created)
			}
			return l[i].Name < l[j].Name
		})
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
