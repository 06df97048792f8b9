package explain

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/meshscope/meshscope/model"
)

// eastWestProblems are the east-west gateway Services that cannot work:
// labelled with a network but exposing neither the mTLS port istiod looks
// for nor HBONE; a load balancer still pending (an error once it has been
// pending longer than pendingAfter); no address at all; no ready pod behind
// it; and one address used by the gateways of two networks. Hostname
// gateways are reported by hostnameGatewayProblems.
func eastWestProblems(snap *model.Snapshot, views []model.IstiodView, now time.Time, pendingAfter time.Duration) []model.Problem {
	ps := hostnameGatewayProblems(snap, views, now)
	ps = append(ps, ambientGatewayNameProblems(snap)...)
	for _, svc := range snap.Services {
		for _, cid := range sortedKeys(svc.Clusters) {
			sic := svc.Clusters[cid]
			nw := sic.Labels[model.LabelNetwork]
			if nw == "" || sic.NoService {
				continue
			}
			name := svc.Namespace + "/" + svc.Name
			ps = append(ps, gatewayServiceProblems(snap, svc, sic, name, nw, now, pendingAfter)...)
		}
	}
	ps = append(ps, gatewayAddressConflicts(snap)...)
	return ps
}

func gatewayServiceProblems(snap *model.Snapshot, svc *model.Service, sic *model.ServiceInCluster, name, nw string, now time.Time, pendingAfter time.Duration) []model.Problem {
	var ps []model.Problem
	cid := sic.Cluster
	ref := []model.ObjectRef{{Cluster: cid, Kind: "Service", Namespace: svc.Namespace, Name: svc.Name}}
	gwPort, portFrom := int32(model.DefaultGatewayPort), "the default mTLS port"
	if s := sic.Labels[model.LabelGatewayPort]; s != "" {
		if p, err := strconv.Atoi(s); err == nil {
			gwPort, portFrom = int32(p), fmt.Sprintf("the port its label %s names", model.LabelGatewayPort)
		} else {
			portFrom = fmt.Sprintf("the default mTLS port (its label %s=%q is no number, which istiod ignores)", model.LabelGatewayPort, s)
		}
	}
	found := gatewayFound(snap, name, cid)
	switch {
	case !exposesPort(sic, gwPort) && !exposesPort(sic, model.DefaultGatewayHBONEPort):
		ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemGatewayPort, Cluster: cid, Service: svc.Hostname, Objects: ref,
			Sentence: fmt.Sprintf("gateway Service %s in %s is labelled %s=%s but exposes neither port %d (%s) nor HBONE %d (its ports: %s): istiod does not take it as %s's gateway — expose port %d (named tls) or fix the label",
				name, cid, model.LabelNetwork, nw, gwPort, portFrom, model.DefaultGatewayHBONEPort, portsOf(sic), nw, gwPort)})
	case !found && sic.LBPending:
		age := now.Sub(sic.Created)
		sev, what := model.SeverityInfo, "is still waiting for its load balancer"
		if sic.Created.IsZero() || age > pendingAfter {
			sev, what = model.SeverityError, "has been waiting for its load balancer"
		}
		ps = append(ps, model.Problem{Severity: sev, Kind: model.ProblemGatewayLBPending, Cluster: cid, Service: svc.Hostname, Objects: ref,
			Sentence: fmt.Sprintf("gateway Service %s in %s (type LoadBalancer) %s for %s (error after %s): without an ingress address it is no gateway for %s, so other networks reach %s's endpoints directly or not at all — check the cloud load balancer controller and its events",
				name, cid, what, ageText(sic.Created, now), pendingAfter, nw, nw)})
	case !found:
		ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemGatewayNoAddress, Cluster: cid, Service: svc.Hostname, Objects: ref,
			Sentence: fmt.Sprintf("gateway Service %s in %s is labelled %s=%s but has no usable address (load-balancer ingress IP/hostname or externalIP): it is no gateway for %s", name, cid, model.LabelNetwork, nw, nw)})
	}
	if readyEndpoints(sic) == 0 {
		ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemGatewayNotReady, Cluster: cid, Service: svc.Hostname, Objects: ref,
			Sentence: fmt.Sprintf("gateway Service %s in %s has no ready pod behind it (%d endpoint(s), none ready): traffic other networks send to %s's gateway in %s has nowhere to go — check the gateway Deployment", name, cid, len(sic.Endpoints), nw, cid)})
	}
	return ps
}

// gatewayAddressConflicts: one address used by gateways of two networks.
// Proxies send both networks' traffic to the same place; the load balancer
// there can only be one network's gateway.
func gatewayAddressConflicts(snap *model.Snapshot) []model.Problem {
	var ps []model.Problem
	byAddr := map[string][]model.Gateway{}
	var addrs []string
	for _, g := range snap.Gateways {
		if byAddr[g.Address] == nil {
			addrs = append(addrs, g.Address)
		}
		byAddr[g.Address] = append(byAddr[g.Address], g)
	}
	for _, a := range addrs {
		gs := byAddr[a]
		nets := map[string]bool{}
		var who []string
		for _, g := range gs {
			if !nets[g.Network] {
				who = append(who, fmt.Sprintf("%s (%s in %s)", g.Network, orText(orText(g.Service, g.Gateway), string(g.From)), orText(g.Cluster, "meshNetworks")))
			}
			nets[g.Network] = true
		}
		if len(nets) < 2 {
			continue
		}
		ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemGatewayAddressConflict, Cluster: gs[len(gs)-1].Cluster,
			Sentence: fmt.Sprintf("gateways of %d networks share address %s: %s — proxies send every one of those networks' traffic to one load balancer, which can only be one network's gateway; give each network's gateway its own address",
				len(nets), a, strings.Join(who, ", "))})
	}
	return ps
}

func exposesPort(sic *model.ServiceInCluster, port int32) bool {
	for _, p := range sic.Ports {
		if p.Port == port {
			return true
		}
	}
	return false
}

func portsOf(sic *model.ServiceInCluster) string {
	var out []string
	for _, p := range sic.Ports {
		out = append(out, fmt.Sprintf("%d %s", p.Port, orText(p.Name, "unnamed")))
	}
	return orText(strings.Join(out, ", "), "none")
}

// ageText says how long ago t was ("3m12s"), or "an unknown time".
func ageText(t, now time.Time) string {
	if t.IsZero() {
		return "an unknown time"
	}
	return now.Sub(t).Round(time.Second).String()
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
