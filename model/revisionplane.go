package model

import (
	"slices"
	"strings"
)

// A revision as a control plane of its own. During a canary upgrade a
// primary runs two istiods (istiod and istiod-canary); both read the same
// clusters (the remote secrets of the system namespace) but each its own
// mesh config (ConfigMap istio-REV), its own Istio config (objects without
// istio.io/rev, and those labelled for it) and its own environment. The
// proxies of a namespace connect to the revision it asks for, so the same
// proxy can be sent different endpoints by the two.
//
// A control plane is named by its config cluster: "cluster1" is the
// revision meshscope predicts for there (Cluster.PredictedRevision: the
// one --revision names where it runs, else the default), and
// "cluster1@canary" every other running revision of cluster1, whose
// differences from the predicted one the snapshot keeps in a RevisionPlane.
// Restrict and ForControlPlane accept either name, so every reader that
// predicts per control plane (explain, doctor, the UI's streams) predicts
// per revision too.

// revisionSeparator joins a config cluster and a revision in a control
// plane's name (cluster1@canary); a viewpoint names its control plane
// after its own @ (cluster1/network1@cluster1@canary).
const revisionSeparator = "@"

// JoinControlPlane names the control plane of revision rev of cluster
// (cluster alone when rev is "").
func JoinControlPlane(cluster, rev string) string {
	if rev == "" {
		return cluster
	}
	return cluster + revisionSeparator + rev
}

// SplitControlPlane splits a control plane's name into its config cluster
// and revision ("" for the predicted one).
func SplitControlPlane(cp string) (cluster, rev string) {
	cluster, rev, _ = strings.Cut(cp, revisionSeparator)
	return cluster, rev
}

// ControlPlaneCluster is the config cluster of control plane cp.
func ControlPlaneCluster(cp string) string {
	c, _ := SplitControlPlane(cp)
	return c
}

// RevisionPlane is what another running revision of a primary reads that
// the predicted one may read differently: its mesh config, the Istio
// config in its revision (model.ConfigInRevision), and the settings of its
// istiod pods. Everything else — the clusters it reads, their services,
// endpoints, gateways and networks — it shares with its primary.
// ServiceEntries and WorkloadEntries are the predicted revision's (one
// labelled for another revision is listed in OtherRevisionsConfig).
type RevisionPlane struct {
	Cluster             string               `json:"cluster"`
	Revision            string               `json:"revision"`
	MeshConfig          MeshConfig           `json:"meshConfig"`
	DestinationRules    []DestinationRule    `json:"destinationRules,omitempty"`
	PeerAuthentications []PeerAuthentication `json:"peerAuthentications,omitempty"`
	Sidecars            []Sidecar            `json:"sidecars,omitempty"`
	VirtualServices     []VirtualService     `json:"virtualServices,omitempty"`
	IstioGateways       []IstioGateway       `json:"istioGateways,omitempty"`
}

// ControlPlane is the plane's name (cluster1@canary).
func (p *RevisionPlane) ControlPlane() string { return JoinControlPlane(p.Cluster, p.Revision) }

// PredictedRevisionOf is the revision the control plane named by cluster
// alone stands for: Cluster.PredictedRevision, else "default".
func (c *Cluster) PredictedRevisionOf() string {
	if c.PredictedRevision != "" {
		return c.PredictedRevision
	}
	return RevisionDefault
}

// ControlPlaneRevision is the revision control plane cp serves:
// cluster1@canary's canary, cluster1's its predicted revision ("default"
// for a cluster the snapshot does not hold).
func (s *Snapshot) ControlPlaneRevision(cp string) string {
	cluster, rev := SplitControlPlane(cp)
	if rev != "" {
		return rev
	}
	if c := s.ClusterByID(cluster); c != nil {
		return c.PredictedRevisionOf()
	}
	return RevisionDefault
}

// RevisionPlane returns the plane of control plane cp, nil when cp names
// a cluster alone, its predicted revision, or a revision not running.
func (s *Snapshot) RevisionPlane(cp string) *RevisionPlane {
	cluster, rev := SplitControlPlane(cp)
	if s == nil || rev == "" {
		return nil
	}
	for i := range s.RevisionPlanes {
		if p := &s.RevisionPlanes[i]; p.Cluster == cluster && p.Revision == rev {
			return p
		}
	}
	return nil
}

// CanonicalControlPlane names cp as the snapshot does: cluster1@R for a
// revision R with a plane, cluster1 for the predicted revision (whether
// named or not). ok is false when cp names a revision that does not run
// in its cluster.
func (s *Snapshot) CanonicalControlPlane(cp string) (string, bool) {
	cluster, rev := SplitControlPlane(cp)
	if rev == "" {
		return cp, true
	}
	if s.RevisionPlane(cp) != nil {
		return cp, true
	}
	if c := s.ClusterByID(cluster); c != nil && c.PredictedRevisionOf() == rev {
		return cluster, true
	}
	return cp, false
}

// RevisionControlPlanes are the control planes of the other running
// revisions of primary cluster (cluster1@canary, …), sorted.
func (s *Snapshot) RevisionControlPlanes(cluster string) []string {
	var out []string
	if s == nil {
		return nil
	}
	for i := range s.RevisionPlanes {
		if p := &s.RevisionPlanes[i]; p.Cluster == cluster {
			out = append(out, p.ControlPlane())
		}
	}
	slices.Sort(out)
	return out
}

// AllControlPlanes is ControlPlanes with, after each primary, the control
// planes of its other running revisions.
func (s *Snapshot) AllControlPlanes() []string {
	var out []string
	for _, cp := range s.ControlPlanes() {
		out = append(out, cp)
		out = append(out, s.RevisionControlPlanes(cp)...)
	}
	return out
}

// withPlane makes out (a cut of s for p's cluster, not shared with s) the
// mesh as p's revision sees it: its mesh config, Istio config and
// settings instead of the predicted revision's.
func (out *Snapshot) withPlane(s *Snapshot, p *RevisionPlane) {
	own := func(c string) bool { return c != p.Cluster }
	out.DestinationRules = append(keep(out.DestinationRules, func(x DestinationRule) bool { return own(x.Cluster) }), p.DestinationRules...)
	out.PeerAuthentications = append(keep(out.PeerAuthentications, func(x PeerAuthentication) bool { return own(x.Cluster) }), p.PeerAuthentications...)
	out.Sidecars = append(keep(out.Sidecars, func(x Sidecar) bool { return own(x.Cluster) }), p.Sidecars...)
	out.VirtualServices = append(keep(out.VirtualServices, func(x VirtualService) bool { return own(x.Cluster) }), p.VirtualServices...)
	out.IstioGateways = append(keep(out.IstioGateways, func(x IstioGateway) bool { return own(x.Cluster) }), p.IstioGateways...)
	mc := p.MeshConfig
	mc.Cluster = p.Cluster
	out.MeshConfigs = append(keep(out.MeshConfigs, func(x MeshConfig) bool { return own(x.Cluster) }), mc)
	st := s.SettingsFor(p.ControlPlane())
	st.ControlPlane = p.Cluster
	out.Settings = append(keep(out.Settings, func(x IstiodSettings) bool { return own(x.ControlPlane) }), st)
	out.Clusters = slices.Clone(out.Clusters)
	for i := range out.Clusters {
		if out.Clusters[i].ID == p.Cluster {
			out.Clusters[i].PredictedRevision = p.Revision
		}
	}
	out.RevisionPlanes = nil
}
