package explain

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// revisionProblems reports what a canary upgrade leaves behind
// (model/revisions.go): namespaces labelled for a revision (or tag) no
// istiod serves, proxies injected by a revision no istiod serves any more,
// proxies still on the revision their namespace left, and revisions of one
// primary that read mesh configs which send different endpoints; and, as
// information, the Istio config left out for being another revision's.
func revisionProblems(snap *model.Snapshot) []model.Problem {
	var ps []model.Problem
	ps = append(ps, namespaceRevisionProblems(snap)...)
	ps = append(ps, proxyRevisionProblems(snap)...)
	ps = append(ps, revisionConfigProblems(snap)...)
	ps = append(ps, otherRevisionConfigProblems(snap)...)
	return ps
}

// served says whether an istiod of revision rev serves cluster id: "" when
// one does and is ready, else why not.
func served(snap *model.Snapshot, id, rev string) string {
	servers, _ := snap.RevisionServers(id)
	var runs []string
	for _, p := range servers {
		if p.RevisionReady(rev) {
			return ""
		}
		for _, r := range p.Revisions() {
			if !slices.Contains(runs, r) {
				runs = append(runs, r)
			}
		}
	}
	sort.Strings(runs)
	where := serversText(servers)
	if slices.Contains(runs, rev) {
		return fmt.Sprintf("the istiod pods of revision %s in %s are not ready", rev, where)
	}
	return fmt.Sprintf("no istiod of revision %s runs in %s (revisions there: %s)", rev, where, strings.Join(runs, ", "))
}

func serversText(servers []*model.Cluster) string {
	var ids []string
	for _, c := range servers {
		ids = append(ids, c.ID)
	}
	return strings.Join(ids, ", ")
}

// revisionName is a namespace or pod label's value with the tag it goes
// through: "canary", or "prod (tag of canary)".
func revisionName(name, rev, via string) string {
	if via == "" {
		return name
	}
	return fmt.Sprintf("%s (a tag of revision %s)", name, rev)
}

func tagsUnknown(c *model.Cluster) string {
	if c != nil && slices.Contains(c.Forbidden, "revision tags") {
		return "; meshscope cannot read the revision tags (MutatingWebhookConfigurations) of " + c.ID + ", so a tag of that name would not be seen"
	}
	return ""
}

// namespaceRevisionProblems: a namespace labelled for injection by a
// revision no istiod serves in its cluster. New pods there get no sidecar
// (no webhook selects them) or are refused (the revision's webhook is left
// and its istiod is gone).
func namespaceRevisionProblems(snap *model.Snapshot) []model.Problem {
	var ps []model.Problem
	for i := range snap.Clusters {
		c := &snap.Clusters[i]
		if c.State == model.StateRemoved {
			continue
		}
		if _, known := snap.RevisionServers(c.ID); !known {
			continue
		}
		a := snap.AmbientFor(c.ID)
		if a == nil {
			continue
		}
		names := make([]string, 0, len(a.Namespaces))
		for ns := range a.Namespaces {
			names = append(names, ns)
		}
		sort.Strings(names)
		for _, ns := range names {
			labels := a.Namespaces[ns]
			name, ok := model.NamespaceRevision(labels)
			if !ok {
				continue
			}
			rev, via := snap.ResolveRevision(c.ID, name)
			why := served(snap, c.ID, rev)
			if why == "" {
				continue
			}
			label := model.LabelRev + "=" + name
			if labels[model.LabelInjection] == "enabled" {
				label = model.LabelInjection + "=enabled (the default revision)"
			}
			ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemNamespaceRevision, Cluster: c.ID,
				Objects: []model.ObjectRef{{Cluster: c.ID, Kind: "Namespace", Name: ns}},
				Sentence: fmt.Sprintf("namespace %s in %s is labelled %s, but %s%s: new pods there get no sidecar, or are refused if the revision's injection webhook is still installed — label the namespace for a running revision (istio.io/rev=REV) and restart its workloads",
					ns, c.ID, label, strings.Replace(why, "revision "+rev, "revision "+revisionName(name, rev, via), 1), tagsUnknown(c))})
		}
	}
	return ps
}

