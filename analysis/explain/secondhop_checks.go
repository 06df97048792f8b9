package explain

import (
	"fmt"
	"strings"

	"github.com/meshscope/meshscope/analysis/gatewayhop"
	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/model"
)

// doctor's checks of the second hop: every service port (and
// DestinationRule subset) that another network reaches through a gateway
// is followed into that gateway (gatewayhop), and what each control plane
// really sends a gateway pod is compared with its prediction.

// secondHopProblems reports each path into a network that its gateway
// cannot carry (grouped per gateway and cause: a Gateway missing is one
// row for every service it loses), the Istio Gateways istiod cannot read,
// and gateway pods without the network label. A path is one a sidecar of
// another network really takes: a gateway entry of its prediction for the
// service port and each subset it sees (a sidecar in the service's own
// namespace, where the DestinationRules of a service usually apply). One
// prediction for a proxy that sends no NETWORK gives them all at once:
// forceGateway sends it every network's endpoints through the gateways,
// with the mTLS rule, a sidecar of any other network is sent for that
// network (EndpointsByNetworkFilter takes the same branch for both).
func secondHopProblems(snap *model.Snapshot, in *Inputs) []model.Problem {
	k := NewHops(in.Planes, in.Fleet)
	ps := istioGatewayProblems(snap)
	if len(k.Gateways()) == 0 || len(snap.Networks) < 2 {
		return ps
	}
	ix := in.Planes.Of("").Index // the whole mesh: a proxy of no control plane's cut
	cluster := ""
	for _, c := range snap.Clusters {
		if c.IsContext() && cluster == "" {
			cluster = c.ID
		}
	}
	for _, svc := range snap.Services {
		if !IsGatewayService(svc) {
			ps = append(ps, pathProblems(snap, ix, k, svc, horizon.Proxy{Cluster: cluster, Namespace: svc.Namespace})...)
		}
	}
	return append(ps, gatewayLabelProblems(k.Gateways())...)
}

// pathProblems follows every gateway entry src (a proxy without NETWORK)
// is sent for each port and subset of svc into its gateway.
func pathProblems(snap *model.Snapshot, ix *horizon.Index, k *gatewayhop.Checker, svc *model.Service, src horizon.Proxy) []model.Problem {
	var ps []model.Problem
	subsets := []string{""}
	if sc, ok := horizon.ScopeOf(snap, ix, svc.Hostname, src); ok {
		subsets = append(subsets, sc.Subsets...)
	}
	for _, p := range svc.Ports {
		if strings.EqualFold(p.Protocol, "UDP") {
			continue
		}
		for _, sub := range subsets {
			seen := map[string]bool{}
			for _, e := range horizon.PredictSubset(snap, ix, svc.Hostname, sub, p.Port, src).Endpoints {
				key := model.HostPort(e.Address, e.Port)
				if e.Kind != horizon.Forced || seen[key] {
					continue
				}
				seen[key] = true
				if h := k.Check(e.Network, e.Address, e.Port, svc.Hostname, p.Port, sub); h.Kind != "" {
					ps = append(ps, hopProblem(svc, h, p.Port, sub))
				}
			}
		}
	}
	return ps
}

// hopProblem is one path its gateway cannot carry (or carries with a
// caveat), grouped with the others of the same gateway and cause.
func hopProblem(svc *model.Service, h gatewayhop.Hop, port int32, subset string) model.Problem {
	sev := model.SeverityError
	if h.State != gatewayhop.Breaks {
		sev = model.SeverityWarning
	}
	what := fmt.Sprintf("%s:%d", model.ShortHost(svc.Hostname), port)
	if subset != "" {
		what += " subset " + subset
	}
	verb := "cannot reach it through"
	if sev == model.SeverityWarning {
		verb = "reach it through"
	}
	gw := fmt.Sprintf("%s's gateway %s", h.Network, model.HostPort(h.Address, h.Port))
	return model.Problem{Severity: sev, Kind: h.Kind, Cluster: h.Cluster, Network: h.Network, Service: svc.Hostname, ControlPlane: h.ControlPlane, Objects: h.Objects,
		Sentence: fmt.Sprintf("%s in %s: other networks %s %s (SNI %s): %s", what, h.Network, verb, gw, h.SNI, h.Why),
		Group: &model.ProblemGroup{Key: h.Address + "\x00" + h.Why, Subject: what,
			Format: fmt.Sprintf("{n} service ports in %s: other networks %s %s: %s ({examples})", h.Network, verb, gw, h.Why)}}
}

// istioGatewayProblems are the Istio Gateways istiod cannot read.
func istioGatewayProblems(snap *model.Snapshot) []model.Problem {
	var ps []model.Problem
	for _, g := range snap.IstioGateways {
		if g.Error != "" {
			ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemIstioGatewayInvalid, Cluster: g.Cluster,
				Sentence: fmt.Sprintf("Gateway %s in %s: %s", g.Key(), g.Cluster, g.Error)})
		}
	}
	return ps
}

// gatewayLabelProblems are gateway pods without the network label whose
// proxy still sends a NETWORK (from the injector's values): the hop works
// today, but the pod tells istiod's injector nothing, so a pod made after a
// change of the install's values sends none (istio#54909).
func gatewayLabelProblems(gws []gatewayhop.Gateway) []model.Problem {
	var ps []model.Problem
	for _, g := range gws {
		for _, w := range g.Pods {
			if w.NetworkLabel != "" || w.Proxy == nil || w.Proxy.Network == "" {
				continue
			}
			ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemHopNetwork, Cluster: g.Cluster, Network: g.Network, Objects: []model.ObjectRef{w.Ref()},
				Sentence: fmt.Sprintf("gateway pod %s/%s of %s lacks the label %s: its proxy sends NETWORK=%s from the injector's values, and a pod injected without them sends none (the hop then loops back to the gateway)",
					w.Namespace, w.Pod, g.Name(), model.LabelNetwork, w.Proxy.Network)})
		}
	}
	return ps
}
