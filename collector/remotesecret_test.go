package collector

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshscope/meshscope/collector/internal/errs"
	"github.com/meshscope/meshscope/model"
)

func TestNewUntrustedRestConfig(t *testing.T) {
	const head = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://10.0.0.1:6443"}
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
users:
- name: u
  user:
`
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("t0ken"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		in       string
		insecure bool
		kind     model.ErrorKind
		want     string // substring of the reason
	}{
		{"empty", "", false, model.ErrBadKubeconfig, "empty"},
		{"garbage", "{{{not yaml: [" + tokenCluster2, false, model.ErrBadKubeconfig, "cannot be parsed"},
		{"no context", "apiVersion: v1\nkind: Config\n", false, model.ErrBadKubeconfig, "bad kubeconfig"},
		{"missing cluster", strings.Replace(head, "cluster: c,", "cluster: nope,", 1) + "    token: " + tokenCluster2 + "\n", false, model.ErrBadKubeconfig, "bad kubeconfig"},
		{"exec plugin", head + "    exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/steal}\n", false, model.ErrRefusedConfig, "refused exec plugin"},
		{"tokenFile", head + "    tokenFile: /var/run/secrets/token\n", false, model.ErrRefusedConfig, "refused tokenFile"},
		{"cert file", head + "    client-certificate: /etc/cert.pem\n", false, model.ErrRefusedConfig, "refused client-certificate file"},
		{"key file", head + "    client-key: /etc/key.pem\n", false, model.ErrRefusedConfig, "refused client-key file"},
		{"gcp auth provider", head + "    auth-provider: {name: gcp, config: {access-token: " + tokenCluster2 + "}}\n", false, model.ErrRefusedConfig, `refused auth provider "gcp"`},
		{"oidc auth provider", head + "    auth-provider: {name: oidc, config: {id-token: " + tokenCluster2 + ", client-id: x, idp-issuer-url: https://issuer}}\n", false, "", ""},
		{"valid token", head + "    token: " + tokenCluster2 + "\n", false, "", ""},
		{"exec allowed when insecure", head + "    exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/true, interactiveMode: Never}\n", true, "", ""},
		{"tokenFile allowed when insecure", head + "    tokenFile: " + tokenFile + "\n", true, "", ""},
		{"certificate-authority file", strings.Replace(head, `server: "https://10.0.0.1:6443"`, `server: "https://10.0.0.1:6443", certificate-authority: /etc/ca.pem`, 1) + "    token: " + tokenCluster2 + "\n", false, model.ErrRefusedConfig, "refused certificate-authority file"},
		{"certificate-authority file allowed when insecure", strings.Replace(head, `server: "https://10.0.0.1:6443"`, `server: "https://10.0.0.1:6443", certificate-authority: `+tokenFile, 1) + "    token: " + tokenCluster2 + "\n", true, "", ""},
		// A secret that happens to equal a name the sentence quotes is still not shown.
		{"token named as the user", strings.NewReplacer("user: u}", "user: "+tokenCluster2+"}", "- name: u\n", "- name: "+tokenCluster2+"\n").Replace(head) + "    exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/x, args: [" + tokenCluster2 + "]}\n", false, model.ErrRefusedConfig, `user "<redacted>" runs`},
		{"exec argument as the command", head + "    exec: {apiVersion: client.authentication.k8s.io/v1, command: " + tokenCluster2 + ", args: [" + tokenCluster2 + "]}\n", false, model.ErrRefusedConfig, "runs the program \"<redacted>\""},
		{"URL password", strings.Replace(head, "https://10.0.0.1:6443", "https://admin:"+tokenCluster2+"@10.0.0.1:bad", 1) + "    token: t\n", false, model.ErrBadKubeconfig, "is not a valid URL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := newUntrustedRestConfig([]byte(tc.in), tc.insecure)
			if tc.kind == "" {
				if err != nil {
					t.Fatalf("want success, got %v", err)
				}
				if cfg.Host != "https://10.0.0.1:6443" {
					t.Fatalf("host = %q", cfg.Host)
				}
				return
			}
			if err == nil {
				t.Fatalf("want error %s, got config", tc.kind)
			}
			var p errs.Failure
			if !errors.As(err, &p) || p.Kind != tc.kind {
				t.Fatalf("kind: want %s, got %#v", tc.kind, err)
			}
			if !strings.Contains(p.Reason, tc.want) {
				t.Fatalf("reason %q does not contain %q", p.Reason, tc.want)
			}
			if strings.Contains(p.Reason, tokenCluster2) {
				t.Fatalf("reason leaks the token: %q", p.Reason)
			}
		})
	}
}

func TestParseRemoteSecretKeysAndHash(t *testing.T) {
	s := remoteSecret("istio-remote-secret-multi", map[string][]byte{
		"cluster2": kubeconfigFor("https://127.0.0.1:6444/", tokenCluster2),
		"cluster3": []byte("garbage"),
	})
	es := parseRemoteSecret(s, "cluster1", false)
	if len(es) != 2 {
		t.Fatalf("want one entry per data key, got %d", len(es))
	}
	if es[0].ID != "cluster2" || es[0].Server != "https://127.0.0.1:6444" || es[0].Problem.Kind != "" {
		t.Fatalf("cluster2 entry wrong: id=%s server=%s problem=%v", es[0].ID, es[0].Server, es[0].Problem)
	}
	if es[0].Ref.Name != "istio-system/istio-remote-secret-multi" || es[0].Ref.In != "cluster1" || es[0].Ref.Key != "cluster2" {
		t.Fatalf("ref = %+v", es[0].Ref)
	}
	if es[1].ID != "cluster3" || es[1].Problem.Kind != model.ErrBadKubeconfig {
		t.Fatalf("cluster3 entry: %+v", es[1].Problem)
	}
	// Same bytes, same hash; rotated token, different hash.
	again := parseRemoteSecret(s, "cluster1", false)
	if again[0].Hash != es[0].Hash {
		t.Fatal("hash of unchanged kubeconfig changed")
	}
	s.Data["cluster2"] = kubeconfigFor("https://127.0.0.1:6444/", "rotated-token-0123456789")
	if parseRemoteSecret(s, "cluster1", false)[0].Hash == es[0].Hash {
		t.Fatal("hash did not change with the token")
	}
}
