package collector

import (
	"fmt"
	"sort"

	"k8s.io/client-go/rest"

	"github.com/meshscope/meshscope/collector/internal/errs"
	"github.com/meshscope/meshscope/model"
)

// The Registry keeps its clusters in three steps:
//
//  1. plan (this file, pure): from the context clusters and the remote
//     secrets read in them, decide the clusters of the mesh — their IDs,
//     where each ID comes from, every way each is reached, and the
//     problems that stop one from being watched (a refused kubeconfig, a
//     duplicate ID);
//  2. apply (registry.go): start, restart (changed kubeconfig) and stop
//     watchers until the running ones match the plan;
//  3. gather (gather.go) every watcher's caches (watch/watcher_view.go) and
//     build (package collector/build, pure) a Snapshot from them.
//
// Planning touches no informer and no client, so it is table-tested.

// contextIn is what planning knows of one context cluster.
type contextIn struct {
	key, name, server string
	// flagID is --cluster-id for this context ("" when not given).
	flagID string
	// istiodIDs are the distinct CLUSTER_IDs of istiod pods in the
	// cluster; injectorID the injector's clusterName.
	istiodIDs  []string
	injectorID string
}

// plannedCluster is one cluster the registry should watch.
type plannedCluster struct {
	key         string
	id          string
	idFrom      model.IDSource
	source      model.SourceRef
	sources     []model.SourceRef
	server      string
	fromContext bool
	// problem stops the cluster from being watched: a refused or broken
	// kubeconfig, or an ID another cluster registered first.
	problem errs.Failure
	// config and hash are the remote secret's kubeconfig (secret clusters).
	config   *rest.Config
	hash     [32]byte
	warnings []string
}

// planClusters decides the clusters of the mesh from the contexts (in
// order) and the remote secrets read in them (oldest first; each with
// holderKey set to the context it was read from). It mirrors istiod's
// secret controller where meshscope meets the same questions: a key equal
// to the reader's own cluster ID is ignored; an ID already registered is
// refused; and it adds what istiod cannot know: a secret pointing at the
// API server of a context is that context's cluster.
func planClusters(ctxs []contextIn, secs []secretEntry) []plannedCluster {
	plan := make([]plannedCluster, 0, len(ctxs)+len(secs))
	ctxAt := map[string]int{}       // context key → index in plan
	ctxByServer := map[string]int{} // API server → index in plan
	for _, c := range ctxs {
		p := plannedCluster{key: c.key, server: c.server, fromContext: true,
			source: model.SourceRef{Kind: model.SourceContext, Name: c.name}}
		p.sources = []model.SourceRef{p.source}
		p.id, p.idFrom, p.warnings = contextID(c, secs)
		ctxAt[c.key] = len(plan)
		if c.server != "" {
			ctxByServer[c.server] = len(plan)
		}
		plan = append(plan, p)
	}
	// Secrets name their holder by its planned ID.
	for i := range secs {
		if at, ok := ctxAt[secs[i].holderKey]; ok {
			secs[i].Ref.In = plan[at].id
		}
	}
	idsByServer := map[string]string{}
	for _, p := range plan {
		if p.server != "" {
			idsByServer[p.server] = p.id
		}
	}
	secretAt := map[string]int{} // key → index in plan
	for _, se := range secs {
		var key string
		holder := plan[ctxAt[se.holderKey]]
		switch {
		case se.Problem.Kind != "":
			key = "secret:" + se.Ref.In + "/" + se.Ref.Name + "/" + se.Ref.Key
		case se.ID == se.Ref.In && se.Server != holder.server:
			// istiod ignores a key equal to its own cluster ID; the
			// context cluster already covers it.
			plan[ctxAt[se.holderKey]].warnings = append(plan[ctxAt[se.holderKey]].warnings,
				fmt.Sprintf("remote secret %s key %q equals this cluster's ID: ignored, as istiod does", se.Ref.Name, se.ID))
			continue
		default:
			if at, ok := ctxByServer[se.Server]; ok {
				// A context reaches this server: one cluster, whatever
				// the secret calls it (the context's ID and credentials
				// win; contextID warned about a different name).
				plan[at].sources = append(plan[at].sources, se.Ref)
				continue
			}
			key = "id:" + se.ID + "@" + se.Server
		}
		if at, ok := secretAt[key]; ok {
			// The same cluster registered in several primaries.
			plan[at].sources = append(plan[at].sources, se.Ref)
			continue
		}
		p := plannedCluster{key: key, id: se.ID, idFrom: model.IDFromRemoteSecret, source: se.Ref, sources: []model.SourceRef{se.Ref},
			server: se.Server, problem: se.Problem, config: se.Config, hash: se.Hash}
		if se.Server != "" {
			if other, seen := idsByServer[se.Server]; seen && other != se.ID {
				p.warnings = append(p.warnings, fmt.Sprintf("same API server as cluster %q: istiod sees it twice (duplicate endpoints)", other))
			} else {
				idsByServer[se.Server] = se.ID
			}
		}
		secretAt[key] = len(plan)
		plan = append(plan, p)
	}
	markDuplicateIDs(plan)
	return plan
}

