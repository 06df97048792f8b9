package e2e

// Remote secrets tried, against the real lab: credentials made by the real
// API servers (TokenRequest, RBAC), a token signed with a cluster's own
// service-account key whose exp is past (the API server's least
// TokenRequest lifetime is 10 minutes), the real istiod's clusterz. Every
// meshscope run's stdout, stderr and log is searched for the tokens it was
// given; the API servers' audit logs show that trying a credential wrote
// nothing.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/model"
)

// secretRun is one meshscope run: what it printed and logged.
type secretRun struct {
	stdout, stderr, log string
	code                int
}

// runSecrets runs meshscope against the lab with a log file, and fails
// the test when any of secrets appears in its stdout, stderr or log.
func runSecrets(t *testing.T, secrets []string, args ...string) secretRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	logFile := filepath.Join(t.TempDir(), "meshscope.log")
	args = append(args, "--kubeconfig", theLab.Kubeconfig, "--log-file", logFile)
	cmd := exec.CommandContext(ctx, meshscopeBinary(t), args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := secretRun{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("meshscope %s: %v\n%s", strings.Join(args, " "), err, r.stderr)
	}
	if b, err := os.ReadFile(logFile); err == nil {
		r.log = string(b)
	}
	for _, s := range secrets {
		for what, text := range map[string]string{"stdout": r.stdout, "stderr": r.stderr, "log": r.log} {
			// A JWT's parts too: its signature alone is a secret.
			for _, part := range append([]string{s}, strings.Split(s, ".")...) {
				if len(part) >= 16 && strings.Contains(text, part) {
					t.Errorf("meshscope %s: its %s shows a secret it was given (%.8s…)", strings.Join(args, " "), what, part)
				}
			}
		}
	}
	return r
}

// remoteSecretFile writes a remote secret for cluster id at server with
// token (and the given CA, else the cluster's) as istioctl
// create-remote-secret prints it, and returns its path.
func remoteSecretFile(t *testing.T, id, server, token string, ca []byte) string {
	t.Helper()
	kc, err := theLab.RemoteKubeconfig(id, token)
	if err != nil {
		t.Fatal(err)
	}
	if ca != nil || server != "" {
		var cfg map[string]any
		if err := yaml.Unmarshal(kc, &cfg); err != nil {
			t.Fatal(err)
		}
		cl := cfg["clusters"].([]any)[0].(map[string]any)["cluster"].(map[string]any)
		if ca != nil {
			cl["certificate-authority-data"] = ca
		}
		if server != "" {
			cl["server"] = server
		}
		if kc, err = yaml.Marshal(cfg); err != nil {
			t.Fatal(err)
		}
	}
	sec := map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata": map[string]any{"name": "istio-remote-secret-" + id, "namespace": lab.SystemNamespace,
			"labels": map[string]string{"istio/multiCluster": "true"}, "annotations": map[string]string{"networking.istio.io/cluster": id}},
		"stringData": map[string]string{id: string(kc)},
	}
	b, err := yaml.Marshal(sec)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "remote-secret-"+id+".yaml")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// preflight is doctor --remote-secret's JSON.
type preflight struct {
	explain.Preflight
	Incomplete []model.Incomplete `json:"incomplete"`
}

