package explain

import (
	"fmt"
	"slices"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// istiodNeeds are the resources istiod lists and watches in every cluster
// it reads (its kube registry: services, endpoint slices, pods, nodes for
// localities and NodePort gateways, namespaces for the network label).
var istiodNeeds = []string{"services", "endpointslices", "pods", "nodes", "namespaces"}

// secretProblems are remote-secret problems beyond reachability:
//   - one API server registered twice by one istiod under two cluster IDs
//     (two secrets, or a secret naming the istiod's own cluster): every
//     endpoint there is counted twice;
//   - a secret's cluster ID that differs from the CLUSTER_ID of the istiod
//     running in that cluster.
//
// What each secret's credential may do is secrets_credentials.go's.
func secretProblems(snap *model.Snapshot) []model.Problem {
	var ps []model.Problem
	ps = append(ps, duplicateServerProblems(snap)...)
	ps = append(ps, clusterIDProblems(snap)...)
	return ps
}

// duplicateServerProblems: an istiod that reads one API server as two
// clusters. Either two clusters share a server and one holder reads both,
// or a secret held in a cluster names that cluster's own server under
// another ID (istiod only skips a key equal to its own ID).
func duplicateServerProblems(snap *model.Snapshot) []model.Problem {
	var ps []model.Problem
	byServer := map[string][]*model.Cluster{}
	var servers []string
	for i := range snap.Clusters {
		c := &snap.Clusters[i]
		if c.Server == "" || !meshMember(c) {
			continue
		}
		if byServer[c.Server] == nil {
			servers = append(servers, c.Server)
		}
		byServer[c.Server] = append(byServer[c.Server], c)
		for _, s := range c.SecretsFrom(c.ID) {
			if s.Key != "" && s.Key != c.ID {
				ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemRemoteSecretDuplicate, Cluster: c.ID,
					Objects: []model.ObjectRef{secretRef(s)},
					Sentence: fmt.Sprintf("remote secret %s in %s declares cluster %q for %s's own API server (%s): istiod %s reads itself a second time, so every endpoint of %s is sent twice — delete that secret (or its key %q)",
						s.Name, c.ID, s.Key, c.ID, c.Server, c.ID, c.ID, s.Key)})
			}
		}
		ps = append(ps, twoKeysProblems(c)...)
	}
	for _, srv := range servers {
		cs := byServer[srv]
		if len(cs) < 2 {
			continue
		}
		for _, holder := range snap.ControlPlanes() {
			reads, known := snap.ClustersReadBy(holder)
			if !known {
				continue
			}
			var both []string
			var how []string
			for _, c := range cs {
				if slices.Contains(reads, c.ID) {
					both = append(both, c.ID)
					how = append(how, sourceOf(c, holder))
				}
			}
			if len(both) < 2 {
				continue
			}
			ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemRemoteSecretDuplicate, Cluster: both[1],
				Sentence: fmt.Sprintf("istiod %s reads the API server %s twice, as clusters %s (%s): every endpoint there is counted twice (doubled gateway weights, duplicate endpoints) — keep one remote secret per API server, under the cluster's real ID",
					holder, srv, strings.Join(both, " and "), strings.Join(how, "; "))})
		}
	}
	return ps
}

// twoKeysProblems: one holder with secrets that declare the same API server
// (one cluster for meshscope, which merges sources by server) under two
// different keys: that holder's istiod registers it twice.
func twoKeysProblems(c *model.Cluster) []model.Problem {
	var ps []model.Problem
	byHolder := map[string][]model.SourceRef{}
	var holders []string
	for _, s := range c.Sources {
		if s.Kind != model.SourceSecret || s.In == c.ID || s.Key == "" {
			continue
		}
		if byHolder[s.In] == nil {
			holders = append(holders, s.In)
		}
		if !slices.ContainsFunc(byHolder[s.In], func(o model.SourceRef) bool { return o.Key == s.Key }) {
			byHolder[s.In] = append(byHolder[s.In], s)
		}
	}
	for _, h := range holders {
		srcs := byHolder[h]
		if len(srcs) < 2 {
			continue
		}
		var how []string
		for _, s := range srcs {
			how = append(how, fmt.Sprintf("%q from remote secret %s", s.Key, s.Name))
		}
		ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemRemoteSecretDuplicate, Cluster: c.ID,
			Sentence: fmt.Sprintf("istiod %s reads the API server %s (cluster %s) twice, as %s: every endpoint there is counted twice (doubled gateway weights, duplicate endpoints) — keep one remote secret per API server, under the cluster's real ID",
				h, orText(c.Server, "of "+c.ID), c.ID, strings.Join(how, " and "))})
	}
	return ps
}

