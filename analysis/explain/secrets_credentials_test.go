package explain

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/model"
)

// secretSeed is the multi-primary seed with its two remote secrets
// described and tested as healthy: bound tokens of a year, the lab's
// servers, the reader role held.
func secretSeed() *model.Snapshot {
	s := mpSeed()
	for i, id := range []string{"cluster1", "cluster2"} {
		other := []string{"cluster2", "cluster1"}[i]
		s.Clusters[i].Istiods[0].Version = "1.31.0"
		s.Clusters[i].Istiods[0].StartedAt = testNow.Add(-48 * time.Hour)
		s.RemoteSecrets = append(s.RemoteSecrets, model.RemoteSecret{
			Ref: model.SourceRef{Kind: model.SourceSecret, Name: "istio-system/istio-remote-secret-" + id, In: other, Key: id},
			Credential: model.Credential{Auth: model.AuthBoundToken, Expires: testNow.AddDate(1, 0, 0), Server: s.Clusters[i].Server, CA: "data",
				Subject: "system:serviceaccount:istio-system:istio-reader-service-account"},
			WrittenAt: testNow.Add(-72 * time.Hour),
			Test:      &model.CredentialTest{At: testNow},
		})
	}
	return s
}

// syncedViews are both istiods' clusterz as the lab shows them.
func syncedViews() []model.IstiodView {
	return []model.IstiodView{
		{ControlPlane: "cluster1", Clusters: []model.IstiodCluster{{ID: "cluster1", SyncStatus: "synced"}, {ID: "cluster2", SecretName: "istio-system/istio-remote-secret-cluster2", SyncStatus: "synced"}}},
		{ControlPlane: "cluster2", Clusters: []model.IstiodCluster{{ID: "cluster2", SyncStatus: "synced"}, {ID: "cluster1", SecretName: "istio-system/istio-remote-secret-cluster1", SyncStatus: "synced"}}},
	}
}

// secretKinds are the kinds these checks raise.
var secretKinds = []model.ProblemKind{model.ProblemRemoteSecretRefused, model.ProblemRemoteSecretExpiry, model.ProblemRemoteSecretTLS,
	model.ProblemRemoteSecretUnauthorized, model.ProblemRemoteSecretUnreachable, model.ProblemRemoteSecretRBAC,
	model.ProblemRemoteSecretServer, model.ProblemRemoteSecretStale, model.ProblemIstiodSecretBug}

func secretProblemsOf(ps []model.Problem) []model.Problem {
	var out []model.Problem
	for _, p := range ps {
		if slices.Contains(secretKinds, p.Kind) {
			out = append(out, p)
		}
	}
	return out
}

