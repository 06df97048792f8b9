package collector

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/meshscope/meshscope/collector/internal/errs"
	"github.com/meshscope/meshscope/model"
)

// FuzzUntrustedKubeconfig holds the remote-secret kubeconfig check to its
// promises on any bytes:
//
//   - it never panics;
//   - without allowInsecure, an accepted kubeconfig has no exec plugin, no
//     auth provider but oidc (istiod's rule), no tokenFile, no client
//     certificate or key file and no certificate-authority file in any of
//     its users and clusters, and the rest.Config built from it would
//     neither run a program nor read a file;
//   - a refusal is a Problem of a known kind with a one-line sentence in
//     which no secret of the kubeconfig (token, password, key or cert body,
//     auth-provider setting, exec argument or environment value, URL
//     password; 4 bytes or longer) appears outside a <redacted> mark.
func FuzzUntrustedKubeconfig(f *testing.F) {
	for _, s := range kubeconfigSeeds() {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, kc []byte, insecure bool) {
		raw, loadErr := clientcmd.Load(kc)
		if insecure && loadErr == nil && namesFiles(raw) {
			// Allowed, those files would be read (and a fuzzed path could
			// be /dev/zero): check the refusal instead.
			insecure = false
		}
		cfg, err := newUntrustedRestConfig(kc, insecure)
		if err == nil {
			if cfg == nil {
				t.Fatal("no error and no config")
			}
			if loadErr != nil {
				t.Fatalf("accepted a kubeconfig clientcmd cannot load: %v", loadErr)
			}
			if insecure {
				return
			}
			for n, a := range raw.AuthInfos {
				if a == nil {
					continue
				}
				if a.Exec != nil || a.TokenFile != "" || a.ClientCertificate != "" || a.ClientKey != "" ||
					(a.AuthProvider != nil && a.AuthProvider.Name != "oidc") {
					t.Fatalf("user %q passed with exec %v, tokenFile %q, cert %q, key %q, auth provider %v", n, a.Exec, a.TokenFile, a.ClientCertificate, a.ClientKey, a.AuthProvider)
				}
			}
			for n, c := range raw.Clusters {
				if c != nil && c.CertificateAuthority != "" {
					t.Fatalf("cluster %q passed with certificate-authority file %q", n, c.CertificateAuthority)
				}
			}
			if cfg.ExecProvider != nil || cfg.BearerTokenFile != "" || cfg.CertFile != "" || cfg.KeyFile != "" || cfg.CAFile != "" ||
				(cfg.AuthProvider != nil && cfg.AuthProvider.Name != "oidc") {
				t.Fatalf("rest.Config runs a program or reads a file: %+v", cfg)
			}
			return
		}
		var p errs.Failure
		if !errors.As(err, &p) || (p.Kind != model.ErrBadKubeconfig && p.Kind != model.ErrRefusedConfig) {
			t.Fatalf("error is not a bad/refused-kubeconfig Problem: %#v", err)
		}
		if p.Reason == "" || strings.Contains(p.Reason, "\n") || len(p.Reason) > errs.MaxLine+len(errs.Ellipsis)+len(errs.Placeholder) {
			t.Fatalf("reason is not one short line: %q", p.Reason)
		}
		if loadErr != nil {
			return // the sentence is fixed and quotes nothing
		}
		for _, secret := range kubeconfigSecrets(raw) {
			if len(secret) < errs.MinSecret {
				continue
			}
			for _, piece := range strings.Split(p.Reason, errs.Placeholder) {
				if strings.Contains(piece, secret) {
					t.Fatalf("reason %q shows the secret %q", p.Reason, secret)
				}
			}
		}
	})
}

// namesFiles reports whether a kubeconfig names a local file to read.
func namesFiles(raw *clientcmdapi.Config) bool {
	for _, a := range raw.AuthInfos {
		if a != nil && (a.TokenFile != "" || a.ClientCertificate != "" || a.ClientKey != "") {
			return true
		}
	}
	for _, c := range raw.Clusters {
		if c != nil && c.CertificateAuthority != "" {
			return true
		}
	}
	return false
}

