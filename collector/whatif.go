package collector

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/meshscope/meshscope/collector/build"
	"github.com/meshscope/meshscope/collector/internal/errs"
	"github.com/meshscope/meshscope/collector/watch"
	"github.com/meshscope/meshscope/model"
)

// Change is one object of a what-if: put (created, or replacing the object
// of that name) or deleted, in one cluster. Nothing is ever sent to the
// cluster: the change lives in the what-if's overlay of its caches.
type Change struct {
	// Cluster is the cluster's ID.
	Cluster string
	Delete  bool
	Object  *unstructured.Unstructured
	// Origin says where the object was written (file:line), for errors.
	Origin string
}

// what names the change for people: "put Service ns/name in cluster1".
func (c Change) what() string {
	verb := "put"
	if c.Delete {
		verb = "delete"
	}
	return fmt.Sprintf("%s %s %s in %s", verb, c.Object.GetKind(), cache.MetaObjectToName(c.Object).String(), c.Cluster)
}

// Outcome is what a change did: the informers it landed in, or why it
// changes nothing meshscope (or istiod) reads.
type Outcome struct {
	Change Change
	// Read lists the caches it changed ("services", "istiod pods"); empty
	// when no informer of its cluster reads such objects.
	Read []string
	// Unread says why nothing reads it ("" when Read is not empty).
	Unread string
	// Effect says what a workload controller did to the pods it owns
	// ("2 pods in cluster2 re-made from its template …"; "" for other
	// kinds).
	Effect string
}

// WhatIf is a what-if's two snapshots, built the same way at the same
// moment from the same caches: Before as the mesh is, After with the
// changes and the istiod settings given.
type WhatIf struct {
	Before, After *model.Snapshot
	Outcomes      []Outcome
	// Notes say what the what-if could not follow (a cluster a new remote
	// secret adds, which meshscope does not watch; new credentials).
	Notes []string
}

// ErrWhatIf marks an error in a what-if's changes (an unknown cluster, a
// delete of an object that does not exist), as opposed to the mesh.
var ErrWhatIf = errors.New("what-if")

// WhatIf builds the mesh as it is and as it would be with changes made and
// the istiod settings env stated (on top of --istiod-env): the changed
// objects go through the informers' transforms, the same parsers, the
// same planning of clusters (remote secrets) and the same build as real
// events would, into two snapshots that nothing else sees. Clusters whose
// caches the changes do not touch reuse their current parts.
func (r *Registry) WhatIf(changes []Change, env []model.IstiodEnv) (*WhatIf, error) {
	ctx, cancel := context.WithTimeout(context.Background(), credentialTimeout+r.opts.SyncTimeout+5*time.Second)
	defer cancel()
	ws := r.tryWhatIfSecrets(ctx, changes) // before the build lock: it takes seconds
	defer ws.stop()
	r.buildMu.Lock()
	defer r.buildMu.Unlock()
	items := r.items()
	overlays, outcomes, err := r.overlaysFor(items, changes)
	if err != nil {
		return nil, err
	}
	out := &WhatIf{Outcomes: outcomes}
	for _, it := range items {
		var mine []*unstructured.Unstructured
		for _, ch := range changes {
			if ch.Cluster == it.e.id {
				mine = append(mine, ch.Object)
			}
		}
		if it.w != nil && len(mine) > 0 {
			out.Notes = append(out.Notes, overlays[it.ptr].EndpointSlices(mine)...)
		}
	}
	read := map[*entry]*watched{}
	for _, it := range items {
		if it.w != nil {
			read[it.ptr] = &watched{Watcher: it.w.Shadow(nil)}
		}
	}
	version := r.version
	live := r.remoteSecrets()
	out.Before = r.buildFrom(version, items, read, nil, r.opts.IstiodEnv, live)

	after := map[*entry]*watched{}
	for _, it := range items {
		if it.w == nil {
			continue
		}
		ov := overlays[it.ptr]
		after[it.ptr] = &watched{Watcher: it.w.Shadow(ov), changed: ov.Changes()}
	}
	items, extra, secrets, notes := r.replan(items, after, overlays, ws)
	if secrets == nil {
		secrets = live
	}
	out.Notes = append(out.Notes, notes...)
	out.After = r.buildFrom(version, items, after, extra, append(slices.Clone(r.opts.IstiodEnv), env...), secrets)
	return out, nil
}