// TestSecretCredentialChecks: each thing a remote secret's description
// and test can say, alone in the healthy seed, and the one problem it
// makes (the secret for cluster2, held in cluster1).
func TestSecretCredentialChecks(t *testing.T) {
	rs := func(s *model.Snapshot) *model.RemoteSecret { return &s.RemoteSecrets[1] } // for cluster2, in cluster1
	for _, tc := range []struct {
		name  string
		edit  func(s *model.Snapshot)
		views []model.IstiodView // nil: syncedViews
		kind  model.ProblemKind  // "": none of secretKinds
		sev   model.Severity
		texts []string
	}{
		{name: "healthy"},
		{name: "expires in 2 days", edit: func(s *model.Snapshot) { rs(s).Credential.Expires = testNow.Add(50 * time.Hour) },
			kind: model.ProblemRemoteSecretExpiry, sev: model.SeverityWarning,
			texts: []string{"the bound token of remote secret istio-system/istio-remote-secret-cluster2 in cluster1 (for cluster2) expires on 2026-11-24 05:00 UTC (in 2d)", "istioctl create-remote-secret"}},
		{name: "expires in 8 days: nothing yet", edit: func(s *model.Snapshot) { rs(s).Credential.Expires = testNow.Add(8 * 24 * time.Hour) }},
		{name: "expired, and the server refuses it: one problem", edit: func(s *model.Snapshot) {
			rs(s).Credential.Expires = testNow.Add(-time.Hour)
			rs(s).Test.Failed, rs(s).Test.Reason = model.ErrUnauthorized, "unauthorized: the API server rejected the credentials"
		}, kind: model.ProblemRemoteSecretExpiry, sev: model.SeverityError, texts: []string{"expired on 2026-11-22 02:00 UTC", "istiod cluster1 can no longer read cluster2"}},
		{name: "client certificate expiring", edit: func(s *model.Snapshot) {
			rs(s).Credential.Auth, rs(s).Credential.Expires = model.AuthClientCert, testNow.Add(time.Hour)
		}, kind: model.ProblemRemoteSecretExpiry, sev: model.SeverityWarning, texts: []string{"the client certificate of remote secret", "(in 60m)"}},
		{name: "exec plugin istiod refuses", edit: func(s *model.Snapshot) {
			rs(s).Credential = model.Credential{Auth: model.AuthExec, Plugin: "aws", Server: "https://127.0.0.1:6444", NeedsOptions: []string{"exec"}}
			rs(s).Test = &model.CredentialTest{At: testNow, Skipped: "refused exec plugin"}
		}, kind: model.ProblemRemoteSecretRefused, sev: model.SeverityError,
			texts: []string{"istiod cluster1 refuses the kubeconfig of remote secret istio-system/istio-remote-secret-cluster2 in cluster1 (for cluster2): it uses an exec plugin (aws)", "PILOT_INSECURE_MULTICLUSTER_KUBECONFIG_OPTIONS=exec", "istio#61773"}},
		{name: "exec plugin istiod allows", edit: func(s *model.Snapshot) {
			rs(s).Credential = model.Credential{Auth: model.AuthExec, Plugin: "aws", Server: "https://127.0.0.1:6444", NeedsOptions: []string{"exec"}}
			rs(s).Test = &model.CredentialTest{At: testNow, Skipped: "refused exec plugin"}
			s.Clusters[0].Istiods[0].KubeconfigOptions = "gcp, exec"
		}},
		{name: "a kubeconfig that does not load", edit: func(s *model.Snapshot) {
			rs(s).Credential = model.Credential{Auth: model.AuthNone, Invalid: "its current-context does not exist"}
		}, kind: model.ProblemRemoteSecretRefused, sev: model.SeverityError, texts: []string{"istiod cluster1 cannot load the kubeconfig", "its current-context does not exist", "never registers cluster2"}},
		{name: "CA that does not verify", edit: func(s *model.Snapshot) {
			rs(s).Test.Failed, rs(s).Test.Reason = model.ErrTLS, "TLS/CA mismatch: the server's certificate is not signed by the kubeconfig's certificate authority"
		}, kind: model.ProblemRemoteSecretTLS, sev: model.SeverityError, texts: []string{"the CA of remote secret istio-system/istio-remote-secret-cluster2 in cluster1 (for cluster2) does not verify its API server https://127.0.0.1:6444", "--tls-server-name"}},
		{name: "insecure", edit: func(s *model.Snapshot) { rs(s).Credential.Insecure = true },
			kind: model.ProblemRemoteSecretTLS, sev: model.SeverityWarning, texts: []string{"skips TLS verification"}},
		{name: "revoked", edit: func(s *model.Snapshot) { rs(s).Test.Failed, rs(s).Test.Reason = model.ErrUnauthorized, "unauthorized" },
			kind: model.ProblemRemoteSecretUnauthorized, sev: model.SeverityError, texts: []string{"the API server https://127.0.0.1:6444 refuses the credential"}},
		{name: "unreachable from here", edit: func(s *model.Snapshot) {
			rs(s).Test.Failed, rs(s).Test.Reason = model.ErrUnreachable, "unreachable: connection refused"
		},
			kind: model.ProblemRemoteSecretUnreachable, sev: model.SeverityWarning, texts: []string{"meshscope cannot try the credential", "connection refused"}},
		{name: "no nodes, no gateways", edit: func(s *model.Snapshot) {
			rs(s).Test.Missing = []model.Permission{{Resource: "nodes", Verb: "list"}, {Resource: "nodes", Verb: "watch"},
				{Group: "gateway.networking.k8s.io", Resource: "gateways", Verb: "get"}, {Group: "gateway.networking.k8s.io", Resource: "gateways", Verb: "list"}}
		}, kind: model.ProblemRemoteSecretRBAC, sev: model.SeverityError,
			texts: []string{"service account istio-system/istio-reader-service-account may not: nodes (list, watch); gateways.gateway.networking.k8s.io (get, list)", "never syncs cluster2"}},
		{name: "no gateways only", edit: func(s *model.Snapshot) {
			rs(s).Test.Missing = []model.Permission{{Group: "gateway.networking.k8s.io", Resource: "gateways", Verb: "watch"}}
		}, kind: model.ProblemRemoteSecretRBAC, sev: model.SeverityWarning, texts: []string{"gateways.gateway.networking.k8s.io (watch)", "reads cluster2 without them"}},
		{name: "loopback server istiod syncs (the lab's)"},
		{name: "loopback server istiod does not sync", views: []model.IstiodView{
			{ControlPlane: "cluster1", Clusters: []model.IstiodCluster{{ID: "cluster1", SyncStatus: "synced"}, {ID: "cluster2", SecretName: "istio-system/istio-remote-secret-cluster2", SyncStatus: "timeout"}}},
			syncedViews()[1]}, kind: model.ProblemRemoteSecretServer, sev: model.SeverityError,
			texts: []string{"names the API server https://127.0.0.1:6444, a loopback address (127.0.0.1)", `istiod cluster1's /debug/clusterz shows cluster2 "timeout"`, "kind get kubeconfig --internal"}},
		{name: "loopback server istiod still syncs, written 10s ago: not yet", edit: func(s *model.Snapshot) { rs(s).WrittenAt = testNow.Add(-10 * time.Second) },
			views: []model.IstiodView{
				{ControlPlane: "cluster1", Clusters: []model.IstiodCluster{{ID: "cluster1", SyncStatus: "synced"}, {ID: "cluster2", SecretName: "istio-system/istio-remote-secret-cluster2", SyncStatus: "syncing"}}},
				syncedViews()[1]}},
		{name: "loopback server istiod still syncs, written 3 days ago", views: []model.IstiodView{
			{ControlPlane: "cluster1", Clusters: []model.IstiodCluster{{ID: "cluster1", SyncStatus: "synced"}, {ID: "cluster2", SecretName: "istio-system/istio-remote-secret-cluster2", SyncStatus: "syncing"}}},
			syncedViews()[1]}, kind: model.ProblemRemoteSecretServer, sev: model.SeverityError, texts: []string{`shows cluster2 "syncing"`}},
		{name: "loopback server istiod does not sync, but the token expired: the expiry says it", edit: func(s *model.Snapshot) {
			rs(s).Credential.Expires = testNow.Add(-time.Hour)
			rs(s).Test.Failed, rs(s).Test.Reason = model.ErrUnauthorized, "unauthorized"
		}, views: []model.IstiodView{
			{ControlPlane: "cluster1", Clusters: []model.IstiodCluster{{ID: "cluster1", SyncStatus: "synced"}, {ID: "cluster2", SecretName: "istio-system/istio-remote-secret-cluster2", SyncStatus: "timeout"}}},
			syncedViews()[1]}, kind: model.ProblemRemoteSecretExpiry, sev: model.SeverityError, texts: []string{"expired on"}},
		{name: "istiod shows it timed out although the secret written after its start works", edit: func(s *model.Snapshot) {
			rs(s).Credential.Server = "https://10.0.0.9:6443"
			rs(s).WrittenAt = testNow.Add(-time.Hour)
		}, views: []model.IstiodView{
			{ControlPlane: "cluster1", Clusters: []model.IstiodCluster{{ID: "cluster1", SyncStatus: "synced"}, {ID: "cluster2", SecretName: "istio-system/istio-remote-secret-cluster2", SyncStatus: "timeout"}}},
			syncedViews()[1]}, kind: model.ProblemRemoteSecretStale, sev: model.SeverityError,
			texts: []string{`istiod cluster1's /debug/clusterz shows cluster2 "timeout", yet the current version of remote secret`, "written 2026-11-22 02:00:00 UTC, after istiod pod istiod-cluster1 started (2026-11-20 03:00:00 UTC)", "istio#60612", "kubectl rollout restart deployment/istiod"}},
		{name: "istiod timed out, the secret predates it: not stale", edit: func(s *model.Snapshot) { rs(s).Credential.Server = "https://10.0.0.9:6443" },
			views: []model.IstiodView{
				{ControlPlane: "cluster1", Clusters: []model.IstiodCluster{{ID: "cluster1", SyncStatus: "synced"}, {ID: "cluster2", SecretName: "istio-system/istio-remote-secret-cluster2", SyncStatus: "timeout"}}},
				syncedViews()[1]}},
		{name: "istiod 1.30.3, a secret rotated after its start", edit: func(s *model.Snapshot) {
			s.Clusters[0].Istiods[0].Version = "1.30.3"
			rs(s).WrittenAt = testNow.Add(-time.Hour)
		}, kind: model.ProblemIstiodSecretBug, sev: model.SeverityWarning,
			texts: []string{"istiod cluster1 (pod istiod-cluster1) runs 1.30.3, which has istio#61043", "the first patch releases with it are not confirmed", "remote secret istio-system/istio-remote-secret-cluster2 in cluster1 (for cluster2) (written 2026-11-22 02:00:00 UTC) changed after the pod started"}},
		{name: "istiod 1.30.2, no secret written since its start", edit: func(s *model.Snapshot) { s.Clusters[0].Istiods[0].Version = "1.30.2" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := secretSeed()
			if tc.edit != nil {
				tc.edit(s)
			}
			views := tc.views
			if views == nil {
				views = syncedViews()
			}
			d := Run(s, Inputs{Now: testNow, Istiod: views})
			checkKinds(t, d.Problems)
			ps := secretProblemsOf(d.Problems)
			if tc.kind == "" {
				if len(ps) > 0 {
					t.Fatalf("want none, got %+v", ps)
				}
				return
			}
			if len(ps) != 1 {
				t.Fatalf("want one %s, got %+v", tc.kind, ps)
			}
			p := want(t, ps, string(tc.kind), tc.sev, tc.texts...)
			if p.Cluster != "cluster2" && tc.kind != model.ProblemIstiodSecretBug {
				t.Errorf("problem of cluster %q, want cluster2", p.Cluster)
			}
		})
	}
}

