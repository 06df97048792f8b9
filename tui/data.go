package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/meshscope/meshscope/analysis/ambient"
	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/fleet"
	"github.com/meshscope/meshscope/analysis/gatewayhop"
	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// index is everything the views need from one snapshot, computed once off
// the update loop (in a tea.Cmd) so that Update and View stay cheap.
// It is immutable once built.
type index struct {
	snap       *model.Snapshot
	clusterIDs []string // column order of presence marks
	networks   []string // column order of endpoint counts
	services   []svcRow // in snapshot order (sorted by hostname)
	byHost     map[string]int
	// problems is explain.Diagnose's list (doctor's), errors first,
	// repeated causes grouped; unknownCPs are the control planes whose set
	// of clusters meshscope cannot tell (doctor's "Not checked").
	problems   []model.Problem
	unknownCPs []string
	// fleet is the fleet the diagnosis checked, joined from the syncz
	// poll fleetReads (nil when istiod's views were not read); the
	// :proxies view reuses it for the same poll.
	fleet      *fleet.Fleet
	fleetReads []fleet.Read
	// cps are the control planes (clusters view); roots the root CA of
	// every cluster that publishes one.
	cps   []cpRow
	roots map[string]rootInfo
	// istiod are istiod's own views (clusterz, networkz) as read for this
	// index: which clusters a control plane reads when its remote secrets
	// are not read.
	istiod []model.IstiodView
	// planes are the control planes' views of snap (with istiod's views),
	// built once for the diagnosis, the verdicts and every explain view.
	planes *plane.Set
	// hops checks the second hop of every gateway endpoint, one gateway
	// config prediction per gateway pod for the whole index.
	hops *gatewayhop.Checker
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
	svc       *model.Service
	hostname  string
	namespace string
	name      string
	ports     string
	presence  string // one mark per cluster of index.clusterIDs, and the source (sourceMark)
	perNet    []int  // endpoints per network of index.networks
	epsText   string
	total     int
	badges    []string // leak, drop, dup-gw... from explain.Diagnose (badgeName)
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
var rankSeverity = [2]model.Severity{model.SeverityError, model.SeverityWarning}

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
// services whose actual EDS is known get a match/mismatch verdict, and the
// diagnosis compares what its streams hold with the prediction. doc is the
// doctor of this run (nil: a fresh one on the wall clock).
func buildIndex(snap *model.Snapshot, feed Feed, doc *doctor) *index {
	views := istiodViews(feed)
	ix := &index{snap: snap, byHost: map[string]int{}, standsFor: map[string]int{}, istiod: views, planes: plane.NewSet(snap, views)}
	if snap == nil {
		return ix
	}
	if doc == nil {
		doc = newDoctor(nil)
	}
	for _, c := range snap.Clusters {
		ix.clusterIDs = append(ix.clusterIDs, c.ID)
		if c.State == model.StateSynced {
			ix.synced++
		}
	}
	netPos := map[string]int{}
	for _, n := range snap.Networks {
		netPos[n.Name] = len(ix.networks)
		ix.networks = append(ix.networks, n.Name)
	}
	ix.problems, ix.unknownCPs, ix.fleet, ix.fleetReads = doc.diagnose(ix.planes, feed)
	ix.hops = explain.NewHops(ix.planes, ix.fleet)
	ix.cps, ix.roots = controlPlaneRows(ix.planes), rootInfos(snap)
	ix.ambient = ambient.InUse(snap)
	var amb *ambientVerdicts
	if ix.ambient {
		amb = newAmbientVerdicts(ix.planes, feed)
	}
	badges, rank := problemMarks(ix.problems)
	var vps []xdsclient.Viewpoint
	if feed != nil {
		vps = feed.Viewpoints()
	}
	stale := staleViewpoints(feed)
	ix.services = make([]svcRow, len(snap.Services))
	var pres strings.Builder
	for i, s := range snap.Services {
		row := ix.serviceRow(s, netPos, &pres)
		row.badges = badges[s.Hostname]
		row.rank = 2
		if r, ok := rank[s.Hostname]; ok {
			row.rank = r
		}
		if len(vps) > 0 {
			row.verdict, row.stale = serviceVerdict(ix.planes, ix.hops, s, vps, feed, stale)
		}
		if amb != nil {
			row.mode = ambient.DataplaneMode(snap, s.Hostname)
			row.verdict, row.stale = amb.merge(s, row.mode, row.verdict, row.stale, stale)
		}
		if (row.verdict == explain.Mismatch || row.verdict == explain.Broken) && row.rank > 0 {
			row.rank = 0
		}
		ix.services[i] = row
		ix.byHost[s.Hostname] = i
	}
	return ix
}

// problemMarks are, per service, the badges of its problems' kinds and the
// rank of its worst problem (an index of rankSeverity; absent: none).
func problemMarks(ps []model.Problem) (badges map[string][]string, rank map[string]int) {
	badges, rank = map[string][]string{}, map[string]int{}
	for _, p := range ps {
		r := 2
		if i := slices.Index(rankSeverity[:], p.Severity); i >= 0 {
			r = i
		}
		for _, host := range append([]string{p.Service}, p.Services...) {
			if host == "" {
				continue
			}
			if b := badgeName(p.Kind); b != "" && !contains(badges[host], b) {
				badges[host] = append(badges[host], b)
			}
			if old, ok := rank[host]; !ok || r < old {
				rank[host] = r
			}
		}
	}
	return badges, rank
}

// serviceRow is a service's row before its verdict: its ports, where it
// exists (a mark per cluster and its source), its endpoints per network;
// the index's endpoint counts grow by them. pres is reused between rows.
func (ix *index) serviceRow(s *model.Service, netPos map[string]int, pres *strings.Builder) svcRow {
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
	pres.WriteString(sourceMark(s.Source))
	row.presence = pres.String()
	count := func(eps []model.Endpoint) {
		for _, e := range eps {
			row.total++
			if p, ok := netPos[e.Network]; ok {
				row.perNet[p]++
			}
			ix.standsFor[e.Network]++
		}
	}
	for _, in := range s.Clusters {
		if in != nil {
			count(in.Endpoints)
		}
	}
	for _, se := range s.ServiceEntries {
		count(se.Endpoints)
	}
	ix.endpoints += row.total
	row.epsText = countsText(row.perNet)
	return row
}

// verdictsKnown counts the services with a verdict (match or mismatch).
func (ix *index) verdictsKnown() int {
	n := 0
	for i := range ix.services {
		if v := ix.services[i].verdict; v == explain.Match || v == explain.Mismatch || v == explain.Broken {
			n++
		}
	}
	return n
}

// explainFor is the explain view of one service port (or one of its
// DestinationRule subsets) from one viewpoint, as explain computes it: with
// the EDS the feed holds for it (and the control plane that sent it), the
// CDS cluster whose load balancing decides the shares, and istiod's own
// views; actual is false when there is no EDS yet (the view is then
// prediction only).
func explainFor(feed Feed, planes *plane.Set, hops *gatewayhop.Checker, host, subset string, port int32, vp xdsclient.Viewpoint) (v explain.View, actual bool) {
	var la *xdsclient.LoadAssignment
	cp := vp.ControlPlane
	x := explain.Extra{Subset: subset, Hops: hops}
	if feed != nil {
		name := horizon.SubsetClusterName(host, subset, port)
		if a, c, ok := feed.Actual(vp.String(), name); ok && a != nil {
			la = a
			if c != "" {
				cp = c
			}
		}
		if sf, ok := feed.(sentFeed); ok {
			x.Cluster, _ = sf.Cluster(vp.String(), name)
		}
	}
	return explain.ExplainWith(planes, host, port, vp, cp, la, x), la != nil
}

// serviceVerdict is match when every known actual EDS of the service matches
// the prediction and every second hop holds, mismatch when one EDS does not
// match, broken when they match but a gateway cannot carry the requests,
// pending when none is known.
func serviceVerdict(planes *plane.Set, hops *gatewayhop.Checker, s *model.Service, vps []xdsclient.Viewpoint, feed Feed, staleVPs map[string]bool) (v explain.Verdict, stale bool) {
	v = explain.Pending
	for _, p := range s.Ports {
		for _, vp := range vps {
			ev, actual := explainFor(feed, planes, hops, s.Hostname, "", p.Port, vp)
			if !actual {
				continue
			}
			stale = stale || staleVPs[vp.String()]
			switch ev.Verdict {
			case explain.Mismatch:
				return explain.Mismatch, stale
			case explain.Broken:
				v = explain.Broken // as sent, but a gateway cannot carry it
			case explain.Match:
				if v == explain.Pending {
					v = explain.Match
				}
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

// staleKey names the stale streams of status, for noticing a change.
func staleKey(status []xdsclient.StreamStatus) string {
	var b strings.Builder
	for _, st := range status {
		if st.Stale {
			b.WriteString(st.Viewpoint)
			b.WriteByte(0)
		}
	}
	return b.String()
}

func portsText(ps []model.ServicePort) string {
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
func viewpointsFor(feed Feed, snap *model.Snapshot) []xdsclient.Viewpoint {
	if feed != nil {
		if vps := feed.Viewpoints(); len(vps) > 0 {
			return vps
		}
	}
	if snap == nil {
		return nil
	}
	return horizon.SidecarViewpoints(snap, "")
}

// sourceText renders where a cluster came from, never credentials.
func sourceText(s model.SourceRef) string {
	switch s.Kind {
	case model.SourceSecret:
		if s.In != "" {
			return fmt.Sprintf("secret %s (in %s)", s.Name, s.In)
		}
		return "secret " + s.Name
	case model.SourceContext:
		return "context " + s.Name
	}
	if s.Name == "" {
		return "-"
	}
	return string(s.Kind) + " " + s.Name
}
