package tui

import (
	"github.com/meshscope/meshscope/analysis/ambient"
	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// Ambient mode in the UI: a ztunnel's view is per control plane (WDS does
// not depend on the client), so ambient services get one column per
// control plane (view_ambient.go) next to, or instead of, the sidecar
// viewpoints, and their row's verdict includes what each ztunnel holds.

// ztunnelPlanes are the control planes to show ztunnel views for: the
// feed's ztunnels, else (no feed, or none yet) the control planes whose
// mesh config meshscope reads, prediction only.
func ztunnelPlanes(feed Feed, snap *model.Snapshot) []string {
	if f, ok := feed.(AmbientFeed); ok {
		if zs := f.Ztunnels(); len(zs) > 0 {
			return zs
		}
	}
	return snap.ControlPlanes()
}

// explainZtunnels is, for one service, each control plane's WDS next to
// its prediction (views built once per index and reused).
func explainZtunnels(feed Feed, planes *plane.Set, status []xdsclient.StreamStatus, svc *model.Service) []ambient.Explanation {
	af, _ := feed.(AmbientFeed)
	var out []ambient.Explanation
	for _, cp := range ztunnelPlanes(feed, planes.Snapshot()) {
		v := planes.Of(cp).Ambient()
		var actual *xdsclient.WDSServiceView
		if af != nil {
			if a, ok := af.WDS(cp, ambient.ServiceKey(svc.Namespace, svc.Hostname)); ok {
				actual = &a
			}
		}
		why := ""
		if actual == nil {
			why = ztunnelStreamText(status, cp)
		}
		out = append(out, ambient.Explain(v, svc.Hostname, actual, why))
	}
	return out
}

// ztunnelStreamText says why a control plane's ztunnel holds nothing yet.
func ztunnelStreamText(status []xdsclient.StreamStatus, cp string) string {
	name := xdsclient.ZtunnelIdentity{Cluster: cp}.String()
	for _, s := range status {
		if s.Viewpoint == name {
			return "no WDS received yet (stream " + streamStateText(s) + ")"
		}
	}
	return "no WDS received yet (no ztunnel stream for this control plane)"
}

// ambientVerdicts folds each control plane's ztunnel verdict into the
// services' rows.
type ambientVerdicts struct {
	planes *plane.Set
	feed   Feed
	status []xdsclient.StreamStatus
}

func newAmbientVerdicts(planes *plane.Set, feed Feed) *ambientVerdicts {
	a := &ambientVerdicts{planes: planes, feed: feed}
	if feed != nil {
		a.status = feed.Status()
	}
	return a
}

// merge adds the ztunnel verdicts of a service with pods in ambient mode
// to its sidecar verdict: a mismatch anywhere is a mismatch; a match
// needs some actual view; stale when a ztunnel's stream is down.
func (a *ambientVerdicts) merge(svc *model.Service, mode ambient.Mode, v explain.Verdict, stale bool, staleVPs map[string]bool) (explain.Verdict, bool) {
	if mode != ambient.ModeAmbient && mode != ambient.ModeMixed {
		return v, stale
	}
	if _, ok := a.feed.(AmbientFeed); !ok {
		return v, stale
	}
	for _, e := range explainZtunnels(a.feed, a.planes, a.status, svc) {
		if e.Verdict == ambient.Pending {
			continue
		}
		stale = stale || staleVPs[xdsclient.ZtunnelIdentity{Cluster: e.ControlPlane}.String()]
		switch {
		case e.Verdict == ambient.Mismatch:
			v = explain.Mismatch
		case v == explain.Pending:
			v = explain.Match
		}
	}
	return v, stale
}

// modeText is the MODE cell of the services view.
func modeText(m ambient.Mode) string {
	if m == ambient.ModeNone || m == "" {
		return "-"
	}
	return string(m)
}
