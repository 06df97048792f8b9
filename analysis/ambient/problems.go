package ambient

import (
	"fmt"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// InUse reports whether any cluster runs ambient mode: a pod istio-cni
// redirects, a namespace in ambient data-plane mode, or a Gateway of an
// ambient class (Snapshot.AmbientInUse). Problems is quiet for a mesh without.
func InUse(snap *model.Snapshot) bool { return snap.AmbientInUse() }

// Ztunnels are the control planes among cps whose istiod runs ambient
// multi-network mode (its settings): the ones meshscope impersonates a
// ztunnel on and predicts WDS for. An istiod without ambient refuses
// ztunnels; one with ambient but not multi-network builds its workloads
// from its own cluster alone, which meshscope does not model yet.
func Ztunnels(snap *model.Snapshot, cps []string) []string {
	var out []string
	for _, cp := range cps {
		if snap.SettingsFor(cp).AmbientMultiNetwork() {
			out = append(out, cp)
		}
	}
	return out
}

// Problems lists what keeps each istiod's ztunnels from reaching a
// service's pods across networks: a network without a usable east-west
// gateway (error), several gateways for one network (istiod picks any),
// east-west Gateways istiod ignores, services global in some clusters
// but not in others (their pods elsewhere are dropped), and waypoints that
// the Service resource istiod sends does not carry although the service
// names one (see waypointProblems). Services that are
// global nowhere are taken as meant to stay local and not reported.
// viewOf is each control plane's view (plane.View.Ambient).
func Problems(snap *model.Snapshot, viewOf func(cp string) *View) []model.Problem {
	if !InUse(snap) {
		return nil
	}
	var out []model.Problem
	for _, cp := range Ztunnels(snap, snap.ControlPlanes()) {
		v := viewOf(cp)
		out = append(out, v.gatewayProblems()...)
		for _, svc := range snap.Services {
			out = append(out, v.serviceProblems(svc)...)
		}
	}
	return out
}

func (v *View) gatewayProblems() []model.Problem {
	var out []model.Problem
	byNet := map[string][]networkGateway{}
	var nets []string
	for _, g := range v.Gateways {
		if _, ok := byNet[g.Network]; !ok {
			nets = append(nets, g.Network)
		}
		byNet[g.Network] = append(byNet[g.Network], g)
	}
	for _, n := range nets {
		if gws := byNet[n]; len(gws) > 1 {
			var names []string
			for _, g := range gws {
				names = append(names, g.Source+" "+g.Address+" ("+g.Cluster+")")
			}
			out = append(out, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemAmbientSeveralGateways, ControlPlane: v.ControlPlane, Network: n,
				Sentence: fmt.Sprintf("istiod of %s knows %d east-west gateways for network %s (%s): it sends ztunnels the first it finds, in no fixed order (istio/istio#59273)",
					v.ControlPlane, len(gws), n, strings.Join(names, ", "))})
		}
	}
	for _, id := range v.Clusters {
		a := v.snap.AmbientFor(id)
		if a == nil {
			continue
		}
		for _, g := range a.Gateways {
			if why := v.ignored(id, g); why != "" {
				out = append(out, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemAmbientGatewayIgnored, ControlPlane: v.ControlPlane, Cluster: id, Network: g.Network,
					Sentence: fmt.Sprintf("istiod of %s ignores Gateway %s in %s: %s", v.ControlPlane, g.Source(), id, why)})
			}
		}
	}
	return out
}

// ignored says why an east-west Gateway of cluster yields no network
// gateway for istiod ("" when it yields one, or is not meant to).
func (v *View) ignored(cluster string, g model.K8sGateway) string {
	local := cluster == v.cluster
	switch {
	case g.Class == model.ClassEastWest && local:
		return "" // used by the other clusters' istiods, not by its own
	case g.Class == model.ClassRemote && !local:
		return "" // read only in the cluster that declares it
	case g.Class != model.ClassEastWest && g.Class != model.ClassRemote:
		return ""
	case g.Network == "":
		return "it has no label " + model.LabelNetwork
	}
	if _, ok := hboneListener(g, !local); !ok {
		if local {
			return "it has no HBONE listener"
		}
		return "it has no HBONE listener with TLS mode Terminate"
	}
	for _, a := range g.Addresses {
		if a.Type == model.AddressTypeIP || a.Type == model.AddressTypeHostname {
			return ""
		}
	}
	return "it has no status address of type IPAddress or Hostname (its gateway controller or load balancer has not given it one)"
}

