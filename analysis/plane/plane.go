package plane

import (
	"slices"
	"sync"

	"github.com/meshscope/meshscope/analysis/ambient"
	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/model"
)

// Source says how meshscope knows the clusters a control plane reads.
type Source string

const (
	// FromSecrets: the remote secrets held in its config cluster, which
	// meshscope reads (pkg/kube/multicluster secretcontroller.go).
	FromSecrets Source = "secrets"
	// FromClusterz: its istiod's own /debug/clusterz.
	FromClusterz Source = "clusterz"
	// Unknown: neither is at hand; the view is the whole snapshot.
	Unknown Source = ""
)

// View is the mesh as the istiod of one control plane sees it. It is
// immutable once built, but for its ambient view, built on first use.
type View struct {
	// Name is the control plane (cluster1, cluster1@canary); "" is no
	// control plane at all: every cluster, the first context's config.
	Name string
	// Cluster is its config cluster when the snapshot holds it ("" else:
	// the view is then the whole snapshot); Revision the revision it serves.
	Cluster  string
	Revision string
	// Full is the snapshot the view is cut from; Snap what the istiod
	// reads of it (model.Snapshot.Restrict), with the gateways of a DNS
	// name at the addresses istiod resolved where its /debug/networkz is
	// read.
	Full, Snap *model.Snapshot
	// Reads are the clusters its istiod reads and From how meshscope knows
	// (Unknown: Reads is nil).
	Reads []string
	From  Source
	// Settings are its istiod's settings.
	Settings model.IstiodSettings
	// Index is the horizon index of Snap.
	Index *horizon.Index
	// NameNotes say, per gateway DNS name, whose addresses the view uses.
	NameNotes []string
	// cut: Snap leaves something of Full out (before the gateway names).
	cut bool

	ambientOnce sync.Once
	ambient     *ambient.View
}

// Known reports whether meshscope knows the clusters the istiod reads.
func (v *View) Known() bool { return v.From != Unknown }

// Cut reports whether the istiod reads less than the whole snapshot (or
// another revision's config).
func (v *View) Cut() bool { return v.cut }

// Proxy is p served by this control plane: its istiod's mesh config and
// Istio config apply (horizon.Proxy.ConfigCluster).
func (v *View) Proxy(p horizon.Proxy) horizon.Proxy {
	p.ConfigCluster = v.Cluster
	return p
}

// Predict is the EDS the istiod sends proxy p (served by it: see Proxy)
// for hostname:port, or for a DestinationRule subset of it ("" for the
// whole service).
func (v *View) Predict(hostname, subset string, port int32, p horizon.Proxy) horizon.Prediction {
	return horizon.PredictSubset(v.Snap, v.Index, hostname, subset, port, v.Proxy(p))
}

// Ambient is what the istiod sends ztunnels (ambient mode), from the same
// view: its clusters (ambientReads), its config and its settings.
func (v *View) Ambient() *ambient.View {
	v.ambientOnce.Do(func() { v.ambient = ambient.NewView(v.Snap, v.Name, v.ambientReads()) })
	return v.ambient
}

// ambientReads are the clusters the ztunnel prediction follows: the ones
// the istiod is known to read, else its own and those of the remote
// secrets meshscope sees held in it (never every cluster: an istiod in
// ambient mode that reads no remote secret sends its own cluster's
// workloads only).
func (v *View) ambientReads() []string {
	if v.From == FromSecrets {
		return v.Reads
	}
	ids, _ := v.Full.ClustersReadBy(v.Name)
	return ids
}

// build makes the view of control plane cp of snap; views are istiod's
// own (clusterz, networkz), where read.
func build(snap *model.Snapshot, cp string, views []model.IstiodView) *View {
	v := &View{Name: cp, Full: snap, Snap: snap, Index: horizon.NewIndex(snap)}
	if snap == nil {
		return v
	}
	v.Revision = snap.ControlPlaneRevision(cp)
	if cluster := model.ControlPlaneCluster(cp); cp != "" && snap.ClusterByID(cluster) != nil {
		v.Cluster = cluster
		if ids, known := snap.ClustersReadBy(cp); known {
			v.Reads, v.From = ids, FromSecrets
		} else if iv := istiodViewOf(views, cp); iv != nil && len(iv.Clusters) > 0 {
			for _, c := range iv.Clusters {
				v.Reads = append(v.Reads, c.ID)
			}
			v.From = FromClusterz
		}
		switch {
		case v.Known():
			v.Snap = snap.Restrict(cp, v.Reads)
		case snap.RevisionPlane(cp) != nil:
			v.Snap = snap.ForControlPlane(cp) // another revision's config, every cluster
		}
	}
	v.cut = v.Snap != snap
	v.Snap, v.NameNotes = withIstiodNames(v.Snap, views, cp)
	v.Settings = snap.SettingsFor(cp)
	v.Index = horizon.NewIndex(v.Snap)
	return v
}

// Set is the views of one snapshot's control planes, each built once, on
// first use. Safe for concurrent use.
type Set struct {
	snap   *model.Snapshot
	istiod []model.IstiodView
	mu     sync.Mutex
	views  map[string]*View
}

// NewSet is the set of snap's control-plane views; istiod are istiod's own
// views (clusterz, networkz), where read (nil: none).
func NewSet(snap *model.Snapshot, istiod []model.IstiodView) *Set {
	return &Set{snap: snap, istiod: istiod, views: map[string]*View{}}
}

// Snapshot is the snapshot the set's views are of.
func (s *Set) Snapshot() *model.Snapshot { return s.snap }

// Istiod is istiod's own views the set was built with.
func (s *Set) Istiod() []model.IstiodView { return s.istiod }

// Of is the view of control plane cp ("" for none: the whole snapshot).
func (s *Set) Of(cp string) *View {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := s.views[cp]; v != nil {
		return v
	}
	v := build(s.snap, cp, s.istiod)
	s.views[cp] = v
	return v
}

// Ambient is control plane cp's ztunnel view (View.Ambient).
func (s *Set) Ambient(cp string) *ambient.View { return s.Of(cp).Ambient() }

// Unknown are the control planes whose set of clusters meshscope cannot
// tell (their remote secrets are not read and their clusterz is not at
// hand): a diagnosis cannot say whether they miss one.
func (s *Set) Unknown() []string {
	var out []string
	for _, cp := range s.snap.ControlPlanes() {
		if !s.Of(cp).Known() {
			out = append(out, cp)
		}
	}
	return out
}

// Primaries are the control planes meshscope predicts for: the primaries
// whose config meshscope reads (a kube context), in cluster order.
func Primaries(snap *model.Snapshot) []string {
	var out []string
	for _, cp := range snap.ControlPlanes() {
		if c := snap.ClusterByID(cp); c != nil && c.IsContext() {
			out = append(out, cp)
		}
	}
	return out
}

// WithRevisions is Primaries with, after each, the control planes of its
// other running revisions (cluster1@canary: its proxies get what that
// revision sends).
func WithRevisions(snap *model.Snapshot) []string {
	var out []string
	for _, cp := range Primaries(snap) {
		out = append(out, cp)
		out = append(out, snap.RevisionControlPlanes(cp)...)
	}
	return slices.Clip(out)
}
