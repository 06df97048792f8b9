package fix

import (
	"fmt"
	"strings"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/model"
)

// Fixes that are commands: a remote secret made with istioctl (proven
// through the secret it writes, built in memory from meshscope's own
// credentials for the cluster), a secret deleted, a rollout restart
// (which what-if cannot prove).

// planMissingCluster: a primary's istiod reads no remote secret for a
// cluster of the mesh. istioctl create-remote-secret writes one.
func planMissingCluster(snap *model.Snapshot, p model.Problem) Plan {
	if len(p.Objects) == 0 {
		return Plan{}
	}
	ref := p.Objects[0]
	var missing *model.Cluster
	for i := range snap.Clusters {
		if explain.RemoteSecretName(snap.Clusters[i].ID) == ref.Name {
			missing = &snap.Clusters[i]
		}
	}
	if missing == nil {
		return Plan{}
	}
	return Plan{Proposals: []Proposal{remoteSecretProposal(snap, missing.ID, missing.ID, ref,
		fmt.Sprintf("add the remote secret for %s to %s (istioctl create-remote-secret)", missing.ID, ref.Cluster),
		fmt.Sprintf("istiod %s reads %s with the reader service account istioctl creates there: its proxies get %s's endpoints (and its services' problems become %s's too)", ref.Cluster, missing.ID, missing.ID, ref.Cluster))}}
}

// remoteSecretProposal is istioctl's command that writes the remote secret
// ref (in ref.Cluster) declaring cluster of under ID id, with the secret
// as an edit the proof builds in memory. Without a kube context of its
// own for the cluster, meshscope cannot build it: unproven.
func remoteSecretProposal(snap *model.Snapshot, of, id string, ref model.ObjectRef, title, trade string) Proposal {
	from, to := ContextOf(snap, of), ContextOf(snap, ref.Cluster)
	pr := Proposal{
		Title:   title,
		Trade:   trade,
		Command: fmt.Sprintf("istioctl create-remote-secret --context %s --name %s | kubectl apply --context %s -f -", orText(from, "CONTEXT-OF-"+of), id, orText(to, "CONTEXT-OF-"+ref.Cluster)),
		Edits:   []Edit{{Object: ref, RemoteSecret: of, SecretKey: id, What: fmt.Sprintf("the remote secret istioctl writes, declaring %s as %s (built in memory for the proof, never shown)", of, id)}},
	}
	if from == "" {
		pr.Unproven = fmt.Sprintf("meshscope reads cluster %s through no kube context of its own, so it has no credentials to build the secret with and try it (run it with --context for %s)", of, of)
	}
	return pr
}

// planRemoteSecret: a cluster known from a remote secret fails with that
// secret's kubeconfig. The secret made again with istioctl.
func planRemoteSecret(snap *model.Snapshot, p model.Problem) Plan {
	if len(p.Objects) == 0 {
		return Plan{}
	}
	ref := p.Objects[0]
	return Plan{Proposals: []Proposal{remoteSecretProposal(snap, p.Cluster, p.Cluster, ref,
		fmt.Sprintf("make the remote secret %s in %s again (istioctl create-remote-secret)", short(ref), ref.Cluster),
		fmt.Sprintf("replaces the secret's kubeconfig with one istioctl makes from %s's current server, CA and a new reader token", p.Cluster))}}
}

// planDuplicateSecret: a secret declaring its own cluster's API server
// under another ID. Deleting it leaves istiod reading its cluster once.
func planDuplicateSecret(snap *model.Snapshot, p model.Problem) Plan {
	if len(p.Objects) == 0 {
		return Plan{}
	}
	ref := p.Objects[0]
	return Plan{Proposals: []Proposal{{
		Title:   fmt.Sprintf("delete the remote secret %s in %s", short(ref), ref.Cluster),
		Trade:   fmt.Sprintf("istiod %s reads its own cluster once, as itself", ref.Cluster),
		Command: fmt.Sprintf("kubectl delete secret %s -n %s --context %s", ref.Name, ref.Namespace, orText(ContextOf(snap, ref.Cluster), ref.Cluster)),
		Edits:   []Edit{{Object: ref, Delete: true, What: "deleted"}},
	}}}
}