// kubeconfigSecrets lists the secrets of a kubeconfig independently of
// redactorFor, so the fuzz oracle does not trust the code it checks.
func kubeconfigSecrets(raw *clientcmdapi.Config) []string {
	var out []string
	for _, a := range raw.AuthInfos {
		if a == nil {
			continue
		}
		out = append(out, a.Token, a.Password, string(a.ClientKeyData), string(a.ClientCertificateData))
		if a.AuthProvider != nil {
			for _, v := range a.AuthProvider.Config {
				out = append(out, v)
			}
		}
		if a.Exec != nil {
			out = append(out, a.Exec.Args...)
			for _, e := range a.Exec.Env {
				out = append(out, e.Value)
			}
		}
	}
	for _, c := range raw.Clusters {
		if c == nil {
			continue
		}
		for _, u := range []string{c.Server, c.ProxyURL} {
			if i := strings.Index(u, "@"); i >= 0 {
				if _, pass, ok := strings.Cut(u[:i], ":"); ok {
					out = append(out, strings.TrimPrefix(pass, "//"))
				}
			}
		}
	}
	return out
}

// kubeconfigSeeds are kubeconfigs in the shape remote secrets carry
// (istioctl create-remote-secret, the lab's), each refused field, and
// broken variants; the tokens are made up.
func kubeconfigSeeds() []string {
	const head = `apiVersion: v1
kind: Config
clusters:
- name: cluster2
  cluster:
    server: https://127.0.0.1:6444
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJkekNDQVIyZ0F3SUJBZ0lCQURBS0JnZ3Foa2pPUFFRREFqQWpNU0V3SHdZRFZRUUREQmhyTTNNdGMyVnkKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=
contexts:
- name: cluster2
  context: {cluster: cluster2, user: cluster2}
current-context: cluster2
users:
- name: cluster2
  user:
`
	return []string{
		head + "    token: eyJhbGciOiJSUzI1NiIsImtpZCI6ImxhYiJ9.c2VydmljZWFjY291bnQ.c2lnbmF0dXJl\n",
		string(kubeconfigFor("https://127.0.0.1:6444", tokenCluster2)),
		head + "    exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/steal, args: [--token, s3cr3t-arg-token], env: [{name: T, value: s3cr3t-env-value}]}\n",
		head + "    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token\n",
		head + "    client-certificate: /etc/cert.pem\n    client-key: /etc/key.pem\n",
		head + "    client-certificate-data: Y2VydA==\n    client-key-data: a2V5LWJvZHktc2VjcmV0\n",
		head + "    auth-provider: {name: gcp, config: {access-token: s3cr3t-gcp-token}}\n",
		head + "    auth-provider: {name: oidc, config: {id-token: s3cr3t-id-token, client-id: x, idp-issuer-url: https://issuer}}\n",
		head + "    username: admin\n    password: s3cr3t-password\n",
		strings.Replace(head, "certificate-authority-data: ", "certificate-authority: /etc/ca.pem\n    x: ", 1) + "    token: s3cr3t-token\n",
		strings.Replace(head, "https://127.0.0.1:6444", "https://admin:s3cr3t-url-pass@127.0.0.1:bad", 1) + "    token: s3cr3t-token\n",
		strings.Replace(head, "current-context: cluster2", "current-context: s3cr3t-token", 1) + "    token: s3cr3t-token\n",
		`{"apiVersion":"v1","kind":"Config","clusters":[{"name":"c","cluster":{"server":"https://10.0.0.1"}}],"users":[{"name":"u","user":{"token":"s3cr3t-json-token"}}],"contexts":[{"name":"x","context":{"cluster":"c","user":"u"}}],"current-context":"x"}`,
		"apiVersion: v1\nkind: Config\n",
		"{{{not yaml: [",
		"",
	}
}
