package model

import (
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Revisions. A canary upgrade runs two istiods side by side in a primary,
// each with its REVISION (its pods labelled istio.io/rev), each reading its
// own ConfigMap istio-REV (MeshConfigMapName). Namespaces choose one by
// label, as the injector's webhooks select them
// (manifests/charts/istio-control/istio-discovery/templates/mutatingwebhook.yaml):
// istio-injection=enabled means the default revision and wins over
// istio.io/rev; istio.io/rev=R means revision R or the revision tag R (a
// MutatingWebhookConfiguration istio-revision-tag-R labelled istio.io/tag=R
// and istio.io/rev=<revision>, or a Service of the system namespace with
// those labels, which wins; pkg/revisions/tag_watcher.go). The injector
// writes the revision into the injected pod's istio.io/rev label, and the
// proxy connects to istiod-<revision>: a revision no istiod runs leaves new
// pods without a sidecar and old ones connected nowhere.

// RevisionDefault is the revision of an istiod installed without one.
const RevisionDefault = "default"

// RevisionName is the revision an istiod pod serves: its istio.io/rev
// label, "default" when it has none.
func (p IstiodPod) RevisionName() string {
	if p.Revision == "" {
		return RevisionDefault
	}
	return p.Revision
}

// RevisionTag is a revision tag of a cluster: namespaces labelled
// istio.io/rev=Tag get the sidecar of Revision.
type RevisionTag struct {
	Tag      string `json:"tag"`
	Revision string `json:"revision"`
}

// RevisionConfig is what one revision's istiod reads from its ConfigMap
// that decides which endpoints proxies get: meshNetworks, serviceSettings
// (cluster-local hosts) and discoverySelectors. Two revisions of one
// primary that differ here send different endpoints to the same proxy.
type RevisionConfig struct {
	Revision string `json:"revision"`
	// ConfigMap is NAMESPACE/NAME of the ConfigMap it reads (istio, or
	// istio-REV); Found is false when there is none (istiod's defaults).
	ConfigMap          string                 `json:"configMap"`
	Found              bool                   `json:"found"`
	MeshNetworks       *MeshNetworks          `json:"meshNetworks,omitempty"`
	ServiceSettings    []ServiceSettings      `json:"serviceSettings,omitempty"`
	DiscoverySelectors []metav1.LabelSelector `json:"discoverySelectors,omitempty"`
	// Error says why the mesh config or meshNetworks did not parse.
	Error string `json:"error,omitempty"`
}

// Revisions are the distinct revisions of the istiods running in c
// (ready or not), sorted.
func (c *Cluster) Revisions() []string {
	var out []string
	for _, p := range c.Istiods {
		if r := p.RevisionName(); !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// IstiodsOfRevision are c's istiod pods of revision rev (ready or not).
func (c *Cluster) IstiodsOfRevision(rev string) []IstiodPod {
	var out []IstiodPod
	for _, p := range c.Istiods {
		if p.RevisionName() == rev {
			out = append(out, p)
		}
	}
	return out
}

// RevisionReady reports whether a ready istiod pod of revision rev runs in c.
func (c *Cluster) RevisionReady(rev string) bool {
	for _, p := range c.IstiodsOfRevision(rev) {
		if p.Ready {
			return true
		}
	}
	return false
}

// tagRevision is the revision tag name points to in c ("" when c has no
// such tag).
func (c *Cluster) tagRevision(name string) string {
	for _, t := range c.RevisionTags {
		if t.Tag == name {
			return t.Revision
		}
	}
	return ""
}

// NamespaceRevision is the revision (or tag) a namespace's labels ask the
// injector for; ok is false when they ask for no injection.
func NamespaceRevision(labels map[string]string) (rev string, ok bool) {
	switch labels[LabelInjection] {
	case "enabled":
		return RevisionDefault, true
	case "":
	default: // "disabled", or any other value: no webhook selects it
		return "", false
	}
	rev, ok = labels[LabelRev]
	return rev, ok && rev != ""
}

// RevisionServers are the clusters whose istiods serve the proxies of
// cluster id: id itself when an istiod runs there, else every primary
// whose remote secrets declare id (a remote cluster's proxies connect to
// its primary's istiod). known is false when meshscope sees no istiod pod
// for id (the check cannot tell).
func (s *Snapshot) RevisionServers(id string) (servers []*Cluster, known bool) {
	c := s.ClusterByID(id)
	if c == nil {
		return nil, false
	}
	if len(c.Istiods) > 0 {
		return []*Cluster{c}, true
	}
	for _, cp := range s.ControlPlanes() {
		p := s.ClusterByID(cp)
		if p == nil || cp == id || len(p.Istiods) == 0 {
			continue
		}
		if ids, _ := s.ClustersReadBy(cp); slices.Contains(ids, id) {
			servers = append(servers, p)
		}
	}
	return servers, len(servers) > 0
}

// ResolveRevision is the revision a name (a revision or a tag, as a
// namespace or pod label gives it) stands for in cluster id: a tag of id
// (where the injector's webhooks are) or of a server, else the name itself.
// via is the tag's name when a tag resolved it.
func (s *Snapshot) ResolveRevision(id, name string) (rev, via string) {
	if c := s.ClusterByID(id); c != nil {
		if r := c.tagRevision(name); r != "" {
			return r, name
		}
	}
	servers, _ := s.RevisionServers(id)
	for _, p := range servers {
		if r := p.tagRevision(name); r != "" {
			return r, name
		}
	}
	return name, ""
}

// ConfigInRevision reports whether the istiod of revision rev reads an
// Istio config object with these labels (pkg/config LabelsInRevision, as
// its config client filters): one without istio.io/rev is everyone's,
// one with it only that revision's (a tag's name does not count).
func ConfigInRevision(labels map[string]string, rev string) bool {
	r, ok := labels[LabelRev]
	return !ok || rev == "" || r == rev
}

// EffectiveRevision is the revision meshscope predicts for in c, asked for
// requested (--revision, "" for none): requested where an istiod of it runs
// (or a tag of that name points to one); else the default revision — an
// istiod of revision "default", else the revision the "default" tag points
// to — else c's only revision; else requested (or "default"). An install
// with revisions only (istiod-1-28 and no revision-less istiod) then reads
// ConfigMap istio-1-28, as its istiod does, and a multi-primary mesh
// upgraded one primary at a time predicts each primary's own.
func (c *Cluster) EffectiveRevision(requested string) string {
	revs := c.Revisions()
	runs := func(r string) bool { return r != "" && slices.Contains(revs, r) }
	switch {
	case runs(requested):
		return requested
	case requested != "" && runs(c.tagRevision(requested)):
		return c.tagRevision(requested)
	case runs(RevisionDefault):
		return RevisionDefault
	case runs(c.tagRevision(RevisionDefault)):
		return c.tagRevision(RevisionDefault)
	case len(revs) == 1:
		return revs[0]
	case requested != "":
		return requested
	}
	return RevisionDefault
}

// RevisionNotRunning says why --revision rev names nothing: no istiod pod
// of that revision (nor of the revision a tag of that name points to) in
// any cluster where meshscope sees istiod pods. "" when one runs, or when
// no istiod pod is seen at all (then nothing can be told). A primary where
// rev does not run is predicted for its default revision
// (EffectiveRevision), but a revision that runs nowhere is a typo or a
// removed canary, and is said.
func (s *Snapshot) RevisionNotRunning(rev string) string {
	if s == nil || rev == "" {
		return ""
	}
	var seen []string
	for i := range s.Clusters {
		c := &s.Clusters[i]
		revs := c.Revisions()
		if len(revs) == 0 {
			continue
		}
		if slices.Contains(revs, rev) || slices.Contains(revs, c.tagRevision(rev)) {
			return ""
		}
		seen = append(seen, c.ID+": "+strings.Join(revs, ", "))
	}
	if len(seen) == 0 {
		return ""
	}
	return "no istiod pod labelled istio.io/rev=" + rev + " (nor a revision tag " + rev + ") runs in the clusters meshscope reads (" + strings.Join(seen, "; ") + ")"
}