// proxyRevisionProblems: pods whose sidecar was injected by a revision
// (their istio.io/rev label, written by the injector) that no istiod
// serves: they reach istiod-REV, which has no endpoint, and run on their
// last config. And, as information, pods whose namespace now asks for
// another revision: they move only when restarted.
func proxyRevisionProblems(snap *model.Snapshot) []model.Problem {
	var ps []model.Problem
	for _, p := range snap.Proxies {
		id := p.Injected
		if id == nil || id.Revision == "" || (id.Kind != model.ProxySidecar && id.Kind != model.ProxyGateway) {
			continue
		}
		if _, known := snap.RevisionServers(p.Cluster); !known {
			continue
		}
		where := p.Namespace + "/" + p.Name
		pod := []model.ObjectRef{{Cluster: p.Cluster, Kind: "Pod", Namespace: p.Namespace, Name: p.Name}}
		rev, via := snap.ResolveRevision(p.Cluster, id.Revision)
		if why := served(snap, p.Cluster, rev); why != "" {
			ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemProxyRevision, Cluster: p.Cluster, Objects: pod,
				Sentence: fmt.Sprintf("%s %s in %s was injected by revision %s, but %s: its proxy reaches no istiod and runs on its last config — restart it into a running revision", p.Kind, where, p.Cluster, revisionName(id.Revision, rev, via), why),
				Group: &model.ProblemGroup{Key: "proxy-revision|" + p.Cluster + "|" + rev, Subject: where,
					Format: fmt.Sprintf("{n} proxies in %s were injected by revision %s ({examples}), but %s: they reach no istiod and run on their last config — restart them into a running revision", p.Cluster, revisionName(id.Revision, rev, via), why)}})
			continue
		}
		nsName, ok := model.NamespaceRevision(snap.AmbientFor(p.Cluster).NamespaceLabels(p.Namespace))
		if !ok {
			continue
		}
		nsRev, _ := snap.ResolveRevision(p.Cluster, nsName)
		if nsRev == rev || served(snap, p.Cluster, nsRev) != "" {
			continue
		}
		ps = append(ps, model.Problem{Severity: model.SeverityInfo, Kind: model.ProblemProxyRevisionOutdated, Cluster: p.Cluster, Objects: pod,
			Sentence: fmt.Sprintf("%s %s in %s runs the sidecar of revision %s, but its namespace now asks for revision %s: it moves (and gets that istiod's endpoints) only when restarted", p.Kind, where, p.Cluster, rev, nsRev),
			Group: &model.ProblemGroup{Key: "proxy-revision-outdated|" + p.Cluster + "|" + p.Namespace + "|" + rev + "|" + nsRev, Subject: p.Name,
				Format: fmt.Sprintf("{n} pods in namespace %s of %s run the sidecar of revision %s, but the namespace now asks for revision %s ({examples}): they move only when restarted", p.Namespace, p.Cluster, rev, nsRev)}})
	}
	return ps
}

// revisionConfigProblems: two revisions of one primary whose ConfigMaps
// differ in what decides endpoints. A proxy moving from one to the other
// (a namespace relabelled, a pod restarted) then gets other endpoints.
func revisionConfigProblems(snap *model.Snapshot) []model.Problem {
	var ps []model.Problem
	for i := range snap.Clusters {
		c := &snap.Clusters[i]
		if c.State == model.StateRemoved || len(c.RevisionConfigs) < 2 {
			continue
		}
		base := c.RevisionConfigs[0]
		for _, other := range c.RevisionConfigs[1:] {
			diffs := revisionConfigDiffs(base, other)
			if len(diffs) == 0 {
				continue
			}
			ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemRevisionConfigDiffers, Cluster: c.ID,
				Sentence: fmt.Sprintf("revisions %s and %s of %s read different %s (%s, %s)%s: a proxy moving between them gets different endpoints — make the ConfigMaps agree before moving namespaces (meshscope explain --revision REV predicts each)",
					base.Revision, other.Revision, c.ID, strings.Join(diffs, ", "), configMapText(base), configMapText(other), clusterLocalDiffs(snap, base, other))})
		}
	}
	return ps
}

func configMapText(rc model.RevisionConfig) string {
	if !rc.Found {
		return "no ConfigMap " + rc.ConfigMap + ": istiod's defaults"
	}
	return "ConfigMap " + rc.ConfigMap
}

// revisionConfigDiffs names the fields that differ (nil and empty alike).
func revisionConfigDiffs(a, b model.RevisionConfig) []string {
	var out []string
	networks := func(rc model.RevisionConfig) map[string]model.MeshNetwork {
		if rc.MeshNetworks == nil || len(rc.MeshNetworks.Networks) == 0 {
			return nil
		}
		return rc.MeshNetworks.Networks
	}
	if !reflect.DeepEqual(networks(a), networks(b)) {
		out = append(out, "meshNetworks")
	}
	if (len(a.ServiceSettings) > 0 || len(b.ServiceSettings) > 0) && !reflect.DeepEqual(a.ServiceSettings, b.ServiceSettings) {
		out = append(out, "serviceSettings")
	}
	if (len(a.DiscoverySelectors) > 0 || len(b.DiscoverySelectors) > 0) && !reflect.DeepEqual(a.DiscoverySelectors, b.DiscoverySelectors) {
		out = append(out, "discoverySelectors")
	}
	return out
}

