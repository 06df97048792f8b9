package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// demoSecretFile writes a remote secret for id at server with a bound
// token expiring after life, as istioctl create-remote-secret prints it;
// it returns the path and the token.
func demoSecretFile(t *testing.T, id, server string, life time.Duration) (string, string) {
	t.Helper()
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	token := enc(map[string]string{"alg": "RS256"}) + "." + enc(map[string]any{"sub": "system:serviceaccount:istio-system:istio-reader-service-account",
		"exp": time.Now().Add(life).Unix()}) + ".c2VjcmV0LXNpZ25hdHVyZS0" + id
	kc := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: %[1]s\n  cluster: {server: %[2]q, certificate-authority-data: %[3]s}\n"+
		"users:\n- name: %[1]s\n  user: {token: %[4]s}\ncontexts:\n- name: %[1]s\n  context: {cluster: %[1]s, user: %[1]s}\ncurrent-context: %[1]s\n",
		id, server, base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")), token)
	b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "istio-remote-secret-" + id, "namespace": "istio-system", "labels": map[string]string{"istio/multiCluster": "true"}},
		"stringData": map[string]string{id: kc}})
	p := filepath.Join(t.TempDir(), id+".json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p, token
}

// TestDoctorRemoteSecretDemo: doctor --remote-secret on the demo mesh —
// a working secret (exit 0), one expiring within the week (a warning,
// exit 0), one for a server no cluster answers at (the what-if cannot
// read the cluster it adds, an error; its credential could not be tried:
// incomplete, exit 3), a file that is no Secret (exit 2) —
// and no run shows the token it was given, in its output, errors or log.
func TestDoctorRemoteSecretDemo(t *testing.T) {
	run := func(args ...string) (string, int) {
		t.Helper()
		root := newRootCmd()
		var out, errOut bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&errOut)
		logFile := filepath.Join(t.TempDir(), "log")
		root.SetArgs(append(args, "--demo", "--log-file", logFile))
		code, msg := exitOf(root.Execute())
		log, _ := os.ReadFile(logFile)
		return out.String() + "\n" + errOut.String() + "\n" + msg + "\n" + string(log), code
	}
	good, goodTok := demoSecretFile(t, "cluster3", "https://cluster3.demo.meshscope.invalid:6443", 365*24*time.Hour)
	soon, soonTok := demoSecretFile(t, "cluster3", "https://cluster3.demo.meshscope.invalid:6443", 50*time.Hour)
	nowhere, nowhereTok := demoSecretFile(t, "cluster5", "https://cluster5.demo.meshscope.invalid:6443", 365*24*time.Hour)
	cm := filepath.Join(t.TempDir(), "cm.yaml")
	if err := os.WriteFile(cm, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: istio-system}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file  string
		code  int
		wants []string
	}{
		{good, 0, []string{"istio-system/istio-remote-secret-cluster3 key cluster3", "credential: token 364d", "tried from here: server reached, CA verifies it, credential accepted, istio's reader role held",
			"cluster cluster3 gets new credentials from remote secret istio-system/istio-remote-secret-cluster3 in cluster1 (tried from here: they work)", "No problems found."}},
		{soon, 0, []string{"remote-secret-expiry", "expires on", "(in 2d)"}},
		{nowhere, 3, []string{"adds cluster cluster5, which cannot work: its credential, tried from here, fails (unreachable: no such host",
			"the credential for cluster cluster5 could not be tried from here: unreachable: no such host", "incomplete answer (exit 3)", "found as well (exit 1 alone)"}},
		{cm, 2, []string{"is no Secret"}},
	} {
		out, code := run("doctor", "--remote-secret", tc.file)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d\n%s", filepath.Base(tc.file), code, tc.code, out)
		}
		for _, w := range tc.wants {
			if !strings.Contains(out, w) {
				t.Errorf("%s: lacks %q:\n%s", filepath.Base(tc.file), w, out)
			}
		}
		for _, tok := range []string{goodTok, soonTok, nowhereTok} {
			for _, part := range append([]string{tok}, strings.Split(tok, ".")...) {
				if len(part) >= 12 && strings.Contains(out, part) {
					t.Errorf("%s: shows a token it was given (%.8s…)", filepath.Base(tc.file), part)
				}
			}
		}
	}
}