// TestSecretBugTable: every entry cites an issue, says what and what is
// known of its fix, and its range reads; versions in and out.
func TestSecretBugTable(t *testing.T) {
	for _, b := range secretBugs {
		_, ok1 := patchVersion(b.first)
		_, ok2 := patchVersion(b.last)
		if b.issue == 0 || b.what == "" || b.fixed == "" || !ok1 || !ok2 || !b.has(b.first) || !b.has(b.last) {
			t.Errorf("bad entry %+v", b)
		}
	}
	has := func(v string) []int {
		var out []int
		for _, b := range secretBugs {
			if b.has(v) {
				out = append(out, b.issue)
			}
		}
		return out
	}
	for v, w := range map[string][]int{
		"1.30.2": {60612, 61043}, "1.30.3": {61043}, "1.30.4": nil, "1.31.0-dev": nil, "v1.29.4-distroless": {60520},
		"1.29.5": nil, "1.27.1": {58047}, "latest": nil, "1.30": nil,
	} {
		if got := has(v); !slices.Equal(got, w) {
			t.Errorf("%s: %v, want %v", v, got, w)
		}
	}
}

// TestServerForm: the addresses istiod's cluster cannot reach by their
// form, each said, and ordinary ones not.
func TestServerForm(t *testing.T) {
	for server, want := range map[string]string{
		"https://127.0.0.1:6444":                         "a loopback address (127.0.0.1)",
		"https://[::1]:6443":                             "a loopback address (::1)",
		"https://localhost:6443":                         "localhost",
		"https://0.0.0.0:6443":                           "the unspecified address 0.0.0.0",
		"https://kubernetes.default.svc":                 "the in-cluster name",
		"https://" + model.FQDN("kubernetes", "default"): "the in-cluster name",
		"https://control-plane.minikube.internal:8443":   "a minikube name",
		"https://host.docker.internal:6443":              "Docker Desktop",
		"https://kind-cluster2-control-plane:6443":       "",
		"https://10.0.0.9:6443":                          "",
		"https://api.example.com":                        "",
		"::not a url":                                    "",
	} {
		got := serverForm(server)
		if want == "" && got != "" || want != "" && !strings.HasPrefix(got, want) {
			t.Errorf("%s: %q, want it to start with %q", server, got, want)
		}
	}
}

// TestServerCheckNeedsIstiodsView: without istiod's view the server check
// does not run (the lab's loopback secrets are fine from its host-run
// istiod), and says so.
func TestServerCheckNeedsIstiodsView(t *testing.T) {
	d := Run(secretSeed(), Inputs{Now: testNow})
	if ps := find(d.Problems, string(model.ProblemRemoteSecretServer)); len(ps) > 0 {
		t.Fatalf("%+v", ps)
	}
	if !slices.ContainsFunc(d.NotRun, func(n NotRun) bool { return n.Check == "remote-secret-servers" }) {
		t.Errorf("not run: %+v", d.NotRun)
	}
}