func runPreflight(t *testing.T, secrets []string, file string) (preflight, secretRun) {
	t.Helper()
	r := runSecrets(t, secrets, "doctor", "--context", "cluster1", "--remote-secret", file, "-o", "json")
	var pf preflight
	if err := json.Unmarshal([]byte(r.stdout), &pf); err != nil {
		t.Fatalf("doctor --remote-secret -o json (exit %d): %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	return pf, r
}

// readerRole is istio's reader role for the lab's test accounts, without
// the resources in leave.
func readerRole(leave ...string) []rbacv1.PolicyRule {
	ro := []string{"get", "list", "watch"}
	core := []string{"endpoints", "pods", "services", "nodes", "replicationcontrollers", "namespaces", "secrets", "configmaps"}
	var keep []string
	for _, r := range core {
		if !strings.Contains(strings.Join(leave, ","), r) {
			keep = append(keep, r)
		}
	}
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: keep, Verbs: ro},
		{APIGroups: []string{"config.istio.io", "security.istio.io", "networking.istio.io", "authentication.istio.io", "rbac.istio.io", "telemetry.istio.io", "extensions.istio.io"}, Resources: []string{"*"}, Verbs: ro},
		{APIGroups: []string{"networking.x-k8s.io"}, Resources: []string{"gateways"}, Verbs: ro},
		{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: ro},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: ro},
		{APIGroups: []string{"multicluster.x-k8s.io"}, Resources: []string{"serviceexports", "serviceimports"}, Verbs: ro},
		{APIGroups: []string{"apps"}, Resources: []string{"replicasets"}, Verbs: ro},
	}
	if !strings.Contains(strings.Join(leave, ","), "gateways.gateway.networking.k8s.io") {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{"gateway.networking.k8s.io"}, Resources: []string{"gateways"}, Verbs: ro})
	}
	return rules
}

