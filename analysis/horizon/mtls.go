package horizon

import (
	"fmt"
	"sort"
	"strings"

	"github.com/meshscope/meshscope/model"
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
// For a DestinationRule or PeerAuthentication, config names it.
func (t *target) mtlsFor(host string, svcPort int32, ep model.Endpoint, epPort uint32) (ok bool, cause, why string, config *model.ObjectRef) {
	labelled := ep.TLSMode == "istio"
	noLabel := func() string {
		if ep.Workload != "" {
			return fmt.Sprintf("%s has no %s=istio label and names no serviceAccount", ep.Workload, model.LabelTLSMode)
		}
		return fmt.Sprintf("pod %s lacks %s=istio (no sidecar)", orNone(ep.Pod), model.LabelTLSMode)
	}
	if mode, set := t.rule.tlsModeFor(t.subset, uint32(svcPort)); set {
		if mode != "ISTIO_MUTUAL" {
			what := fmt.Sprintf("%s port %d", host, svcPort)
			if t.subset != "" {
				what += " subset " + t.subset
			}
			dr := t.rule.tlsFrom(t.subset, uint32(svcPort))
			return false, CauseDestinationRule, fmt.Sprintf("DestinationRule %s sets TLS mode %s for %s", strings.Join(t.rule.from, "+"), mode, what), &dr
		}
		if !labelled {
			return false, CausePodLabel, noLabel() + "; the DestinationRule's ISTIO_MUTUAL cannot change that", nil
		}
		return true, "", "", nil
	}
	if !labelled {
		return false, CausePodLabel, noLabel(), nil
	}
	if pa, mode := t.cfg.peerAuthentication(t.namespace, &ep, epPort); mode == "DISABLE" {
		ref := model.ObjectRef{Cluster: pa.Cluster, Kind: "PeerAuthentication", Namespace: pa.Namespace, Name: pa.Name}
		return false, CausePeerAuthentication, fmt.Sprintf("PeerAuthentication %s/%s disables mTLS for %s (port %d)", pa.Namespace, pa.Name, endpointName(ep), epPort), &ref
	}
	return true, "", "", nil
}

func endpointName(ep model.Endpoint) string {
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
func (c *configView) peerAuthentication(ns string, ep *model.Endpoint, port uint32) (*model.PeerAuthentication, string) {
	if len(c.pas) == 0 {
		return nil, "PERMISSIVE"
	}
	root := c.mc.RootNamespace
	var workload, namespace, mesh *model.PeerAuthentication
	if ns != root {
		for _, a := range c.pasByNS[ns] { // oldest first
			switch {
			case len(a.Selector) > 0:
				if workload == nil && model.SelectsEndpoint(a.Selector, ep) {
					workload = a
				}
			case namespace == nil:
				namespace = a
			}
		}
	}
	for _, a := range c.pasByNS[root] {
		if len(a.Selector) == 0 {
			mesh = a
			break
		}
	}
	if workload != nil {
		if m, ok := workload.PortModes[port]; ok && m != "" && m != "UNSET" {
			return workload, m
		}
		if workload.Mode != "" && workload.Mode != "UNSET" {
			return workload, workload.Mode
		}
	}
	for _, a := range []*model.PeerAuthentication{namespace, mesh} {
		if a != nil && a.Mode != "" && a.Mode != "UNSET" {
			return a, a.Mode
		}
	}
	return nil, "PERMISSIVE"
}

// indexPeerAuthentications sorts a config view's PeerAuthentications by
// namespace, oldest first (the oldest of a scope wins).
func (c *configView) indexPeerAuthentications() {
	c.pasByNS = map[string][]*model.PeerAuthentication{}
	for i := range c.pas {
		a := &c.pas[i]
		c.pasByNS[a.Namespace] = append(c.pasByNS[a.Namespace], a)
	}
	for _, l := range c.pasByNS {
		sort.SliceStable(l, func(i, j int) bool {
			if !l[i].Created.Equal(l[j].Created) {
				return l[i].Created.Before(l[j].Created)
			}
			return l[i].Name < l[j].Name
		})
	}
}
