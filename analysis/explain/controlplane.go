package explain

import (
	"fmt"
	"slices"
	"strings"

	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
)

// controlPlaneProblems reports, for each primary whose set of clusters is
// known, every cluster of the mesh its istiod does not read: that istiod's
// proxies never get the endpoints there ("only local endpoints", the most
// reported multicluster symptom).
func controlPlaneProblems(planes *plane.Set) []model.Problem {
	snap := planes.Snapshot()
	var ps []model.Problem
	for _, cp := range snap.ControlPlanes() {
		pv := planes.Of(cp)
		if !pv.Known() {
			continue
		}
		reads, from := pv.Reads, pv.From
		for i := range snap.Clusters {
			c := &snap.Clusters[i]
			if slices.Contains(reads, c.ID) || !meshMember(c) {
				continue
			}
			ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemControlPlaneMissingCluster, Cluster: cp,
				Objects:  []model.ObjectRef{{Cluster: cp, Kind: "Secret", Namespace: systemNamespace(snap), Name: RemoteSecretName(c.ID)}},
				Sentence: missingClusterSentence(snap, cp, c, reads, from)})
		}
	}
	return ps
}

// meshMember: a cluster that really is part of the mesh (not one whose
// remote secret was deleted, nor a secret that never named a usable cluster).
func meshMember(c *model.Cluster) bool {
	if c.State == model.StateRemoved {
		return false
	}
	switch c.ErrorKind {
	case model.ErrBadKubeconfig, model.ErrRefusedConfig, model.ErrDuplicateID:
		return false
	}
	return true
}

// systemNamespace is istiod's namespace, istio-system unless the
// snapshot says otherwise.
func systemNamespace(snap *model.Snapshot) string {
	if snap.SystemNamespace == "" {
		return "istio-system"
	}
	return snap.SystemNamespace
}

// RemoteSecretName is the name istioctl create-remote-secret --name=ID
// gives the remote secret of cluster ID.
func RemoteSecretName(id string) string { return "istio-remote-secret-" + id }

func missingClusterSentence(snap *model.Snapshot, cp string, c *model.Cluster, reads []string, from plane.Source) string {
	ns := systemNamespace(snap)
	why := fmt.Sprintf("%s holds no remote secret for it in %s (istioctl create-remote-secret --name=%s writes %s/istio-remote-secret-%s there)", cp, ns, c.ID, ns, c.ID)
	if from == plane.FromClusterz {
		why = fmt.Sprintf("its /debug/clusterz lists only %s — it has no (working) remote secret for %s (istioctl create-remote-secret --name=%s writes %s/istio-remote-secret-%s in %s)", strings.Join(reads, ", "), c.ID, c.ID, ns, c.ID, cp)
	}
	var elsewhere []string
	for _, other := range snap.ControlPlanes() {
		if other == cp {
			continue
		}
		for _, s := range c.SecretsFrom(other) {
			elsewhere = append(elsewhere, fmt.Sprintf("%s holds %s", other, s.Name))
		}
	}
	if len(elsewhere) > 0 {
		why += " (" + strings.Join(elsewhere, "; ") + " for it)"
	}
	var nets []string
	for _, id := range reads {
		if rc := snap.ClusterByID(id); rc != nil && rc.Network != "" && !slices.Contains(nets, rc.Network) {
			nets = append(nets, rc.Network)
		}
	}
	mc := snap.MeshConfigFor(cp)
	var hosts []string
	for _, svc := range snap.Services {
		if IsGatewayService(svc) || mc.ClusterLocal(svc.Hostname) {
			continue
		}
		if sic := svc.Clusters[c.ID]; sic != nil && len(sic.Endpoints) > 0 {
			hosts = append(hosts, model.ShortHost(svc.Hostname))
		}
	}
	lose := fmt.Sprintf("its proxies (in %s) lose every endpoint of %s (%s): %d service(s) with endpoints there%s",
		orText(strings.Join(nets, ", "), "its networks"), c.ID, orText(c.Network, "no network"), len(hosts), examples(hosts))
	return fmt.Sprintf("istiod %s does not read cluster %s: %s — %s; add the remote secret for %s to %s", cp, c.ID, why, lose, c.ID, cp)
}

// examples names the first few items: " (a, b, c and 4 more)".
func examples(items []string) string {
	if len(items) == 0 {
		return ""
	}
	n := min(len(items), groupExamples)
	s := strings.Join(items[:n], ", ")
	if len(items) > n {
		s += fmt.Sprintf(" and %d more", len(items)-n)
	}
	return " (" + s + ")"
}

// controlPlaneServiceProblems predicts every service from every network's
// viewpoint as each primary whose config meshscope reads would (its own
// clusters and Istio config), and reports leaks, mTLS drops and skew that
// endpoint counts do not explain. Identical findings of two primaries are
// one row. The views (planes) give istiod's answers for gateway names,
// where read.
func controlPlaneServiceProblems(planes *plane.Set, threshold int) []model.Problem {
	cps := plane.Primaries(planes.Snapshot())
	if len(cps) == 0 {
		cps = []string{""} // every cluster, every context's config
	}
	var ps []model.Problem
	seen := map[string]bool{}
	for _, cp := range cps {
		pv := planes.Of(cp)
		view := pv.Snap
		// Two primaries that read the same clusters with the same config
		// predict the same: predict once (the common multi-primary case).
		k := predictionKey(view, cp)
		if seen[k] {
			continue
		}
		seen[k] = true
		for _, v := range horizon.Viewpoints(view) {
			v.ConfigCluster = cp
			for _, svc := range view.Services {
				if IsGatewayService(svc) {
					continue
				}
				for _, port := range svc.Ports {
					p := horizon.PredictWith(view, pv.Index, svc.Hostname, port.Port, v)
					ps = append(ps, leakDropProblems(view, svc.Hostname, v, p)...)
					// Duplicate gateway entries are an error of their own;
					// the skew they cause is not said twice.
					if dups := duplicateProblems(svc.Hostname, svc.Namespace, port.Port, v, p); len(dups) > 0 {
						ps = append(ps, dups...)
					} else if sk, ok := skewProblem(svc.Hostname, port.Port, v, p, threshold); ok {
						ps = append(ps, sk)
					}
				}
			}
		}
	}
	return ps
}

// predictionKey identifies what a control plane's predictions depend on:
// the clusters it reads and its Istio and mesh config (by content, not by
// the cluster that holds it).
func predictionKey(view *model.Snapshot, cp string) string {
	var b strings.Builder
	for _, c := range view.Clusters {
		b.WriteString(c.ID + ",")
	}
	b.WriteString("|")
	for _, d := range view.DestinationRules {
		if cp == "" || d.Cluster == cp {
			b.WriteString(d.Namespace + "/" + d.Name + "=" + d.Fingerprint + ",")
		}
	}
	b.WriteString("|")
	for _, a := range view.PeerAuthentications {
		if cp == "" || a.Cluster == cp {
			b.WriteString(a.Namespace + "/" + a.Name + "=" + a.Fingerprint + ",")
		}
	}
	b.WriteString("|")
	for _, se := range view.ServiceEntries {
		if cp == "" || se.Cluster == cp {
			c := se
			c.Cluster = ""
			b.WriteString(jsonText(c) + ",")
		}
	}
	mc := view.MeshConfigFor(cp)
	mc.Cluster, mc.Source = "", ""
	b.WriteString("|" + jsonText(mc))
	return b.String()
}
