package explain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/meshscope/meshscope/model"
)

// Against istiod's own view: istiod exposes no version of the secrets it
// runs (/debug/clusterz has a cluster's ID, its secret's name and its sync
// status, pkg/cluster/debug.go DebugInfo), so what it runs is told from
// what it shows — a cluster not synced although the secret's current
// version works from here — and from when the secret was written against
// when istiod's pod started (istiod reads every secret at start; a later
// write it must reload, which istiod versions in secretBugs get wrong).

// timeText is a time for sentences.
func timeText(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// startedBefore is an istiod pod of cluster that started before t (nil:
// none known).
func startedBefore(snap *model.Snapshot, cluster string, t time.Time) *model.IstiodPod {
	c := snap.ClusterByID(cluster)
	if c == nil || t.IsZero() {
		return nil
	}
	for i := range c.Istiods {
		if p := &c.Istiods[i]; !p.StartedAt.IsZero() && p.StartedAt.Before(t) {
			return p
		}
	}
	return nil
}

// staleSecretProblems: istiod shows a cluster not synced (or does not
// list it) although the current version of its remote secret — written
// after istiod started — works from here: istiod most likely still runs an
// older version.
func staleSecretProblems(snap *model.Snapshot, views []model.IstiodView, now time.Time) []model.Problem {
	var ps []model.Problem
	for _, s := range meshSecrets(snap) {
		v := holderView(views, s.Ref.In)
		if v == nil || !s.Test.Works() || s.Credential.Invalid != "" || len(refusedProblems(snap, s)) > 0 {
			continue
		}
		row := v.ClusterFromSecret(s.Ref.Key, s.Ref.Name)
		if syncingStill(row, s, now) || row == nil && slices.ContainsFunc(v.Clusters, func(c model.IstiodCluster) bool { return c.ID == s.Ref.Key }) {
			continue // synced or on its way, or the ID is another secret's (duplicate-id)
		}
		pod := startedBefore(snap, s.Ref.In, s.WrittenAt)
		if pod == nil {
			continue // istiod started after the write: it read this version
		}
		shows := fmt.Sprintf("does not list %s", s.Ref.Key)
		if row != nil {
			shows = fmt.Sprintf("shows %s %q", s.Ref.Key, row.SyncStatus)
		}
		ps = append(ps, model.Problem{Severity: model.SeverityError, Kind: model.ProblemRemoteSecretStale, Cluster: s.cluster, Objects: s.objects(),
			Sentence: fmt.Sprintf("istiod %s's /debug/clusterz %s, yet the current version of %s — written %s, after istiod pod %s started (%s) — works from here (server reached, CA verified, reader role held): istiod most likely still runs an older version of it (istio#58047, istio#60612) — restart istiod: kubectl rollout restart deployment/istiod -n %s --context=CONTEXT-OF-%s (if it stays, istiod's network cannot reach %s)",
				s.Ref.In, shows, s.what(), timeText(s.WrittenAt), pod.Name, timeText(pod.StartedAt), orText(snap.SystemNamespace, "istio-system"), s.Ref.In, s.Credential.Server)})
	}
	return ps
}

// secretBugProblems: an istiod whose version has a known remote-secret
// bug (secretBugs) that a secret written after the istiod pod started
// runs into.
func secretBugProblems(snap *model.Snapshot) []model.Problem {
	secrets := meshSecrets(snap)
	var ps []model.Problem
	for _, c := range snap.Clusters {
		seen := map[string]bool{}
		for _, pod := range c.Istiods {
			if pod.Version == "" || pod.StartedAt.IsZero() {
				continue
			}
			var after []string
			for _, s := range secrets {
				if s.Ref.In == c.ID && s.WrittenAt.After(pod.StartedAt) {
					after = append(after, fmt.Sprintf("%s (written %s)", s.what(), timeText(s.WrittenAt)))
				}
			}
			if len(after) == 0 {
				continue
			}
			for _, b := range secretBugs {
				key := fmt.Sprint(b.issue, pod.Version)
				if !b.has(pod.Version) || seen[key] {
					continue
				}
				seen[key] = true
				ps = append(ps, model.Problem{Severity: model.SeverityWarning, Kind: model.ProblemIstiodSecretBug, Cluster: c.ID,
					Objects: []model.ObjectRef{{Cluster: c.ID, Kind: "Pod", Namespace: orText(snap.SystemNamespace, "istio-system"), Name: pod.Name}},
					Sentence: fmt.Sprintf("istiod %s (pod %s) runs %s, which has istio#%d: %s (%s); %s changed after the pod started (%s), so istiod may not run what the secret now says — restart istiod, and upgrade past %s",
						c.ID, pod.Name, pod.Version, b.issue, b.what, b.fixed, strings.Join(after, ", "), timeText(pod.StartedAt), b.last)})
			}
		}
	}
	return ps
}
