package explain

import (
	"fmt"
	"strings"

	"github.com/meshscope/meshscope/analysis/ambient"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// SentWDS is what one control plane really sent an impersonated ztunnel
// (ambient mode): one state for every ztunnel of that istiod.
type SentWDS struct {
	ControlPlane string
	// Service gives what the ztunnel holds for a service key
	// ("namespace/hostname"); nil when nothing arrived.
	Service func(key string) xdsclient.WDSServiceView
	// Error says why nothing arrived ("" when something did).
	Error string
}

// ambientProblems are analysis/ambient's problems (what keeps each
// istiod's ztunnels from reaching a service's pods across networks) as
// doctor rows: the cluster is the one concerned, else the control plane.
func ambientProblems(planes *plane.Set) []model.Problem {
	var ps []model.Problem
	for _, p := range ambient.Problems(planes.Snapshot(), planes.Ambient) {
		cluster := p.Cluster
		if cluster == "" {
			cluster = p.ControlPlane
		}
		ps = append(ps, model.Problem{Severity: p.Severity, Kind: p.Kind, Cluster: cluster, Service: p.Service, Sentence: p.Sentence, Objects: p.Objects})
	}
	return ps
}

// wdsProblems compares what each control plane really sent a ztunnel with
// what it is predicted to send, for every service with pods in ambient
// mode (ambient or mixed): each service that differs is one error row with
// the differences.
func wdsProblems(_ *model.Snapshot, in *Inputs) []model.Problem {
	planes, snap := in.Planes, in.Planes.Snapshot()
	var ps []model.Problem
	for _, s := range in.WDS {
		if s.Service == nil {
			ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemIstiodUnreachable, Cluster: s.ControlPlane,
				Sentence: fmt.Sprintf("cannot compare what istiod %s sends ztunnels with the prediction: %s", s.ControlPlane, orText(s.Error, "nothing arrived"))})
			continue
		}
		v := planes.Of(s.ControlPlane).Ambient()
		for _, svc := range snap.Services {
			if m := ambient.DataplaneMode(snap, svc.Hostname); m != ambient.ModeAmbient && m != ambient.ModeMixed {
				continue
			}
			actual := s.Service(ambient.ServiceKey(svc.Namespace, svc.Hostname))
			e := ambient.Explain(v, svc.Hostname, &actual, "")
			if e.Verdict != ambient.Mismatch {
				continue
			}
			why := make([]string, len(e.Differences))
			for i, d := range e.Differences {
				why[i] = d.Why
			}
			ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemWDSDiffers, Cluster: s.ControlPlane, Service: svc.Hostname,
				Sentence: fmt.Sprintf("what istiod %s sends ztunnels for %s differs from the prediction (meshscope explain %s --from ztunnel@%s): %s",
					s.ControlPlane, model.ShortHost(svc.Hostname), model.ShortHost(svc.Hostname), s.ControlPlane, strings.Join(why, "; "))})
		}
	}
	return ps
}