// contextID picks a context cluster's ID: --cluster-id, else its istiod's
// CLUSTER_ID, else the ID the other clusters' remote secrets give its API
// server, else the injector's clusterName, else the context name. Every
// other source that names it differently is a warning.
func contextID(c contextIn, secs []secretEntry) (string, model.IDSource, []string) {
	type named struct {
		id   string
		from model.IDSource
		what string
	}
	var names []named
	if c.flagID != "" {
		names = append(names, named{c.flagID, model.IDFromFlag, "--cluster-id"})
	}
	for _, id := range c.istiodIDs {
		names = append(names, named{id, model.IDFromIstiod, "the istiod pod's CLUSTER_ID"})
	}
	for _, se := range secs {
		if se.Problem.Kind == "" && c.server != "" && se.Server == c.server && se.holderKey != c.key {
			names = append(names, named{se.ID, model.IDFromRemoteSecret, fmt.Sprintf("remote secret %s (in %s)", se.Ref.Name, se.holderName)})
		}
	}
	if c.injectorID != "" {
		names = append(names, named{c.injectorID, model.IDFromInjector, "the sidecar injector's clusterName"})
	}
	if len(names) == 0 {
		return c.name, model.IDFromContext, nil
	}
	chosen := names[0]
	var warnings []string
	seen := map[string]bool{chosen.id: true}
	for _, n := range names[1:] {
		if n.id == chosen.id || seen[n.what+"\x00"+n.id] {
			continue
		}
		seen[n.what+"\x00"+n.id] = true
		warnings = append(warnings, fmt.Sprintf("%s calls this cluster %q, but meshscope uses %q (from %s): proxies and istiods that use the other name will not match its endpoints", n.what, n.id, chosen.id, chosen.what))
	}
	return chosen.id, chosen.from, warnings
}

// markDuplicateIDs gives the later of two clusters with one ID (different
// API servers) an error, as istiod refuses a second registration.
// Contexts come first, then secrets oldest first.
func markDuplicateIDs(plan []plannedCluster) {
	first := map[string]int{}
	for i := range plan {
		p := &plan[i]
		f, dup := first[p.id]
		if !dup {
			first[p.id] = i
			continue
		}
		if p.problem.Kind != "" {
			continue
		}
		what := "context " + plan[f].source.Name
		if plan[f].source.Kind == model.SourceSecret {
			what = "remote secret " + plan[f].source.Name + " in " + plan[f].source.In
		}
		p.problem = errs.Newf(model.ErrDuplicateID, "duplicate cluster ID %q: already registered by %s", p.id, what)
	}
}

// sortSecrets orders secret entries oldest first, as istiod registers them
// as they arrive.
func sortSecrets(secs []secretEntry) {
	sort.SliceStable(secs, func(i, j int) bool { return secs[i].Order < secs[j].Order })
}
