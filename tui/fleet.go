package tui

import (
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/meshscope/meshscope/analysis/fleet"
	"github.com/meshscope/meshscope/analysis/meshmap"
	"github.com/meshscope/meshscope/model"
)

// FleetFeed is the optional part of a Feed that serves the last reads of
// every istiod's /debug/syncz (the proxies connected to it), as the feed
// polls them, with the snapshot of the mesh taken just before (the pods to
// join them with: a pod newer than the poll is not DISCONNECTED; nil: the
// latest). Called from Update: cheap, never blocking, safe for concurrent
// use; a returned slice is never changed afterwards, so a new poll is a
// new slice.
type FleetFeed interface {
	Syncz() ([]fleet.Read, *model.Snapshot)
}

// fleetIndex is the fleet (analysis/fleet) of one snapshot and one poll
// of the istiods' syncz, with the proxies view's rows pre-rendered. It is
// built off the update loop (fleetCmd) and immutable once built.
type fleetIndex struct {
	ix *index // the index it was built with (its snapshot, problems, istiod views)
	// snap is the snapshot the fleet joins the reads with (the poll's, else
	// the index's).
	snap  *model.Snapshot
	reads []fleet.Read
	// mesh is the :map view's model (analysis/meshmap), built with the
	// fleet because it reads the same index.
	mesh meshmap.Map
	f    fleet.Fleet
	rows []proxyRow
	// byCluster counts, per cluster, the proxies that are not meshscope's
	// probes and those of them not in sync (the map's boxes).
	byCluster map[string]proxyCount
	// served is false when the feed serves no syncz at all (the view says
	// so instead of listing every pod as UNKNOWN).
	served bool
	took   time.Duration
}

// proxyCount is the proxies of one cluster.
type proxyCount struct{ all, off int }

// proxyRow is one proxy of the proxies view, pre-rendered.
type proxyRow struct {
	p        *fleet.Proxy
	key      string // cluster|namespace|name|control plane: the row's identity
	state    string // "STALE 40s"
	types    [4]string
	version  string
	identity string
	// text is what a plain filter word is looked for in (lower case).
	text string
}

// proxyTypes are the xDS types the table has a column for, as istioctl
// proxy-status shows them.
var proxyTypes = [4]string{"CDS", "LDS", "EDS", "RDS"}

// buildFleet joins the reads with the snapshot's proxy pods at now and
// renders the rows.
func buildFleet(ix *index, reads []fleet.Read, pollSnap *model.Snapshot, served bool, now time.Time) *fleetIndex {
	start := time.Now()
	snap := ix.snap
	if pollSnap != nil {
		snap = pollSnap
	}
	fx := &fleetIndex{ix: ix, snap: snap, reads: reads, served: served, byCluster: map[string]proxyCount{}}
	if snap == nil || ix.snap == nil {
		return fx
	}
	fx.mesh = meshmap.Build(ix.planes, ix.problems)
	if ix.fleet != nil && sameReads(ix.fleetReads, reads) {
		fx.f = *ix.fleet // the diagnosis joined this poll already
	} else {
		fx.f = fleet.Build(snap, reads, now)
	}
	fx.rows = make([]proxyRow, len(fx.f.Proxies))
	for i := range fx.f.Proxies {
		p := &fx.f.Proxies[i]
		r := proxyRow{p: p, key: p.Cluster + "|" + p.Namespace + "|" + p.Name + "|" + p.ControlPlane}
		r.state = p.StateText()
		for j, t := range proxyTypes {
			r.types[j] = p.TypeText(t)
		}
		r.version = p.VersionText()
		r.identity = p.IdentityText()
		kind := string(p.Kind)
		if p.Probe {
			kind += " probe"
		}
		r.text = strings.ToLower(strings.Join([]string{p.ID, p.Cluster, kind, p.ControlPlane, string(p.State), r.identity, p.Version}, " "))
		fx.rows[i] = r
		if !p.Probe {
			c := fx.byCluster[p.Cluster]
			c.all++
			if p.State != fleet.Synced {
				c.off++
			}
			fx.byCluster[p.Cluster] = c
		}
	}
	fx.took = time.Since(start)
	return fx
}

// notInSync counts the proxies (probes left out) whose state is not SYNCED.
func (fx *fleetIndex) notInSync() (all, off int) {
	for _, c := range fx.byCluster {
		all += c.all
		off += c.off
	}
	return all, off
}

// fleetMsg delivers a fleet built in the background.
type fleetMsg struct{ fx *fleetIndex }

// fleetCmd builds the fleet off the update loop.
func fleetCmd(ix *index, reads []fleet.Read, pollSnap *model.Snapshot, served bool, now time.Time) tea.Cmd {
	return func() tea.Msg { return fleetMsg{fx: buildFleet(ix, reads, pollSnap, served, now)} }
}