// buildFrom is build for a what-if: the same steps over shadows of the
// watchers (read), changing nothing of the live ones. extra are clusters
// a what-if plans that meshscope does not watch.
func (r *Registry) buildFrom(version uint64, items []item, read map[*entry]*watched, extra []build.Share, env []model.IstiodEnv, secrets []model.RemoteSecret) *model.Snapshot {
	readOf := func(it item) *watched { return read[it.ptr] }
	in := build.Input{Version: version, Time: r.snap.Load().Time, SystemNamespace: r.opts.SystemNamespace, IstiodEnv: env}
	in.MeshNetworks, in.MeshNetworksIn, in.NetworkIndex, in.NetworkWarnings = r.meshNetworksOf(items, readOf)
	in.ServiceEntries, in.WorkloadEntries = istioEntriesOf(items, readOf)
	sel := build.SelectorsOf(in.ServiceEntries)
	for _, it := range items {
		w := read[it.ptr]
		if it.e.fixed.Kind != "" {
			w = nil
		}
		sh, _ := r.gatherCluster(it, w, in.NetworkIndex, sel, in.WorkloadEntries)
		in.Clusters = append(in.Clusters, sh)
	}
	in.Clusters = append(in.Clusters, extra...)
	in.GatewayNames = r.whatIfGatewayNames(build.GatewayNames(in))
	in.RemoteSecrets = secrets
	return build.Assemble(in)
}

// overlaysFor routes every change to the informers of its cluster that
// read such objects, through their transforms: an overlay per cluster
// changed.
func (r *Registry) overlaysFor(items []item, changes []Change) (map[*entry]*watch.Overlay, []Outcome, error) {
	overlays := map[*entry]*watch.Overlay{}
	var outcomes []Outcome
	for _, ch := range changes {
		it, err := whatIfCluster(items, ch)
		if err != nil {
			return nil, nil, err
		}
		ov := overlays[it.ptr]
		if ov == nil {
			ov = it.w.NewOverlay(it.e.id)
			overlays[it.ptr] = ov
		}
		o, err := r.route(ov, ch)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %s: %s: %v", ErrWhatIf, ch.Origin, ch.what(), err)
		}
		outcomes = append(outcomes, o)
	}
	return overlays, outcomes, nil
}

// whatIfCluster finds the watched cluster a change is for.
func whatIfCluster(items []item, ch Change) (item, error) {
	var ids []string
	for _, it := range items {
		if it.e.id != ch.Cluster {
			ids = append(ids, it.e.id)
			continue
		}
		switch {
		case it.e.removed:
			return it, fmt.Errorf("%w: %s: cluster %s was removed from the mesh: meshscope holds none of its objects", ErrWhatIf, ch.Origin, ch.Cluster)
		case it.w == nil:
			reason := "is not watched"
			if it.e.fixed.Kind != "" {
				reason = "cannot be read (" + it.e.fixed.Reason + ")"
			}
			return it, fmt.Errorf("%w: %s: cluster %s %s: meshscope holds none of its objects", ErrWhatIf, ch.Origin, ch.Cluster, reason)
		}
		return it, nil
	}
	slices.Sort(ids)
	return item{}, fmt.Errorf("%w: %s: no cluster %q in the mesh (clusters: %s)", ErrWhatIf, ch.Origin, ch.Cluster, strings.Join(ids, ", "))
}