// TestRemoteSecretPreflight: doctor --remote-secret on files made from the
// lab's real credentials — a good one (exit 0), a token of an hour (a
// warning with its date, exit 0), the same account's token whose exp is
// past (an error, and the real API server refuses it: exit 1), an account
// without nodes and gateways (exactly those listed, exit 1), a CA that does
// not verify the server (exit 1), a file that is no Secret (exit 2) — and
// the test accounts' requests in cluster2's audit log are reviews and
// reads only. The same expired secret through what-if: cluster2 fails.
func TestRemoteSecretPreflight(t *testing.T) {
	ctx := context.Background()
	c2 := theLab.Cluster("cluster2")
	defer func() {
		for _, n := range []string{"secrets-reader", "secrets-limited"} {
			_ = theLab.DeleteLimitedUser(ctx, "cluster2", n)
		}
	}()
	year, err := theLab.IssueLimitedTokenFor(ctx, "cluster2", "secrets-reader", readerRole(), 365*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	hour, err := theLab.IssueLimitedTokenFor(ctx, "cluster2", "secrets-reader", readerRole(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	expired, err := theLab.MintToken(ctx, "cluster2", "meshscope-lab-secrets-reader", time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	limited, err := theLab.IssueLimitedTokenFor(ctx, "cluster2", "secrets-limited", readerRole("nodes", "gateways.gateway.networking.k8s.io"), 365*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{year, hour, expired, limited}
	check := func(name, file string, code int, kind string, sev model.Severity, texts ...string) preflight {
		t.Helper()
		pf, r := runPreflight(t, secrets, file)
		if r.code != code || len(pf.Incomplete) > 0 {
			t.Errorf("%s: exit %d, want %d; incomplete %+v\n%+v", name, r.code, code, pf.Incomplete, pf.Problems)
		}
		if kind == "" {
			if len(pf.Problems) != 0 {
				t.Errorf("%s: problems %+v", name, pf.Problems)
			}
		} else if _, why := problemOf(pf.Problems, kind, sev, texts...); why != "" {
			t.Errorf("%s: %s", name, why)
		}
		if len(pf.Secrets) != 1 || pf.Secrets[0].Ref.In != "cluster1" || pf.Secrets[0].Ref.Key != "cluster2" {
			t.Errorf("%s: secrets %+v", name, pf.Secrets)
		}
		return pf
	}

	pf := check("good", remoteSecretFile(t, "cluster2", "", year, nil), 0, "", "")
	if s := pf.Secrets[0]; s.Credential.Auth != model.AuthBoundToken || !s.Test.Works() || s.Credential.Subject != lab.TestAccount("secrets-reader") {
		t.Errorf("good: %+v %+v", s.Credential, s.Test)
	}
	pf = check("an hour left", remoteSecretFile(t, "cluster2", "", hour, nil), 0, "remote-secret-expiry", model.SeverityWarning,
		"the bound token of remote secret istio-system/istio-remote-secret-cluster2 in cluster1 (for cluster2) expires on", "(in 5")
	if s := pf.Secrets[0]; !s.Test.Works() {
		t.Errorf("an hour left: the API server should accept it now: %+v", s.Test)
	}
	pf = check("expired", remoteSecretFile(t, "cluster2", "", expired, nil), 1, "remote-secret-expiry", model.SeverityError, "expired on")
	if s := pf.Secrets[0]; s.Test == nil || s.Test.Failed != model.ErrUnauthorized {
		t.Errorf("expired: the real API server should refuse it: %+v", s.Test)
	}
	pf = check("no nodes, no gateways", remoteSecretFile(t, "cluster2", "", limited, nil), 1, "remote-secret-rbac", model.SeverityError,
		"may not: nodes (get, list, watch); gateways.gateway.networking.k8s.io (get, list, watch) — istio's reader role grants them")
	if s := pf.Secrets[0]; len(s.Test.Missing) != 6 {
		t.Errorf("no nodes, no gateways: missing %v, want exactly 6", s.Test.Missing)
	}
	check("another cluster's CA", remoteSecretFile(t, "cluster2", "", year, theLab.Cluster("cluster1").CAData), 1, "remote-secret-tls", model.SeverityError,
		"does not verify its API server "+c2.URL)

	notSecret := filepath.Join(t.TempDir(), "cm.yaml")
	if err := os.WriteFile(notSecret, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: istio-system}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runSecrets(t, secrets, "doctor", "--context", "cluster1", "--remote-secret", notSecret); r.code != 2 || !strings.Contains(r.stderr, "is no Secret") {
		t.Errorf("a ConfigMap: exit %d, %s", r.code, r.stderr)
	}
	if r := runSecrets(t, secrets, "doctor", "--context", "cluster1", "--remote-secret", filepath.Join(t.TempDir(), "missing.yaml")); r.code != 2 {
		t.Errorf("a missing file: exit %d, %s", r.code, r.stderr)
	}
	// The text form says the same, without a token.
	if r := runSecrets(t, secrets, "doctor", "--context", "cluster1", "--remote-secret", remoteSecretFile(t, "cluster2", "", limited, nil)); r.code != 1 ||
		!strings.Contains(r.stdout, "tried from here: server reached, CA verifies it, credential accepted; 6 permissions of istio's reader role missing") {
		t.Errorf("text: exit %d\n%s", r.code, r.stdout)
	}
	// what-if of the expired secret: cluster2's new credentials fail.
	r := runSecrets(t, secrets, "what-if", "--context", "cluster1", "-f", "cluster1="+remoteSecretFile(t, "cluster2", "", expired, nil))
	if r.code != 1 || !strings.Contains(r.stdout, "cluster cluster2 gets new credentials from remote secret istio-system/istio-remote-secret-cluster2 in cluster1 that fail") {
		t.Errorf("what-if: exit %d\n%s", r.code, r.stdout)
	}

	// Trying the credentials wrote nothing: the test accounts asked
	// reviews and reads only.
	evs, err := theLab.AuditEvents("cluster2", lab.TestAccount("secrets-"))
	if err != nil {
		t.Fatal(err)
	}
	reviews := 0
	for _, e := range evs {
		switch {
		case e.Verb == "create" && e.Group == "authorization.k8s.io" && (e.Resource == "selfsubjectrulesreviews" || e.Resource == "selfsubjectaccessreviews"):
			reviews++
		case e.Verb == "get" || e.Verb == "list" || e.Verb == "watch":
		default:
			t.Errorf("%s asked %s %s.%s: only reviews and reads are allowed", e.User, e.Verb, e.Resource, e.Group)
		}
	}
	if reviews < 10 {
		t.Errorf("%d reviews in cluster2's audit log by the test accounts: the credentials were not tried", reviews)
	}
}

// TestRemoteSecretLive: the lab's own remote secret (cluster1's for
// cluster2) with a token of an hour, then with one whose exp is past, as
// doctor reads the mesh: a warning with the date, then an error; a secret
// for cluster9 at a loopback address nothing listens on, which the real
// istiod cannot sync, is flagged for its address — the lab's secrets,
// which istiod syncs through 127.0.0.1, are not.
func TestRemoteSecretLive(t *testing.T) {
	ctx := context.Background()
	restore := func() {
		if err := theLab.RotateRemoteSecret(ctx, "cluster1", "cluster2"); err != nil {
			t.Errorf("restore: %v", err)
		}
		_ = theLab.DeleteRemoteSecret(ctx, "cluster1", "istio-remote-secret-cluster9")
		waitIstiodReads(t, "cluster1", "cluster2", true)
		waitIstiodReads(t, "cluster1", "cluster9", false, true)
	}
	defer restore()
	var secrets []string
	write := func(token string, server string) {
		t.Helper()
		secrets = append(secrets, token)
		kc, err := theLab.RemoteKubeconfig("cluster2", token)
		if err != nil {
			t.Fatal(err)
		}
		name, key := "istio-remote-secret-cluster2", "cluster2"
		if server != "" {
			kc = []byte(strings.Replace(string(kc), theLab.Cluster("cluster2").URL, server, 1))
			name, key = "istio-remote-secret-cluster9", "cluster9"
		}
		if err := theLab.WriteRemoteSecret(ctx, "cluster1", name, map[string][]byte{key: kc}); err != nil {
			t.Fatal(err)
		}
	}
	doctor := func() []model.Problem {
		r := runSecrets(t, secrets, "doctor", "--context", "cluster1", "--offline", "-o", "json")
		var res struct {
			Problems []model.Problem `json:"problems"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Fatalf("doctor: %v\n%s", err, r.stdout)
		}
		for _, p := range res.Problems {
			if strings.HasPrefix(string(p.Kind), "remote-secret") {
				t.Logf("doctor: %s %s: %s", p.Severity, p.Kind, p.Sentence)
			}
		}
		return res.Problems
	}

	hour, err := theLab.IssueReaderTokenFor(ctx, "cluster2", "cluster1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	write(hour, "")
	eventually(t, 60*time.Second, func() string {
		_, why := problemOf(doctor(), "remote-secret-expiry", model.SeverityWarning,
			"the bound token of remote secret istio-system/istio-remote-secret-cluster2 in cluster1 (for cluster2) expires on "+time.Now().Add(time.Hour).UTC().Format("2006-01-02"))
		return why
	})
	expired, err := theLab.MintToken(ctx, "cluster2", lab.ReaderSA, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	write(expired, "")
	eventually(t, 60*time.Second, func() string {
		_, why := problemOf(doctor(), "remote-secret-expiry", model.SeverityError,
			"the bound token of remote secret istio-system/istio-remote-secret-cluster2 in cluster1 (for cluster2) expired on", "istiod cluster1 can no longer read cluster2")
		return why
	})
	if err := theLab.RotateRemoteSecret(ctx, "cluster1", "cluster2"); err != nil {
		t.Fatal(err)
	}
	waitIstiodReads(t, "cluster1", "cluster2", true)

	// A loopback address nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "https://" + l.Addr().String()
	l.Close()
	year, err := theLab.IssueReaderToken(ctx, "cluster2", "cluster9")
	if err != nil {
		t.Fatal(err)
	}
	write(year, dead)
	waitIstiodReads(t, "cluster1", "cluster9", true, true)
	// istiod gives up on it after its PILOT_REMOTE_CLUSTER_TIMEOUT (30s);
	// doctor holds a cluster still syncing against a secret a minute after
	// it was written.
	eventually(t, 100*time.Second, func() string {
		ps := doctor()
		_, why := problemOf(ps, "remote-secret-server", model.SeverityError,
			"remote secret istio-system/istio-remote-secret-cluster9 in cluster1 (for cluster9) names the API server "+dead+", a loopback address (127.0.0.1)", "istiod cluster1's /debug/clusterz shows cluster9")
		if why != "" {
			return why
		}
		if n := len(find(ps, "remote-secret-server")); n != 1 {
			return fmt.Sprintf("%d remote-secret-server problems, want only cluster9's (the lab's synced secrets are fine): %+v", n, find(ps, "remote-secret-server"))
		}
		_, why = problemOf(ps, "remote-secret-unreachable", model.SeverityWarning, "istio-remote-secret-cluster9", "connection refused")
		return why
	})
}