// fleetState is the root's bookkeeping of the fleet: the last one built,
// and whether a build runs (one at a time; the tick asks again).
type fleetState struct {
	fx       *fleetIndex
	building bool
}

// requestFleet starts building the fleet (and the map) when the index or
// the feed's syncz reads changed since the last build. It is called on every
// tick: at most one build a second, one at a time, never in Update itself.
func (m *Model) requestFleet() tea.Cmd {
	if m.fleet.building || m.ix.snap == nil {
		return nil
	}
	var reads []fleet.Read
	var pollSnap *model.Snapshot
	ff, served := m.feed.(FleetFeed)
	if served {
		reads, pollSnap = ff.Syncz()
	}
	if fx := m.fleet.fx; fx != nil && fx.ix == m.ix && sameReads(fx.reads, reads) {
		return nil
	}
	m.fleet.building = true
	return fleetCmd(m.ix, reads, pollSnap, served, m.now())
}

// sameReads says whether two polls are the same one (the feed hands out a
// new slice per poll).
func sameReads(a, b []fleet.Read) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0]
}

// onFleet takes a built fleet: the views that show it are refreshed.
func (m *Model) onFleet(msg tea.Msg) bool {
	fm, ok := msg.(fleetMsg)
	if !ok {
		return false
	}
	m.fleet.building = false
	m.fleet.fx = fm.fx
	vc := m.vc()
	m.proxies.refresh(vc, update{})
	m.mapv.refresh(vc, update{})
	return true
}

// doctorFleet is the fleet doctor's diagnosis checks (proxy-disconnected,
// proxy-stale, proxy-identity-drift, version-skew), as `meshscope doctor`
// has it: only when istiod's own views could be read (the same endpoints
// serve syncz), else nil, with the poll it joined. It runs in deriveCmd,
// off the update loop; the index keeps it, so that the :proxies view's
// build of the same poll (buildFleet) takes it instead of joining again.
func doctorFleet(snap *model.Snapshot, feed Feed, views []model.IstiodView, now time.Time) (*fleet.Fleet, []fleet.Read) {
	ff, ok := feed.(FleetFeed)
	if !ok || len(views) == 0 || snap == nil {
		return nil, nil
	}
	reads, pollSnap := ff.Syncz()
	if len(reads) == 0 {
		return nil, nil
	}
	if pollSnap != nil {
		snap = pollSnap
	}
	f := fleet.Build(snap, reads, now)
	return &f, reads
}

// proxyFilter is the proxies view's filter: key=value terms as the CLI's
// flags (cluster=, ns=, cp= with "none", state=, probes=no), each a comma
// list; other words must all appear in the row.
type proxyFilter struct {
	clusters, namespaces, cps, states []string
	noProbes                          bool
	words                             []string
	bad                               string // the first term not understood
}

func parseProxyFilter(q string) proxyFilter {
	var f proxyFilter
	for _, t := range strings.Fields(q) {
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			f.words = append(f.words, strings.ToLower(t))
			continue
		}
		vals := strings.Split(v, ",")
		switch strings.ToLower(k) {
		case "cluster":
			f.clusters = append(f.clusters, vals...)
		case "ns", "namespace":
			f.namespaces = append(f.namespaces, vals...)
		case "cp", "istiod", "control-plane":
			f.cps = append(f.cps, vals...)
		case "state":
			for _, s := range vals {
				st := strings.ToUpper(s)
				if st == "NOTSENT" || st == "NOT-SENT" || st == "NOT_SENT" {
					st = string(fleet.NotSent)
				}
				if !slices.Contains(fleet.States, fleet.State(st)) && f.bad == "" {
					f.bad = t
				}
				f.states = append(f.states, st)
			}
		case "probes":
			f.noProbes = v == "no" || v == "false" || v == "0"
		default:
			if f.bad == "" {
				f.bad = t
			}
		}
	}
	return f
}

// keep says whether a row passes the filter.
func (f *proxyFilter) keep(r *proxyRow) bool {
	p := r.p
	cp := p.ControlPlane
	if cp == "" {
		cp = "none"
	}
	if (f.noProbes && p.Probe) ||
		(len(f.clusters) > 0 && !slices.Contains(f.clusters, p.Cluster)) ||
		(len(f.namespaces) > 0 && !slices.Contains(f.namespaces, p.Namespace)) ||
		(len(f.cps) > 0 && !slices.Contains(f.cps, cp)) ||
		(len(f.states) > 0 && !slices.Contains(f.states, string(p.State))) {
		return false
	}
	for _, w := range f.words {
		if !strings.Contains(r.text, w) {
			return false
		}
	}
	return true
}
