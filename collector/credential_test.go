package collector

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

// testJWT is an unsigned-looking JWT with the given claims (the signature
// is made up: meshscope reads claims unverified).
func testJWT(claims map[string]any) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]string{"alg": "RS256", "kid": "lab"}) + "." + enc(claims) + ".c2lnbmF0dXJlLXMzY3IzdA"
}

// clientCert is a PEM client certificate and key with common name cn.
func clientCert(t *testing.T, cn string, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: cn}, NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

// kubeconfigWith is a one-context kubeconfig whose cluster and user are
// the given YAML bodies (indented under cluster: and user:).
func kubeconfigWith(cluster, user string) []byte {
	return []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n" + indent(cluster) +
		"users:\n- name: u\n  user:\n" + indent(user) +
		"contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n")
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if l != "" {
			b.WriteString("    " + l + "\n")
		}
	}
	if b.Len() == 0 {
		return "    {}\n"
	}
	return b.String()
}

// TestDescribeCredential: every auth kind, with its expiry and subject;
// the server and its verification; the options istiod needs allowed.
func TestDescribeCredential(t *testing.T) {
	exp := time.Date(2026, 9, 3, 12, 0, 0, 0, time.UTC)
	iat := exp.Add(-time.Hour)
	bound := testJWT(map[string]any{"sub": "system:serviceaccount:istio-system:istio-reader-service-account", "exp": exp.Unix(), "iat": iat.Unix(), "aud": []string{"https://kubernetes.default.svc"}})
	legacy := testJWT(map[string]any{"sub": "system:serviceaccount:istio-system:istio-reader-service-account", "iss": "kubernetes/serviceaccount"})
	certPEM, keyPEM := clientCert(t, "admin", exp.Add(24*time.Hour))
	ca := base64.StdEncoding.EncodeToString(meshtest.SelfSigned(t, "ca", exp))
	b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	srv := "server: https://10.0.0.9:6443\ncertificate-authority-data: " + ca + "\n"
	for _, tc := range []struct {
		name, cluster, user string
		want                model.Credential
	}{
		{"bound token", srv, "token: " + bound, model.Credential{Auth: model.AuthBoundToken, Expires: exp, IssuedAt: iat,
			Subject: "system:serviceaccount:istio-system:istio-reader-service-account", Server: "https://10.0.0.9:6443", CA: "data"}},
		{"legacy token", srv, "token: " + legacy, model.Credential{Auth: model.AuthToken,
			Subject: "system:serviceaccount:istio-system:istio-reader-service-account", Server: "https://10.0.0.9:6443", CA: "data"}},
		{"static token", srv, "token: s3cr3t-static-token", model.Credential{Auth: model.AuthToken, Server: "https://10.0.0.9:6443", CA: "data"}},
		{"client certificate", srv, "client-certificate-data: " + b64(certPEM) + "\nclient-key-data: " + b64(keyPEM),
			model.Credential{Auth: model.AuthClientCert, Subject: "admin", Expires: exp.Add(24 * time.Hour).Truncate(time.Second), Server: "https://10.0.0.9:6443", CA: "data"}},
		{"token and certificate: the earlier expiry", srv, "token: " + bound + "\nclient-certificate-data: " + b64(certPEM) + "\nclient-key-data: " + b64(keyPEM),
			model.Credential{Auth: model.AuthBoundToken, Expires: exp, IssuedAt: iat, Subject: "system:serviceaccount:istio-system:istio-reader-service-account", Server: "https://10.0.0.9:6443", CA: "data"}},
		{"certificate files", srv, "client-certificate: /etc/c.pem\nclient-key: /etc/k.pem",
			model.Credential{Auth: model.AuthClientCertFile, Server: "https://10.0.0.9:6443", CA: "data", NeedsOptions: []string{"clientCertificate", "clientKey"}}},
		{"token file", srv, "tokenFile: /var/run/t", model.Credential{Auth: model.AuthTokenFile, Server: "https://10.0.0.9:6443", CA: "data", NeedsOptions: []string{"tokenFile"}}},
		{"exec plugin (EKS)", srv, "exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: /usr/local/bin/aws, args: [eks, get-token, --cluster-name, s3cr3t-arg]}",
			model.Credential{Auth: model.AuthExec, Plugin: "aws", Server: "https://10.0.0.9:6443", CA: "data", NeedsOptions: []string{"exec"}}},
		{"gcp auth provider", srv, "auth-provider: {name: gcp, config: {access-token: s3cr3t-gcp}}",
			model.Credential{Auth: model.AuthProvider, Plugin: "gcp", Server: "https://10.0.0.9:6443", CA: "data", NeedsOptions: []string{"gcp"}}},
		{"oidc auth provider: istiod allows it", srv, "auth-provider: {name: oidc, config: {id-token: s3cr3t-oidc}}",
			model.Credential{Auth: model.AuthProvider, Plugin: "oidc", Server: "https://10.0.0.9:6443", CA: "data"}},
		{"basic", srv, "username: admin\npassword: s3cr3t-pass", model.Credential{Auth: model.AuthBasic, Server: "https://10.0.0.9:6443", CA: "data"}},
		{"anonymous", srv, "", model.Credential{Auth: model.AuthNone, Server: "https://10.0.0.9:6443", CA: "data"}},
		{"insecure, tls-server-name, proxy, password in URL", "server: https://admin:s3cr3t-url@127.0.0.1:6444\ninsecure-skip-tls-verify: true\ntls-server-name: kubernetes\nproxy-url: http://proxy:3128\n",
			"token: s3cr3t-token", model.Credential{Auth: model.AuthToken, Server: "https://127.0.0.1:6444", TLSServerName: "kubernetes", Insecure: true, Proxy: true}},
		{"CA file", "server: https://k\ncertificate-authority: /etc/ca.pem\n", "token: t0k3n", model.Credential{Auth: model.AuthToken, Server: "https://k", CA: "file"}},
		{"no server", "insecure-skip-tls-verify: true\n", "token: t0k3n", model.Credential{Auth: model.AuthToken, Insecure: true, Invalid: "its cluster has no server"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := describeCredential(kubeconfigWith(tc.cluster, tc.user))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
			noSecretIn(t, got)
		})
	}
}

