package explain

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// revisionsSentProblems compares what two revisions of one primary
// (cluster1 and cluster1@canary) really sent the same proxy: every EDS
// cluster both sent whose endpoints differ (address, port, weight, health
// or TLS mode). A proxy gets one or the other by its namespace's revision
// label, so moving a namespace changes its endpoints — said before it is
// moved. Each control plane's own difference from its prediction is
// sentProblems'.
func revisionsSentProblems(snap *model.Snapshot, sent []Sent) []model.Problem {
	type group struct {
		cluster, viewpoint string
		sent               []*Sent
	}
	var groups []*group
	for i := range sent {
		s := &sent[i]
		if s.ControlPlane == "" || len(s.EDS) == 0 {
			continue
		}
		vp := s.Viewpoint
		vp.ControlPlane = ""
		cluster := model.ControlPlaneCluster(s.ControlPlane)
		at := slices.IndexFunc(groups, func(g *group) bool { return g.cluster == cluster && g.viewpoint == vp.String() })
		if at < 0 {
			groups = append(groups, &group{cluster: cluster, viewpoint: vp.String()})
			at = len(groups) - 1
		}
		groups[at].sent = append(groups[at].sent, s)
	}
	var ps []model.Problem
	for _, g := range groups {
		for i := 0; i < len(g.sent); i++ {
			for j := i + 1; j < len(g.sent); j++ {
				if p, ok := revisionPairProblem(snap, g.cluster, g.viewpoint, g.sent[i], g.sent[j]); ok {
					ps = append(ps, p)
				}
			}
		}
	}
	return ps
}

// revisionPairProblem is the problem of two revisions' EDS for one proxy,
// ok false when they agree on every cluster both sent.
func revisionPairProblem(snap *model.Snapshot, cluster, viewpoint string, a, b *Sent) (model.Problem, bool) {
	ra, rb := snap.ControlPlaneRevision(a.ControlPlane), snap.ControlPlaneRevision(b.ControlPlane)
	if ra == rb {
		return model.Problem{}, false // the same revision named twice
	}
	var differ []string
	for _, name := range slices.Sorted(maps.Keys(a.EDS)) {
		lb, ok := b.EDS[name]
		if !ok {
			continue
		}
		if ea, eb := endpointSet(a.EDS[name]), endpointSet(lb); ea != eb {
			differ = append(differ, fmt.Sprintf("%s (%s: %s; %s: %s)", edsClusterService(name), ra, orText(ea, "none"), rb, orText(eb, "none")))
		}
	}
	if len(differ) == 0 {
		return model.Problem{}, false
	}
	return model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemRevisionsSendDifferently, Cluster: cluster,
		Sentence: fmt.Sprintf("revisions %s and %s of %s send a %s proxy different endpoints for %d cluster(s): a proxy's endpoints change when its namespace moves between them (istio.io/rev) — first %s",
			ra, rb, cluster, viewpoint, len(differ), differ[0]),
		Examples: differ}, true
}

// endpointSet is one load assignment's endpoints as a sorted line:
// ADDRESS:PORT w=WEIGHT, with an unhealthy or draining endpoint's health
// and a TLS mode other than istio's.
func endpointSet(la xdsclient.LoadAssignment) string {
	eps := make([]string, 0, len(la.Endpoints))
	for _, e := range la.Endpoints {
		s := fmt.Sprintf("%s:%d w=%d", e.Address, e.Port, e.Weight)
		if e.Health == "UNHEALTHY" || e.Health == "DRAINING" {
			s += " " + e.Health
		}
		if e.TLSMode != "istio" {
			s += " tls=" + orText(e.TLSMode, "none")
		}
		eps = append(eps, s)
	}
	slices.Sort(eps)
	return strings.Join(eps, ", ")
}

// edsClusterService is the service port of an EDS cluster name
// (outbound|PORT|SUBSET|HOST → HOST:PORT, with the subset), else the name.
func edsClusterService(name string) string {
	parts := strings.Split(name, "|")
	if len(parts) != 4 {
		return name
	}
	s := model.ShortHost(parts[3]) + ":" + parts[1]
	if parts[2] != "" {
		s += " subset " + parts[2]
	}
	return s
}
