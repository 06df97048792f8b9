package explain

import (
	"fmt"

	"github.com/meshscope/meshscope/model"
)

// IstiodDisagreements compares istiod's own view (/debug/clusterz,
// /debug/networkz) with meshscope's snapshot. The most important case is
// the gap istiod itself leaves open (istio/istio#33799): istiod keeps saying
// "synced" for a cluster whose API server it can no longer watch.
func IstiodDisagreements(snap *model.Snapshot, v model.IstiodView) []model.Problem {
	var ps []model.Problem
	who := "istiod"
	if v.ControlPlane != "" {
		who = fmt.Sprintf("istiod (%s)", v.ControlPlane)
	}
	known := map[string]model.IstiodCluster{}
	for _, c := range v.Clusters {
		known[c.ID] = c
	}
	for _, c := range snap.Clusters {
		// Compare only what this istiod should know: its config cluster and
		// the clusters of remote secrets held in it.
		ours := c.ID == v.ControlPlane || len(c.SecretsFrom(v.ControlPlane)) > 0
		ic, listed := known[c.ID]
		switch {
		case !ours:
		case !listed && c.State != model.StateRemoved:
			ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemIstiodDisagrees, Cluster: c.ID,
				Sentence: fmt.Sprintf("%s does not list cluster %s that meshscope reads (%s %s): istiod ignored or failed to load its remote secret — check istiod's log for that secret", who, c.ID, c.Source.Kind, c.Source.Name)})
		case ic.SyncStatus == "synced" && (c.State == model.StateError || c.State == model.StateTimeout):
			ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemIstiodDisagrees, Cluster: c.ID,
				Sentence: fmt.Sprintf("%s says cluster %s is synced, but meshscope finds it %s (%s): istiod's \"synced\" only covers the first sync (istio/istio#33799), its endpoints from %s may be stale", who, c.ID, c.State, c.Reason, c.ID)})
		case ic.SyncStatus != "synced" && c.State == model.StateSynced:
			ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemIstiodDisagrees, Cluster: c.ID,
				Sentence: fmt.Sprintf("%s reports cluster %s as %q while meshscope has it synced: istiod may lack permissions or be unable to reach it", who, c.ID, ic.SyncStatus)})
		}
		delete(known, c.ID)
	}
	for id, ic := range known {
		ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemIstiodDisagrees, Cluster: id,
			Sentence: fmt.Sprintf("%s reads cluster %s (secret %q, %s) that meshscope does not see: give meshscope a context that holds that remote secret", who, id, ic.SecretName, ic.SyncStatus)})
	}

	type gk struct {
		net, addr string
		port      uint32
	}
	// Gateways that come from a DNS name are compared by
	// hostnameGatewayProblems, name by name: istiod's answer may differ
	// from meshscope's without anything being wrong.
	type ncp struct {
		net, cluster string
		port         uint32
	}
	named := map[ncp]bool{}
	plain := map[string]bool{}
	for _, g := range snap.Gateways {
		if g.Name != "" || g.Hostname {
			named[ncp{g.Network, g.Cluster, g.Port}] = true
		} else {
			plain[g.Address] = true
		}
	}
	ours := map[gk]model.Gateway{}
	for _, g := range snap.Gateways {
		if !g.Hostname && g.Name == "" && g.UsedBy(v.ControlPlane) {
			ours[gk{g.Network, g.Address, g.Port}] = g
		}
	}
	theirs := map[gk]model.IstiodGateway{}
	for _, g := range v.Gateways {
		if named[ncp{g.Network, g.Cluster, g.Port}] && !plain[g.Addr] {
			continue
		}
		theirs[gk{g.Network, g.Addr, g.Port}] = g
	}
	for k, g := range ours {
		if _, ok := theirs[k]; !ok && g.Port != 0 {
			ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemIstiodDisagrees, Cluster: g.Cluster,
				Sentence: fmt.Sprintf("%s does not know %s's gateway %s:%d (from %s in %s) that meshscope finds", who, k.net, k.addr, k.port, g.Source(), g.Cluster)})
		}
	}
	for k, g := range theirs {
		if _, ok := ours[k]; !ok {
			ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemIstiodDisagrees, Cluster: g.Cluster,
				Sentence: fmt.Sprintf("%s uses %s's gateway %s:%d (cluster %s) that meshscope does not find: a meshNetworks gateway or a resolved hostname meshscope cannot see", who, k.net, k.addr, k.port, g.Cluster)})
		}
	}
	SortProblems(ps)
	return ps
}
