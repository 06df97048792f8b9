package collector

import (
	"strings"
	"time"

	"github.com/meshscope/meshscope/collector/build"
	"github.com/meshscope/meshscope/collector/internal/errs"
	"github.com/meshscope/meshscope/model"
)

// build makes a snapshot in the Registry's two last steps (see plan.go):
// gather reads every cluster's caches — rebuilding only the parts whose
// caches changed — and assemble, which reads nothing but its input, puts
// them together.
func (r *Registry) build(version uint64) *model.Snapshot {
	items := r.items()
	in := build.Input{Version: version, Time: time.Now(), SystemNamespace: r.opts.SystemNamespace, IstiodEnv: r.opts.IstiodEnv}
	live := func(it item) *watched { return it.w }
	in.MeshNetworks, in.MeshNetworksIn, in.NetworkIndex, in.NetworkWarnings = r.meshNetworksOf(items, live)
	in.ServiceEntries, in.WorkloadEntries = istioEntriesOf(items, live)
	sel := build.SelectorsOf(in.ServiceEntries)
	var swapsDone []*entry
	for _, it := range items {
		sh, done := r.gatherCluster(it, it.w, in.NetworkIndex, sel, in.WorkloadEntries)
		if done {
			swapsDone = append(swapsDone, it.ptr)
		}
		in.Clusters = append(in.Clusters, sh)
	}
	if len(swapsDone) > 0 {
		r.mu.Lock()
		for _, e := range swapsDone {
			e.swap = nil
		}
		r.mu.Unlock()
	}
	in.GatewayNames = r.resolveGatewayNames(build.GatewayNames(in))
	in.RemoteSecrets = r.remoteSecrets()
	return build.Assemble(in)
}

// item is one registry entry as build sees it: a copy of its record, taken
// under the registry's lock, and its watcher.
type item struct {
	e   entry
	ptr *entry
	w   *watched
}

// items copies the entries under r.mu (it takes the lock: its callers hold
// buildMu, not mu), so a build reads them while planning goes on.
func (r *Registry) items() []item {
	r.mu.Lock()
	defer r.mu.Unlock()
	items := make([]item, 0, len(r.entries))
	for _, e := range r.entries {
		it := item{e: *e, ptr: e, w: e.w}
		it.e.sources = append([]model.SourceRef(nil), e.sources...)
		it.e.warnings = append([]string(nil), e.warnings...)
		items = append(items, it)
	}
	return items
}

// meshNetworksOf merges the meshNetworks of every cluster's ConfigMap in
// cluster order (the first definition of a network wins), with a warning
// for each cluster whose text does not parse (by entry key).
func (r *Registry) meshNetworksOf(items []item, readOf func(item) *watched) (*model.MeshNetworks, []build.DeclaredMeshNetworks, *build.NetworkIndex, map[string][]string) {
	merged := &model.MeshNetworks{Networks: map[string]model.MeshNetwork{}}
	var each []build.DeclaredMeshNetworks
	var keyParts []string
	warnings := map[string][]string{}
	for _, it := range items {
		w := readOf(it)
		if w == nil {
			continue
		}
		raw := w.MeshNetworks(r.opts.SystemNamespace)
		if raw == "" {
			continue
		}
		keyParts = append(keyParts, it.e.id+"\x00"+raw)
		mn, err := model.ParseMeshNetworks(raw)
		if err != nil {
			warnings[it.e.key] = append(warnings[it.e.key], "meshNetworks in ConfigMap istio does not parse: "+errs.OneLine(err.Error()))
			continue
		}
		each = append(each, build.DeclaredMeshNetworks{Cluster: it.e.id, Networks: mn})
		for name, n := range mn.Networks {
			if _, ok := merged.Networks[name]; !ok {
				merged.Networks[name] = n
			}
		}
	}
	return merged, each, build.NewNetworkIndex(merged, strings.Join(keyParts, "\x01")), warnings
}

// istioEntriesOf reads the ServiceEntries of the config (context) clusters
// and the WorkloadEntries of every cluster.
func istioEntriesOf(items []item, readOf func(item) *watched) ([]model.ServiceEntry, []model.WorkloadEntry) {
	var ses []model.ServiceEntry
	var wes []model.WorkloadEntry
	for _, it := range items {
		w := readOf(it)
		if w == nil || it.e.removed {
			continue
		}
		if it.e.fromContext {
			ses = append(ses, w.ServiceEntries(it.e.id)...)
		}
		wes = append(wes, w.WorkloadEntries(it.e.id)...)
	}
	return ses, wes
}