// TestDescribeCredentialMalformed: kubeconfigs istiod cannot load say why,
// in words that quote none of their values.
func TestDescribeCredentialMalformed(t *testing.T) {
	for _, tc := range []struct{ name, kc, want string }{
		{"empty", "", "the kubeconfig is empty"},
		{"not YAML", "{{{ s3cr3t-token: [", "the kubeconfig does not parse"},
		{"no contexts", "apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user: {token: s3cr3t-token}\n", "it has no current-context"},
		{"missing context", "apiVersion: v1\nkind: Config\ncurrent-context: s3cr3t-token\n", "its current-context does not exist"},
		{"missing cluster", "apiVersion: v1\nkind: Config\ncontexts:\n- name: x\n  context: {cluster: nope, user: u}\ncurrent-context: x\nusers:\n- name: u\n  user: {token: s3cr3t-token}\n", "its context's cluster does not exist"},
		{"missing user", "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: https://k}\ncontexts:\n- name: x\n  context: {cluster: c, user: nope}\ncurrent-context: x\n", "its context's user does not exist"},
		{"a JWT that is not one", string(kubeconfigWith("server: https://k\n", "token: a.%%%.c")), ""},
		{"a JWT with a nonsense exp", string(kubeconfigWith("server: https://k\n", "token: "+testJWT(map[string]any{"exp": "tomorrow"}))), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := describeCredential([]byte(tc.kc))
			if got.Invalid != tc.want {
				t.Errorf("Invalid = %q, want %q", got.Invalid, tc.want)
			}
			if tc.want == "" && (got.Auth != model.AuthToken || !got.Expires.IsZero()) {
				t.Errorf("a token that is no readable JWT: %+v", got)
			}
			noSecretIn(t, got)
		})
	}
}

// noSecretIn fails when a description holds anything secret-looking the
// test kubeconfigs carry (every made-up secret has "s3cr3t", the JWTs
// their signature, keys their PEM headers).
func noSecretIn(t *testing.T, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	for _, s := range []string{"s3cr3t", "c2lnbmF0dXJl", "PRIVATE KEY", "BEGIN CERTIFICATE", "eyJ"} {
		if strings.Contains(string(b), s) {
			t.Errorf("%s shows %q", b, s)
		}
	}
}

// TestCredentialShort: the table form of a credential.
func TestCredentialShort(t *testing.T) {
	now := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		c    model.Credential
		want string
	}{
		{model.Credential{Auth: model.AuthBoundToken, Expires: now.Add(3*24*time.Hour + time.Hour)}, "token 3d"},
		{model.Credential{Auth: model.AuthBoundToken, Expires: now.Add(50 * time.Minute)}, "token 50m"},
		{model.Credential{Auth: model.AuthBoundToken, Expires: now.Add(-time.Second)}, "token expired"},
		{model.Credential{Auth: model.AuthToken}, "token"},
		{model.Credential{Auth: model.AuthExec, Plugin: "aws"}, "exec aws"},
		{model.Credential{Auth: model.AuthNone, Invalid: "x"}, "invalid"},
	} {
		if got := tc.c.Short(now); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.c, got, tc.want)
		}
	}
}
