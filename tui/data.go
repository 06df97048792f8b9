package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/collector/ambient"
	"github.com/meshscope/meshscope/collector/explain"
	"github.com/meshscope/meshscope/collector/horizon"
	"github.com/meshscope/meshscope/xdsclient"
)

// index is everything the views need from one snapshot, computed once off
// the update loop (in a tea.Cmd) so that Update and View stay cheap.
// It is immutable once built.
type index struct {
	snap       *collector.Snapshot
	clusterIDs []string // column order of presence marks
	networks   []string // column order of endpoint counts
	services   []svcRow // in snapshot order (sorted by hostname)
	byHost     map[string]int
	problems   []explain.Problem
	// standsFor counts the endpoints of each network (what its gateways
	// stand for).
	standsFor map[string]int
	synced    int
	endpoints int
	// ambient: the mesh uses ambient mode (the services view then shows
	// each service's data-plane mode).
	ambient bool
}

// svcRow is one row of the services view, pre-rendered to plain strings.
type svcRow struct {
	svc       *collector.Service
	hostname  string
	namespace string
	name      string
	ports     string
	presence  string // one mark per cluster of index.clusterIDs
	perNet    []int  // endpoints per network of index.networks
	epsText   string
	total     int
	badges    []string // leak, drop, skew... from explain.Problems
	verdict   explain.Verdict
	// mode is the service's data-plane mode (when the mesh uses ambient).
	mode ambient.Mode
	// stale: the verdict rests on EDS from a stream that is down (the
	// proxy's view may have changed since).
	stale bool
	rank  int // 0: errors, 1: warnings, 2: fine (for sorting; see rankSeverity)
}

// rankSeverity is the severity of the problems behind ranks 0 and 1 of a
// service row.
var rankSeverity = [2]explain.Severity{explain.Error, explain.Warning}