// secretRef names the remote secret a cluster is declared by (its holder
// cluster, "namespace/name").
func secretRef(s model.SourceRef) model.ObjectRef {
	ns, name, _ := strings.Cut(s.Name, "/")
	return model.ObjectRef{Cluster: s.In, Kind: "Secret", Namespace: ns, Name: name}
}

// sourceOf says how holder's istiod reads c.
func sourceOf(c *model.Cluster, holder string) string {
	if c.ID == holder {
		return c.ID + ": its own cluster"
	}
	var names []string
	for _, s := range c.SecretsFrom(holder) {
		names = append(names, "remote secret "+s.Name)
	}
	return c.ID + ": " + orText(strings.Join(names, ", "), "a remote secret")
}

// clusterIDProblems: a secret that names a cluster differently from the
// CLUSTER_ID its own istiod runs with. Proxies there send that CLUSTER_ID
// while the reading istiod files their endpoints under the secret's key:
// cluster-local services, locality and the istio.workload metadata then
// disagree between the two control planes.
func clusterIDProblems(snap *model.Snapshot) []model.Problem {
	var ps []model.Problem
	for i := range snap.Clusters {
		c := &snap.Clusters[i]
		own, pod := "", ""
		for _, p := range c.Istiods {
			if p.ClusterID != "" {
				own, pod = p.ClusterID, p.Name
				break
			}
		}
		if own == "" || !meshMember(c) {
			continue
		}
		srcs := c.Sources
		if len(srcs) == 0 {
			srcs = []model.SourceRef{c.Source}
		}
		for _, s := range srcs {
			if s.Kind != model.SourceSecret || s.Key == "" || s.Key == own || s.In == c.ID {
				continue
			}
			ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemRemoteSecretClusterID, Cluster: c.ID,
				Objects: []model.ObjectRef{secretRef(s)},
				Sentence: fmt.Sprintf("remote secret %s in %s calls the API server %s %q, but the istiod running there (pod %s) has CLUSTER_ID %q: istiod %s files that cluster's endpoints under another ID than its own proxies send, so cluster-local services, locality and multi-primary config disagree — recreate the secret with --name=%s",
					s.Name, s.In, c.Server, s.Key, pod, own, s.In, own)})
		}
	}
	return ps
}

// secretRBACProblems: for a cluster meshscope reads with a remote secret's
// own credentials whose credential was not tried (the test says more:
// missingPermissionProblems), each resource istiod needs that the
// secret's user may not list or watch, as the watchers found. (A missing
// required resource already puts the cluster in error; this names what
// istiod will miss.)
func secretRBACProblems(snap *model.Snapshot) []model.Problem {
	var ps []model.Problem
	for i := range snap.Clusters {
		c := &snap.Clusters[i]
		if c.Source.Kind != model.SourceSecret || c.IsContext() || !meshMember(c) || secretTried(snap, c.Source) {
			continue
		}
		var missing []string
		for _, r := range c.Forbidden {
			if slices.Contains(istiodNeeds, r) {
				missing = append(missing, r)
			}
		}
		if len(missing) == 0 {
			continue
		}
		ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemRemoteSecretRBAC, Cluster: c.ID,
			Objects: []model.ObjectRef{secretRef(c.Source)},
			Sentence: fmt.Sprintf("the user of remote secret %s (in %s) may not list/watch %s in %s, which istiod needs there: its informers for them never sync, so istiod %s marks %s timed out after PILOT_REMOTE_CLUSTER_TIMEOUT and works without them — grant get/list/watch on %s to that user (istio-reader-clusterrole)",
				c.Source.Name, c.Source.In, strings.Join(missing, ", "), c.ID, c.Source.In, c.ID, strings.Join(missing, ", "))})
	}
	return ps
}

// secretTried says whether the credential of the secret ref was tried.
func secretTried(snap *model.Snapshot, ref model.SourceRef) bool {
	for _, rs := range snap.RemoteSecrets {
		if rs.Ref == ref {
			return rs.Test != nil && rs.Test.Skipped == ""
		}
	}
	return false
}
