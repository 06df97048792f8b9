package explain

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// Sent is what one control plane really sent one impersonated proxy.
type Sent struct {
	ControlPlane string
	Viewpoint    xdsclient.Viewpoint
	// EDS holds every load assignment received, by Envoy cluster name.
	EDS map[string]xdsclient.LoadAssignment
	// Clusters are the names of the EDS clusters CDS listed.
	Clusters []string
	// Error says why nothing, or not everything, arrived ("" when complete).
	Error string
}

// StaleTracker remembers when each stale endpoint was first seen, so that a
// reader that diagnoses again and again (the UI) can say how long it has
// been stale. Safe for concurrent use.
type StaleTracker struct {
	mu    sync.Mutex
	first map[string]time.Time
}

// firstSeen records key as stale at now (if new) and returns when it was
// first seen; keys not in seen are forgotten (they are no longer stale).
func (t *StaleTracker) firstSeen(key string, now time.Time) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.first == nil {
		t.first = map[string]time.Time{}
	}
	if at, ok := t.first[key]; ok {
		return at
	}
	t.first[key] = now
	return now
}

// forget drops every key but those in keep.
func (t *StaleTracker) forget(keep map[string]bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k := range t.first {
		if !keep[k] {
			delete(t.first, k)
		}
	}
}

// sentProblems compares what each control plane really sent with what it is
// predicted to send from the clusters it reads, service by service, and
// says each difference with its cause. An endpoint istiod still sends
// whose pod is gone, or not ready while sent healthy, is its own kind
// (stale-endpoint, istio/istio#54997, #32310) with how long it has been so.
func sentProblems(_ *model.Snapshot, in *Inputs) []model.Problem {
	planes := in.Planes
	snap := planes.Snapshot()
	var ps []model.Problem
	stale := map[string]bool{}
	for _, s := range in.Sent {
		who := fmt.Sprintf("istiod %s", s.ControlPlane)
		if len(s.Clusters) == 0 && len(s.EDS) == 0 {
			ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemIstiodUnreachable, Cluster: s.ControlPlane,
				Sentence: fmt.Sprintf("cannot compare what %s sends a %s proxy with the prediction: %s", who, s.Viewpoint, orText(s.Error, "nothing arrived"))})
			continue
		}
		pv := planes.Of(s.ControlPlane)
		view := pv.Snap
		proxy := pv.Proxy(horizon.ProxyOf(s.Viewpoint))
		for _, svc := range view.Services {
			if IsGatewayService(svc) {
				continue
			}
			for _, port := range svc.Ports {
				name := horizon.EDSClusterName(svc.Hostname, port.Port)
				pred := pv.Predict(svc.Hostname, "", port.Port, proxy)
				la, ok := s.EDS[name]
				if !ok {
					if len(pred.Endpoints) > 0 && !slices.Contains(s.Clusters, name) && s.Error == "" {
						ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemXDSDiffers, Cluster: s.ControlPlane, Service: svc.Hostname,
							Sentence: fmt.Sprintf("%s sends a %s proxy no cluster %s, although meshscope predicts %d endpoint(s): istiod does not know the service, or a Sidecar or exportTo hides it from the proxy's namespace (%s)",
								who, s.Viewpoint, name, len(pred.Endpoints), proxy.Namespace)})
					}
					continue
				}
				actual := attribute(view, svc.Hostname, la, proxy, pred)
				_, diffs := compare(pred, actual, true)
				for _, d := range diffs {
					p := diffProblem(snap, s, who, svc.Hostname, port.Port, d, la, *in, stale)
					ps = append(ps, p)
				}
			}
		}
	}
	if in.Stale != nil {
		in.Stale.forget(stale)
	}
	return ps
}