// route puts (or deletes) one change in every informer of its cluster
// whose list-watch selects it, through the cluster's overlay ov (a
// workload controller: the pods it owns, as its controller would), and
// refuses a change of a mesh config that is read from a file instead.
func (r *Registry) route(ov *watch.Overlay, ch Change) (Outcome, error) {
	o := Outcome{Change: ch}
	var err error
	if watch.IsWorkload(ch.Object.GroupVersionKind().GroupKind()) {
		o.Read, o.Effect, o.Unread, err = ov.ApplyWorkload(ch.Object, ch.Delete)
		return o, err
	}
	if o.Read, o.Unread, err = ov.Apply(ch.Object, ch.Delete); err != nil {
		return o, err
	}
	if ch.Object.GroupVersionKind().Kind == "ConfigMap" && r.meshFiles != nil {
		if f, ok := r.meshFiles.get(ch.Cluster); ok && ch.Object.GetName() == model.MeshConfigMapName(r.opts.Revision) {
			return o, fmt.Errorf("the mesh config of cluster %s is read from %s (--mesh-config), not from ConfigMap %s: change the file instead", ch.Cluster, f.path, cache.MetaObjectToName(ch.Object).String())
		}
	}
	return o, nil
}

// replan plans the clusters again when the changes touch what planning
// reads (remote secrets, istiod pods, the injector's ConfigMap), as a
// real change would: the items as the plan leaves them (with the clusters
// it adds that are read through their secret, which read gets), the
// shares of added clusters that are not, the remote secrets of the plan
// with their tests (nil when nothing was replanned) and notes.
func (r *Registry) replan(items []item, read map[*entry]*watched, overlays map[*entry]*watch.Overlay, ws *whatIfSecrets) ([]item, []build.Share, []model.RemoteSecret, []string) {
	touched := false
	for _, it := range items {
		touched = touched || overlays[it.ptr].Replans()
	}
	if !touched {
		return items, nil, nil, nil
	}
	r.mu.Lock()
	shadowOf := func(e *entry) *watched { return read[e] }
	secs, _ := r.secretInputsLocked(shadowOf, maps.Clone(r.parseCache))
	plan := planClusters(r.contextInputsLocked(shadowOf), secs)
	r.mu.Unlock()
	tests := make([]*model.CredentialTest, len(secs))
	testOf := map[model.SourceRef]*model.CredentialTest{}
	for i := range secs {
		tests[i] = r.testOf(ws, &secs[i])
		testOf[secs[i].Ref] = tests[i]
	}

	byKey := map[string]plannedCluster{}
	for _, p := range plan {
		byKey[p.key] = p
	}
	var notes []string
	known := map[string]bool{}
	out := make([]item, 0, len(items))
	for _, it := range items {
		known[it.e.key] = true
		p, ok := byKey[it.e.key]
		if !ok {
			it.e.removed = true
			out = append(out, it)
			continue
		}
		it.e.id, it.e.idFrom, it.e.source, it.e.sources, it.e.warnings = p.id, p.idFrom, p.source, p.sources, p.warnings
		it.e.removed = false
		// As applyLocked: a context's only planned problem is a duplicate ID.
		switch {
		case !it.e.fromContext || p.problem.Kind != "":
			it.e.fixed = p.problem
		case it.e.fixed.Kind == model.ErrDuplicateID:
			it.e.fixed = errs.Failure{}
		}
		if !it.e.fromContext && p.problem.Kind == "" && it.w != nil && p.hash != it.e.hash {
			notes = append(notes, newCredentialsNote(&it, p, testOf[p.source]))
		}
		out = append(out, it)
	}
	var extra []build.Share
	for _, p := range plan {
		if known[p.key] {
			continue
		}
		added, sh, note := ws.addedCluster(p, testOf[p.source])
		if added != nil {
			out = append(out, *added)
			read[added.ptr] = added.w
		} else {
			extra = append(extra, sh)
		}
		if note != "" {
			notes = append(notes, note)
		}
	}
	return out, extra, r.tests.remoteSecrets(secs, tests), notes
}

// sourceText names where a cluster is declared, for notes.
func sourceText(s model.SourceRef) string {
	if s.Kind == model.SourceSecret {
		return "remote secret " + s.Name + " in " + s.In
	}
	return "context " + s.Name
}