// otherRevisionConfigProblems says, as information, which Istio config
// the predictions leave out because it is labelled for another revision:
// that revision's proxies are treated otherwise.
func otherRevisionConfigProblems(snap *model.Snapshot) []model.Problem {
	var ps []model.Problem
	for i := range snap.Clusters {
		c := &snap.Clusters[i]
		revs := make([]string, 0, len(c.OtherRevisionsConfig))
		for r := range c.OtherRevisionsConfig {
			revs = append(revs, r)
		}
		sort.Strings(revs)
		for _, r := range revs {
			objs := c.OtherRevisionsConfig[r]
			shown := objs
			if len(shown) > 3 {
				shown = append(shown[:3:3], fmt.Sprintf("%d more", len(objs)-3))
			}
			see := "run with --revision " + r + " to see what that revision's proxies get"
			if cp := model.JoinControlPlane(c.ID, r); snap.RevisionPlane(cp) != nil {
				see = "control plane " + cp + " (that revision's istiod) is predicted with them"
			}
			ps = append(ps, model.Problem{Severity: model.SeverityInfo, Kind: model.ProblemRevisionLabelledConfig, Cluster: c.ID,
				Sentence: fmt.Sprintf("%d Istio config object(s) in %s are labelled istio.io/rev=%s (%s): only revision %s's istiod reads them, and meshscope predicts %s for revision %s, which ignores them as its istiod does — %s",
					len(objs), c.ID, r, strings.Join(shown, ", "), r, c.ID, c.PredictedRevision, see)})
		}
	}
	return ps
}

// revisionNote says, for a primary that runs several revisions, which one a
// prediction is for: each reads its own ConfigMap and its own revision's
// Istio config, and so may send the same proxy other endpoints.
func revisionNote(snap *model.Snapshot, cp string) string {
	cluster, _ := model.SplitControlPlane(cp)
	c := snap.ClusterByID(cluster)
	if c == nil || c.PredictedRevision == "" {
		return ""
	}
	revs := c.Revisions()
	if len(revs) < 2 {
		return ""
	}
	rev := snap.ControlPlaneRevision(cp)
	var others []string
	for _, r := range revs {
		switch {
		case r == rev:
		case r == c.PredictedRevisionOf():
			others = append(others, cluster)
		default:
			others = append(others, model.JoinControlPlane(cluster, r))
		}
	}
	return fmt.Sprintf("istiod %s runs revisions %s: this prediction is for revision %s (ConfigMap %s, Istio config not labelled for another revision), and the address asked must be that revision's istiod — the other is control plane %s (VIEWPOINT@%s)",
		cluster, strings.Join(revs, ", "), rev, model.MeshConfigMapName(rev), strings.Join(others, ", "), others[0])
}

// clusterLocalDiffs names the services of several clusters that one
// revision's serviceSettings make cluster-local and the other's do not
// (the first three): their proxies lose, or gain, every other cluster's
// endpoints when they move.
func clusterLocalDiffs(snap *model.Snapshot, a, b model.RevisionConfig) string {
	hosts := func(rc model.RevisionConfig) model.ClusterLocalHosts {
		mc := model.DefaultMeshConfig()
		mc.ServiceSettings = rc.ServiceSettings
		return mc.ClusterLocalHosts()
	}
	ha, hb := hosts(a), hosts(b)
	var onlyA, onlyB []string
	for _, svc := range snap.Services {
		if len(svc.Clusters) < 2 {
			continue
		}
		la, lb := ha.IsClusterLocal(svc.Hostname), hb.IsClusterLocal(svc.Hostname)
		switch {
		case la && !lb:
			onlyA = append(onlyA, model.ShortHost(svc.Hostname))
		case lb && !la:
			onlyB = append(onlyB, model.ShortHost(svc.Hostname))
		}
	}
	list := func(l []string) string {
		if len(l) > 3 {
			return strings.Join(l[:3], ", ") + fmt.Sprintf(" and %d more", len(l)-3)
		}
		return strings.Join(l, ", ")
	}
	var parts []string
	if len(onlyA) > 0 {
		parts = append(parts, "cluster-local for "+a.Revision+" only: "+list(onlyA))
	}
	if len(onlyB) > 0 {
		parts = append(parts, "cluster-local for "+b.Revision+" only: "+list(onlyB))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, "; ")
}
