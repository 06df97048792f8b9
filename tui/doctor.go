package tui

import (
	"time"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/fleet"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// sentFeed is the optional part of a Feed that serves what its streams
// hold the way doctor compares it with the prediction (explain.Sent: the
// EDS of every cluster each stream's CDS names), and the CDS cluster of an
// EDS cluster name, whose load balancing decides Envoy's shares. Both are
// called from background commands and, for Cluster, from Update: cheap,
// never blocking, safe for concurrent use.
type sentFeed interface {
	Sent() []explain.Sent
	Cluster(viewpoint, edsCluster string) (*xdsclient.Cluster, bool)
}

// doctor is what every diagnosis of one run of the UI shares, as doctor's
// one diagnosis has it: the clock, when the UI started watching (an
// endpoint found stale in this run has been stale at least since then), and
// when each stale endpoint was first seen, so that "stale for 40s" is true
// across snapshots.
type doctor struct {
	now   func() time.Time
	since time.Time
	stale *explain.StaleTracker
}

func newDoctor(now func() time.Time) *doctor {
	if now == nil {
		now = time.Now
	}
	return &doctor{now: now, since: now(), stale: &explain.StaleTracker{}}
}

// diagnose is doctor's diagnosis of snap: istiod's own views, and — when
// the feed serves them — what the live streams hold against the
// prediction. It also lists the control planes it could not check, and
// gives the fleet it checked with the syncz poll it joined (nil when none).
func (d *doctor) diagnose(planes *plane.Set, feed Feed) ([]model.Problem, []string, *fleet.Fleet, []fleet.Read) {
	now, snap, views := d.now(), planes.Snapshot(), planes.Istiod()
	a := &feedAnswers{feed: feed, views: views, snap: snap, now: now}
	in := explain.Gather(snap, explain.Inputs{Now: now, Since: d.since, Stale: d.stale, Planes: planes}, a)
	return explain.Diagnose(snap, in), planes.Unknown(), in.Fleet, a.fleetReads
}

// feedAnswers are what the UI's feed holds, as a diagnosis reads it
// (explain.Gather): istiod's views, and the streams' EDS and WDS when the
// feed serves them.
type feedAnswers struct {
	feed  Feed
	views []model.IstiodView
	snap  *model.Snapshot
	now   time.Time
	// fleetReads is the syncz poll Fleet joined.
	fleetReads []fleet.Read
}

func (a *feedAnswers) Istiod() []model.IstiodView { return a.views }

// Fleet is the fleet of the feed's last syncz poll (doctorFleet), when
// istiod's views are read.
func (a *feedAnswers) Fleet() *fleet.Fleet {
	f, reads := doctorFleet(a.snap, a.feed, a.views, a.now)
	a.fleetReads = reads
	return f
}

func (a *feedAnswers) Sent() []explain.Sent {
	if sf, ok := a.feed.(sentFeed); ok {
		return sf.Sent()
	}
	return nil
}

// SentGateways are the gateway pods the feed impersonates, with what
// they hold (a feed that impersonates none: nil).
func (a *feedAnswers) SentGateways() []explain.SentGateway {
	if gf, ok := a.feed.(GatewayFeed); ok {
		return gf.SentGateways()
	}
	return nil
}

// SentWDS are the ztunnels that have had istiod's first response (the UI
// does not call a stream still connecting unreachable).
func (a *feedAnswers) SentWDS() []explain.SentWDS {
	af, ok := a.feed.(AmbientFeed)
	if !ok {
		return nil
	}
	var out []explain.SentWDS
	for _, cp := range af.Ztunnels() {
		if _, ok := af.WDS(cp, ""); ok {
			out = append(out, explain.SentWDS{ControlPlane: cp, Service: func(key string) xdsclient.WDSServiceView {
				v, _ := af.WDS(cp, key)
				return v
			}})
		}
	}
	return out
}

// istiodViews are istiod's own views, when the feed serves them.
func istiodViews(feed Feed) []model.IstiodView {
	if f, ok := feed.(IstiodFeed); ok {
		return f.Istiod()
	}
	return nil
}

// cpRow is one control plane of the clusters view: the istiod pods of its
// cluster (of its revision, when the primary runs several: each revision
// is a row of its own, cluster1@canary), and which clusters it reads and
// where meshscope learned that ("secrets", "clusterz"; known false when it
// cannot tell).
type cpRow struct {
	id      string
	cluster string // id's config cluster
	istiods []model.IstiodPod
	reads   []string
	from    string
	known   bool
}

func controlPlaneRows(planes *plane.Set) []cpRow {
	snap := planes.Snapshot()
	var out []cpRow
	for _, cp := range snap.AllControlPlanes() {
		cluster := model.ControlPlaneCluster(cp)
		r := cpRow{id: cp, cluster: cluster}
		if c := snap.ClusterByID(cluster); c != nil {
			r.istiods = c.Istiods
			if len(snap.RevisionControlPlanes(cluster)) > 0 {
				r.istiods = c.IstiodsOfRevision(snap.ControlPlaneRevision(cp))
			}
		}
		pv := planes.Of(cp)
		r.reads, r.from, r.known = pv.Reads, string(pv.From), pv.Known()
		out = append(out, r)
	}
	return out
}

// rootInfo is the root bundle a cluster's istiod publishes, and the
// clusters whose bundles share no root with it (mTLS between them fails).
type rootInfo struct {
	certs    []model.RootCert
	err      string
	mismatch []string
}

func rootInfos(snap *model.Snapshot) map[string]rootInfo {
	out := map[string]rootInfo{}
	for i := range snap.Clusters {
		c := &snap.Clusters[i]
		if c.State == model.StateRemoved || (len(c.RootCerts) == 0 && c.RootCertError == "") {
			continue
		}
		ri := rootInfo{certs: c.RootCerts, err: c.RootCertError}
		for j := range snap.Clusters {
			o := &snap.Clusters[j]
			if j != i && o.State != model.StateRemoved && len(o.RootCerts) > 0 && len(c.RootCerts) > 0 && !model.SharesRoot(c.RootCerts, o.RootCerts) {
				ri.mismatch = append(ri.mismatch, o.ID)
			}
		}
		out[c.ID] = ri
	}
	return out
}

// badgeNames shortens the problem kinds whose names do not fit a service
// row's VERDICT cell (the problems view and the service view say them in
// full); "" is no badge.
var badgeNames = map[model.ProblemKind]string{
	model.ProblemDuplicateGateway:    "dup-gw",
	model.ProblemMissingService:      "missing",
	model.ProblemInconsistentService: "inconsistent",
	model.ProblemStaleEndpoint:       "stale-ep",
	model.ProblemXDSDiffers:          "", // the row's verdict (mismatch) says it
	model.ProblemWDSDiffers:          "", // the row's verdict (mismatch) says it
	// Every service in ambient mode has its pods left out of other
	// networks' sidecars (information): the MODE column says as much.
	model.ProblemAmbientSidecarDrop:      "",
	model.ProblemAmbientScopeMismatch:    "scope",
	model.ProblemWaypointCrossNetwork:    "waypoint-net",
	model.ProblemWaypointUnresolved:      "waypoint",
	model.ProblemConfigSkew:              "cfg-skew",
	model.ProblemLocalityFailover:        "failover",
	model.ProblemServiceEntryNoWorkloads: "se-empty",
	model.ProblemServiceEntryPortName:    "se-port",
	model.ProblemWorkloadEntryUnhealthy:  "we-unhealthy",
}

func badgeName(kind model.ProblemKind) string {
	if b, ok := badgeNames[kind]; ok {
		return b
	}
	return string(kind)
}

// sourceMark follows a service row's cluster marks: where istiod learns
// the hostname from when not only from Kubernetes Services.
func sourceMark(s model.ServiceSource) string {
	switch s {
	case model.SourceServiceEntry:
		return " SE"
	case model.SourceBoth:
		return " +SE"
	}
	return ""
}