// diffProblem turns one difference into a problem, recognising stale
// endpoints: a direct endpoint istiod sends whose pod meshscope finds gone,
// or not ready while istiod sends it healthy, in a cluster meshscope reads
// and has synced.
func diffProblem(snap *model.Snapshot, s Sent, who, host string, port int32, d Difference, la xdsclient.LoadAssignment, in Inputs, stale map[string]bool) model.Problem {
	var sentEP *xdsclient.Endpoint
	for i := range la.Endpoints {
		if la.Endpoints[i].Address == d.Address && la.Endpoints[i].Port == d.Port {
			sentEP = &la.Endpoints[i]
		}
	}
	if sentEP != nil && !sentEP.Gateway() && (d.Kind == DiffUnexpected || d.Kind == DiffHealth) {
		if p, ok := staleProblem(snap, s, who, host, port, d, *sentEP, in, stale); ok {
			return p
		}
	}
	sev := model.SeverityError
	if d.Kind == DiffWeight || d.Kind == DiffHealth {
		sev = model.SeverityWarning
	}
	return model.Problem{Severity: sev, Kind: model.ProblemXDSDiffers, Cluster: s.ControlPlane, Service: host,
		Sentence: fmt.Sprintf("%s → %s proxy, %s port %d: %s", who, s.Viewpoint, model.ShortHost(host), port, d.Sentence),
		Group: &model.ProblemGroup{Key: "xds|" + s.ControlPlane + "|" + s.Viewpoint.String() + "|" + string(d.Kind), Subject: model.ShortHost(host) + " " + d.Address,
			Format: fmt.Sprintf("%s sends a %s proxy {n} endpoints other than predicted (%s; {examples}) — e.g. %s", who, s.Viewpoint, d.Kind, d.Sentence)}}
}

func staleProblem(snap *model.Snapshot, s Sent, who, host string, port int32, d Difference, sent xdsclient.Endpoint, in Inputs, stale map[string]bool) (model.Problem, bool) {
	cid := sent.Workload.Cluster
	c := snap.ClusterByID(cid)
	if c == nil || c.State != model.StateSynced {
		return model.Problem{}, false // meshscope cannot tell what is there now
	}
	svc := snap.Service(host)
	var ep *model.Endpoint
	if svc != nil {
		ep = findEndpoint(svc, cid, sent.Address)
		if ep != nil && ep.Cluster != cid {
			ep = nil
		}
	}
	what := ""
	switch {
	case ep == nil && d.Kind == DiffUnexpected:
		what = fmt.Sprintf("%s has no such endpoint any more (its pod of workload %s is gone)", cid, orText(sent.Workload.Name, "unknown"))
	case ep != nil && !ep.Ready && sent.Health == string(horizon.Healthy):
		what = fmt.Sprintf("pod %s in %s is not ready, but istiod sends it HEALTHY", orText(ep.Pod, sent.Workload.Name), cid)
	default:
		return model.Problem{}, false
	}
	key := s.ControlPlane + "|" + cid + "|" + sent.Key()
	stale[key] = true
	first := in.Since
	how := "at least %s (as long as meshscope has been watching)"
	if in.Stale != nil {
		if at := in.Stale.firstSeen(key, in.Now); at.Before(in.Now) {
			first, how = at, "%s"
		}
	}
	dur := fmt.Sprintf(how, in.Now.Sub(first).Round(time.Second))
	via := "its own cluster"
	if cid != s.ControlPlane {
		var names []string
		for _, src := range c.SecretsFrom(s.ControlPlane) {
			names = append(names, src.Name)
		}
		via = "remote secret " + orText(strings.Join(names, ", "), "(none found)") + " in " + s.ControlPlane
	}
	reads := "meshscope reads " + cid + " through " + string(c.Source.Kind) + " " + c.Source.Name
	return model.Problem{Severity: model.SeverityError, Kind: model.ProblemStaleEndpoint, Cluster: cid, Service: host, ControlPlane: s.ControlPlane,
		Sentence: fmt.Sprintf("%s still sends %s (workload %s, %s) to a %s proxy for %s port %d, but %s (%s): its view of %s has been stale for %s — its watch of %s (through %s) may be broken; check istiod's log, fix the credentials, or restart istiod to resync",
			who, sent.Key(), orText(sent.Workload.Name, "?"), cid, s.Viewpoint, model.ShortHost(host), port, what, reads, cid, dur, cid, via),
		Group: &model.ProblemGroup{Key: "stale|" + s.ControlPlane + "|" + cid, Subject: model.ShortHost(host) + " " + sent.Key(),
			Format: fmt.Sprintf("%s still sends {n} endpoints of %s whose pods are gone or not ready ({examples}): its view of %s has been stale for %s — its watch of %s (through %s) may be broken; check istiod's log, fix the credentials, or restart istiod to resync", who, cid, cid, dur, cid, via)}}, true
}