// planSecretClusterID: a secret naming a cluster otherwise than the
// CLUSTER_ID of the istiod running there. Made again under that ID, the
// old one deleted.
func planSecretClusterID(snap *model.Snapshot, p model.Problem) Plan {
	c := snap.ClusterByID(p.Cluster)
	if c == nil || len(p.Objects) == 0 {
		return Plan{}
	}
	own := ""
	for _, is := range c.Istiods {
		if is.ClusterID != "" {
			own = is.ClusterID
			break
		}
	}
	if own == "" {
		return Plan{}
	}
	old := p.Objects[0]
	ref := model.ObjectRef{Cluster: old.Cluster, Kind: "Secret", Namespace: old.Namespace, Name: explain.RemoteSecretName(own)}
	pr := remoteSecretProposal(snap, c.ID, own, ref,
		fmt.Sprintf("make the remote secret of %s again under its istiod's CLUSTER_ID %s, and delete %s in %s", c.ID, own, short(old), old.Cluster),
		fmt.Sprintf("istiod %s files %s's endpoints under the ID its own proxies send", old.Cluster, c.ID))
	pr.Command += fmt.Sprintf(" && kubectl delete secret %s -n %s --context %s", old.Name, old.Namespace, orText(ContextOf(snap, old.Cluster), old.Cluster))
	if old != ref {
		pr.Edits = append(pr.Edits, Edit{Object: old, Delete: true, What: "deleted"})
	}
	return Plan{Proposals: []Proposal{pr}}
}

// planSecretRBAC: the secret's user lacks a permission istiod needs.
func planSecretRBAC(snap *model.Snapshot, p model.Problem) Plan {
	if len(p.Objects) == 0 {
		return Plan{}
	}
	ref := p.Objects[0]
	pr := remoteSecretProposal(snap, p.Cluster, p.Cluster, ref,
		fmt.Sprintf("make the remote secret %s in %s again with istioctl, whose reader service account istio-reader-clusterrole binds", short(ref), ref.Cluster),
		"the new token's user may read what istiod reads")
	pr.Edits = nil
	pr.Unproven = "permissions are RBAC, which what-if does not model"
	return Plan{Proposals: []Proposal{pr}}
}

// planRestart: proxies injected with what their pods no longer are (a
// network, a revision). A rollout restart injects them again.
func planRestart(_ *model.Snapshot, p model.Problem) Plan {
	if len(p.Objects) == 0 {
		return none("the pods are not known")
	}
	return Plan{Proposals: []Proposal{{
		Title:    "restart the workloads of " + podsText(p.Objects) + " (kubectl rollout restart)",
		Trade:    "replaces their pods: the injector gives the new ones their current network and revision",
		Restart:  p.Objects,
		Unproven: "a restart: what-if keeps each pod's live name, address and injected identity, and cannot know the pods a rollout makes",
	}}}
}

// planStaleEndpoint: istiod still sends endpoints that are gone: its watch
// of the cluster is broken. Restarting istiod resyncs it.
func planStaleEndpoint(snap *model.Snapshot, p model.Problem) Plan {
	c := snap.ClusterByID(p.ControlPlane)
	if c == nil || len(c.Istiods) == 0 {
		return none("istiod's pod is not known")
	}
	var pods []model.ObjectRef
	for _, is := range c.Istiods {
		pods = append(pods, model.ObjectRef{Cluster: c.ID, Kind: "Pod", Namespace: systemNamespace(snap), Name: is.Name})
	}
	return Plan{Proposals: []Proposal{{
		Title:    fmt.Sprintf("restart istiod %s (kubectl rollout restart)", c.ID),
		Trade:    "istiod reads every cluster again from scratch; its proxies keep their config meanwhile",
		Restart:  pods,
		Unproven: "a restart of istiod, whose broken watch what-if cannot model",
	}}}
}

// ContextOf is the kube context a cluster is read through ("" when none).
func ContextOf(snap *model.Snapshot, id string) string {
	c := snap.ClusterByID(id)
	if c == nil {
		return ""
	}
	if c.Source.Kind == model.SourceContext {
		return c.Source.Name
	}
	for _, s := range c.Sources {
		if s.Kind == model.SourceContext {
			return s.Name
		}
	}
	return ""
}

func orText(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