// gatherCluster reads what one cluster contributes: its state, and for a
// watched cluster its (cached or rebuilt) part, the pods the
// ServiceEntries' selectors pick, its Istio config, control-plane facts and
// mesh config. wes are the WorkloadEntries of every cluster (its Services
// select its own). done says a pending watcher swap is over. read is the
// watcher to read: it.w, or a what-if's shadow of it (then nothing of the
// live watcher changes: its cached part is used only while still valid,
// and a rebuilt part is not kept).
func (r *Registry) gatherCluster(it item, read *watched, ix *build.NetworkIndex, sel build.Selectors, wes []model.WorkloadEntry) (sh build.Share, done bool) {
	e := it.e
	c := model.Cluster{ID: e.id, IDFrom: e.idFrom, Source: e.source, Sources: e.sources, Server: e.server, Warnings: e.warnings}
	if len(c.Sources) <= 1 {
		c.Sources = nil
	}
	switch {
	case e.removed:
		c.State = model.StateRemoved
	case e.fixed.Kind != "":
		c.State, c.ErrorKind, c.Reason = model.StateError, e.fixed.Kind, e.fixed.Reason
	case it.w == nil:
		c.State = model.StateConnecting
	default:
		it.w.Status(&c)
	}
	sh.Key, sh.FromContext = e.key, e.fromContext
	if read != nil && !e.removed {
		w := read
		var part *build.Part
		if w == it.w {
			part = w.part.Load()
			if w.TakeDirty() || !part.Valid(e.id, ix, sel) {
				part = r.buildPart(w, e.id, ix, sel, wes)
				w.part.Store(part)
			}
			part, done = e.swap.part(w, e.id, part)
		} else {
			part = it.w.part.Load()
			if w.changed || it.w.Dirty() || !part.Valid(e.id, ix, sel) {
				part = r.buildPart(w, e.id, ix, sel, wes)
			}
		}
		w.ControlPlaneFacts(&c, r.opts.SystemNamespace)
		sh.Part = part
		sh.SelectedNow = part.SelectorsKey == sel.Key
		sh.DestinationRules, sh.PeerAuthentications, sh.Sidecars, sh.VirtualServices = w.Policies(e.id)
		sh.IstioGateways = w.IstioGateways(e.id)
		// Which revision is predicted matters only where another one is
		// in sight: its istiods, or config labelled for it.
		rev := w.ConfigRevision()
		if other := w.ConfigOfOtherRevisions(rev); len(other) > 0 || len(c.Revisions()) > 1 || rev != model.RevisionDefault {
			c.PredictedRevision, c.OtherRevisionsConfig = rev, other
		}
	}
	if e.fromContext && !e.removed {
		mc := r.meshConfigOf(e.id, read)
		sh.MeshConfig = &mc
		if read != nil {
			sh.RevisionPlanes = r.revisionPlanes(read, &c)
		}
	}
	sh.Cluster = c
	return sh, done
}

// buildPart builds one cluster's part from its caches.
func (r *Registry) buildPart(w *watched, id string, ix *build.NetworkIndex, sel build.Selectors, wes []model.WorkloadEntry) *build.Part {
	v := w.View(r.opts.SystemNamespace)
	for _, we := range wes {
		if we.Cluster == id {
			v.WorkloadEntries = append(v.WorkloadEntries, we)
		}
	}
	part := build.BuildPart(v, id, ix)
	part.SelectorsKey, part.Selected = sel.Key, build.SelectPods(v, id, part.Network, ix, sel)
	part.NamespaceLabels = build.NamespaceLabels(v)
	return part
}

// revisionPlanes are the other running revisions of c's istiods (a canary
// upgrade), each with the mesh config and Istio config it reads.
func (r *Registry) revisionPlanes(w *watched, c *model.Cluster) []model.RevisionPlane {
	var out []model.RevisionPlane
	predicted := c.PredictedRevisionOf()
	for _, rev := range c.Revisions() {
		if rev == predicted {
			continue
		}
		p := model.RevisionPlane{Cluster: c.ID, Revision: rev, MeshConfig: r.meshConfigIn(c.ID, w, rev)}
		p.DestinationRules, p.PeerAuthentications, p.Sidecars, p.VirtualServices = w.PoliciesIn(c.ID, rev)
		p.IstioGateways = w.IstioGatewaysIn(c.ID, rev)
		out = append(out, p)
	}
	return out
}
