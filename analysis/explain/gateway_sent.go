package explain

import (
	"fmt"
	"sort"

	"github.com/meshscope/meshscope/analysis/gatewayhop"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// SentGateway is what one control plane really sent one impersonated
// east-west gateway pod (a router with the pod's identity).
type SentGateway struct {
	ControlPlane string
	// Gateway is "NETWORK ADDRESS:PORT" of the gateway the pod is behind.
	Gateway   string
	Workload  gatewayhop.Workload
	Listeners []xdsclient.Listener
	Clusters  []xdsclient.Cluster
	EDS       map[string]xdsclient.LoadAssignment
	// Error says why nothing, or not everything, arrived.
	Error string
}

// GatewayViewpoints are the gateway pods meshscope impersonates to see
// what the control planes send them: every ready pod behind a network
// gateway Service that runs a router proxy, once per control plane in cps
// (its own control plane when cps is empty).
func GatewayViewpoints(snap *model.Snapshot, cps []string) []SentGateway {
	var out []SentGateway
	for _, g := range gatewayhop.Gateways(snap) {
		for _, w := range g.Pods {
			if !w.Ready || !w.Router() {
				continue
			}
			planes := cps
			if len(planes) == 0 {
				planes = []string{w.ControlPlane}
			}
			for _, cp := range planes {
				out = append(out, SentGateway{ControlPlane: cp, Gateway: g.Network + " " + model.HostPort(g.Address, g.Port), Workload: w})
			}
		}
	}
	return out
}

// Viewpoint is the impersonated pod, asked of s.ControlPlane.
func (s SentGateway) Viewpoint() xdsclient.Viewpoint {
	vp := s.Workload.Viewpoint()
	vp.ControlPlane = s.ControlPlane
	return vp
}

// CompareGateway compares what istiod sent a gateway pod with the
// prediction for it: its AUTO_PASSTHROUGH listeners and their SNI chains,
// its SNI-DNAT clusters (gatewayhop.CompareConfig), and the endpoints of
// each EDS cluster, attributed and compared as a sidecar's are. view is the
// mesh as the control plane reads it.
func CompareGateway(view *plane.View, s SentGateway) []gatewayhop.Difference {
	w := s.Workload
	w.ControlPlane = s.ControlPlane
	cfg := gatewayhop.Predict(view.Snap, view.Index, s.ControlPlane, w)
	out := gatewayhop.CompareConfig(cfg, s.Listeners, s.Clusters)
	for _, c := range cfg.Clusters {
		pred := cfg.Endpoints(c.Name)
		if pred == nil {
			continue
		}
		la, ok := s.EDS[c.Name]
		if !ok {
			if s.Error == "" && len(pred.Endpoints) > 0 {
				out = append(out, gatewayhop.Difference{What: "endpoint", Name: c.Name,
					Sentence: fmt.Sprintf("istiod sent no EDS for %s; meshscope predicts %d endpoint(s)", c.Name, len(pred.Endpoints))})
			}
			continue
		}
		_, diffs := compare(*pred, attribute(view.Snap, c.Service, la, cfg.Proxy, *pred), true)
		for _, d := range diffs {
			out = append(out, gatewayhop.Difference{What: "endpoint", Name: c.Name, Sentence: c.Name + ": " + d.Sentence})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// sentGatewayProblems compares what each control plane sent each
// impersonated gateway pod with the prediction: one problem per
// difference, or istiod-unreachable when nothing arrived.
func sentGatewayProblems(snap *model.Snapshot, in *Inputs) []model.Problem {
	var ps []model.Problem
	for _, s := range in.Gateways {
		who := fmt.Sprintf("istiod %s → gateway pod %s/%s (%s)", s.ControlPlane, s.Workload.Namespace, s.Workload.Pod, s.Gateway)
		if len(s.Clusters) == 0 && len(s.Listeners) == 0 {
			ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemIstiodUnreachable, Cluster: s.ControlPlane,
				Sentence: fmt.Sprintf("cannot compare what %s is sent with the prediction: %s", who, orText(s.Error, "nothing arrived"))})
			continue
		}
		for _, d := range CompareGateway(in.Planes.Of(s.ControlPlane), s) {
			ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemGatewayXDSDiffers, Cluster: s.Workload.Cluster, ControlPlane: s.ControlPlane,
				Sentence: who + ": " + d.Sentence})
		}
	}
	return ps
}