func (r *svcRow) badge() string {
	parts := append([]string(nil), r.badges...)
	if r.verdict == explain.Match || r.verdict == explain.Mismatch {
		parts = append(parts, string(r.verdict))
		if r.stale {
			parts = append(parts, "stale")
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ",")
}

// buildIndex derives the index of a snapshot. feed may be nil; with a feed,
// services whose actual EDS is known get a match/mismatch verdict.
func buildIndex(snap *collector.Snapshot, feed Feed) *index {
	ix := &index{snap: snap, byHost: map[string]int{}, standsFor: map[string]int{}}
	if snap == nil {
		return ix
	}
	for _, c := range snap.Clusters {
		ix.clusterIDs = append(ix.clusterIDs, c.ID)
		if c.State == collector.StateSynced {
			ix.synced++
		}
	}
	netPos := map[string]int{}
	for _, n := range snap.Networks {
		netPos[n.Name] = len(ix.networks)
		ix.networks = append(ix.networks, n.Name)
	}
	ix.problems = explain.Problems(snap)
	ix.ambient = ambient.InUse(snap)
	var amb *ambientVerdicts
	if ix.ambient {
		amb = newAmbientVerdicts(snap, feed)
	}
	badges := map[string][]string{}
	rank := map[string]int{}
	for _, p := range ix.problems {
		// Every service in ambient mode has its pods left out of other
		// networks' sidecars (information): the MODE column says as much.
		if p.Service == "" || p.Kind == "ambient-sidecar-drop" {
			continue
		}
		if !contains(badges[p.Service], p.Kind) {
			badges[p.Service] = append(badges[p.Service], p.Kind)
		}
		r := 2
		if i := slices.Index(rankSeverity[:], p.Severity); i >= 0 {
			r = i
		}
		if old, ok := rank[p.Service]; !ok || r < old {
			rank[p.Service] = r
		}
	}
	var vps []xdsclient.Viewpoint
	if feed != nil {
		vps = feed.Viewpoints()
	}
	stale := staleViewpoints(feed)
	ix.services = make([]svcRow, len(snap.Services))
	var pres strings.Builder
	for i, s := range snap.Services {
		row := svcRow{svc: s, hostname: s.Hostname, namespace: s.Namespace, name: s.Name, perNet: make([]int, len(ix.networks))}
		row.ports = portsText(s.Ports)
		pres.Reset()
		for _, id := range ix.clusterIDs {
			if in, ok := s.Clusters[id]; ok && in != nil {
				pres.WriteString("✓")
			} else {
				pres.WriteString("·")
			}
		}
		row.presence = pres.String()
		for _, in := range s.Clusters {
			if in == nil {
				continue
			}
			for _, e := range in.Endpoints {
				row.total++
				if p, ok := netPos[e.Network]; ok {
					row.perNet[p]++
				}
				ix.standsFor[e.Network]++
			}
		}
		ix.endpoints += row.total
		row.epsText = countsText(row.perNet)
		row.badges = badges[s.Hostname]
		row.rank = 2
		if r, ok := rank[s.Hostname]; ok {
			row.rank = r
		}
		if len(vps) > 0 {
			row.verdict, row.stale = serviceVerdict(snap, s, vps, feed, stale)
		}
		if amb != nil {
			row.mode = ambient.DataplaneMode(snap, s.Hostname)
			row.verdict, row.stale = amb.merge(s, row.mode, row.verdict, row.stale, stale)
		}
		if row.verdict == explain.Mismatch && row.rank > 0 {
			row.rank = 0
		}
		ix.services[i] = row
		ix.byHost[s.Hostname] = i
	}
	return ix
}

// serviceVerdict is match when every known actual EDS of the service matches
// the prediction, mismatch when one does not, pending when none is known.
// explainFor is the explain view of one service port from one viewpoint,
// with the EDS the feed holds for it (and the control plane that sent it);
// actual is false when there is none yet (the view is then prediction only).
func explainFor(feed Feed, snap *collector.Snapshot, host string, port int32, vp xdsclient.Viewpoint) (v explain.View, actual bool) {
	var la *xdsclient.LoadAssignment
	cp := vp.ControlPlane
	if feed != nil {
		if a, c, ok := feed.Actual(vp.String(), horizon.EDSClusterName(host, port)); ok && a != nil {
			la = a
			if c != "" {
				cp = c
			}
		}
	}
	return explain.Explain(snap, host, port, vp, cp, la), la != nil
}

func serviceVerdict(snap *collector.Snapshot, s *collector.Service, vps []xdsclient.Viewpoint, feed Feed, staleVPs map[string]bool) (v explain.Verdict, stale bool) {
	v = explain.Pending
	for _, p := range s.Ports {
		for _, vp := range vps {
			ev, actual := explainFor(feed, snap, s.Hostname, p.Port, vp)
			if !actual {
				continue
			}
			stale = stale || staleVPs[vp.String()]
			switch ev.Verdict {
			case explain.Mismatch:
				return explain.Mismatch, stale
			case explain.Match:
				v = explain.Match
			}
		}
	}
	return v, stale
}

// staleViewpoints are the viewpoints whose stream is down.
func staleViewpoints(feed Feed) map[string]bool {
	out := map[string]bool{}
	if feed == nil {
		return out
	}
	for _, st := range feed.Status() {
		if st.Stale {
			out[st.Viewpoint] = true
		}
	}
	return out
}

func portsText(ps []collector.ServicePort) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(p.Port)))
	}
	return b.String()
}

func countsText(n []int) string {
	var b strings.Builder
	for i, c := range n {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(strconv.Itoa(c))
	}
	return b.String()
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// viewpointsFor are the feed's viewpoints, or (without a feed or before it
// knows any) the default one per network of the snapshot.
func viewpointsFor(feed Feed, snap *collector.Snapshot) []xdsclient.Viewpoint {
	if feed != nil {
		if vps := feed.Viewpoints(); len(vps) > 0 {
			return vps
		}
	}
	if snap == nil {
		return nil
	}
	var out []xdsclient.Viewpoint
	for _, p := range explain.Viewpoints(snap) {
		out = append(out, xdsclient.Viewpoint{Cluster: p.Cluster, Network: p.Network})
	}
	return out
}

// sourceText renders where a cluster came from, never credentials.
func sourceText(s collector.SourceRef) string {
	switch s.Kind {
	case collector.SourceSecret:
		if s.In != "" {
			return fmt.Sprintf("secret %s (in %s)", s.Name, s.In)
		}
		return "secret " + s.Name
	case collector.SourceContext:
		return "context " + s.Name
	}
	if s.Name == "" {
		return "-"
	}
	return string(s.Kind) + " " + s.Name
}