func (v *View) serviceProblems(svc *model.Service) []model.Problem {
	p := v.Predict(svc.Hostname)
	out := v.waypointProblems(svc, p)
	for _, d := range p.Dropped {
		if len(d.Pods) == 0 {
			continue
		}
		switch d.Reason {
		case DropNoGateway:
			out = append(out, model.Problem{Severity: model.SeverityError, Kind: model.ProblemAmbientNoGateway, ControlPlane: v.ControlPlane, Cluster: strings.Join(d.Clusters, ","),
				Network: d.Network, Service: svc.Hostname,
				Sentence: fmt.Sprintf("ztunnels of %s's istiod cannot reach the %d pod(s) of %s in network %s: %s", v.ControlPlane, len(d.Pods), svc.Hostname, orNone(d.Network), d.Why)})
		case DropNotGlobal, DropLocalNotGlobal:
			if !v.globalSomewhere(svc) {
				continue // local everywhere: meant to be
			}
			var objs []model.ObjectRef
			for _, c := range d.Clusters {
				objs = append(objs, model.ObjectRef{Cluster: c, Kind: "Service", Namespace: svc.Namespace, Name: svc.Name})
			}
			out = append(out, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemAmbientScopeMismatch, ControlPlane: v.ControlPlane, Cluster: strings.Join(d.Clusters, ","),
				Network: d.Network, Service: svc.Hostname, Objects: objs,
				Sentence: fmt.Sprintf("%s is global in some clusters but not in others: ztunnels of %s's istiod do not get its %d pod(s) in %s (%s)",
					svc.Hostname, v.ControlPlane, len(d.Pods), strings.Join(d.Clusters, ","), d.Why)})
		}
	}
	return out
}

func (v *View) globalSomewhere(svc *model.Service) bool {
	for _, id := range v.Clusters {
		if sc := svc.Clusters[id]; sc != nil && !sc.NoService && v.scopeIn(id, svc.Namespace, svc.Hostname) == Global {
			return true
		}
	}
	return false
}

// Mode is a service's data-plane mode, from its pods.
type Mode string

const (
	ModeAmbient Mode = "ambient" // every pod redirected by istio-cni
	ModeSidecar Mode = "sidecar" // every pod with a sidecar
	ModeMixed   Mode = "mixed"   // some of each, or meshed and unmeshed pods
	ModeNone    Mode = "none"    // no meshed pod (or no pod)
)

// DataplaneMode says how a service's pods are meshed, in every cluster: a
// pod is ambient when istio-cni redirects it, sidecar when it carries a
// sidecar (label security.istio.io/tlsMode=istio), else unmeshed.
func DataplaneMode(snap *model.Snapshot, hostname string) Mode {
	svc := snap.Service(hostname)
	if svc == nil {
		return ModeNone
	}
	var ambient, sidecar, plain int
	for id, sc := range svc.Clusters {
		a := snap.AmbientFor(id)
		seen := map[string]bool{}
		for _, ep := range sc.Endpoints {
			if ep.Pod == "" || seen[ep.Pod] {
				continue
			}
			seen[ep.Pod] = true
			switch {
			case a.Pod(svc.Namespace, ep.Pod).Redirected:
				ambient++
			case ep.TLSMode == "istio":
				sidecar++
			default:
				plain++
			}
		}
	}
	switch {
	case ambient == 0 && sidecar == 0:
		return ModeNone
	case sidecar == 0 && plain == 0:
		return ModeAmbient
	case ambient == 0 && plain == 0:
		return ModeSidecar
	}
	return ModeMixed
}
