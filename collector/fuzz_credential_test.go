package collector

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshscope/meshscope/model"
)

// FuzzDescribeCredential holds the description of a remote secret's
// kubeconfig (describeCredential) to its promises on any bytes:
//
//   - it never panics, reads no file and runs nothing;
//   - its auth kind is a known one, and Invalid is set exactly when the
//     kubeconfig does not load or has no usable current context;
//   - the options istiod needs are known names (or an auth provider's),
//     sorted, each once, and none for a kubeconfig istiod loads as is;
//   - the description, as JSON, shows no secret of the kubeconfig (token,
//     password, key or certificate body, auth-provider setting, exec
//     argument or environment value, URL password; 4 bytes or longer).
//
// Seeds: kubeconfigSeeds (every auth kind, refused fields, broken ones)
// and testdata/fuzz/FuzzDescribeCredential.
func FuzzDescribeCredential(f *testing.F) {
	for _, s := range kubeconfigSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, kc []byte) {
		c := describeCredential(kc)
		known := []model.AuthKind{model.AuthToken, model.AuthBoundToken, model.AuthClientCert, model.AuthClientCertFile, model.AuthTokenFile,
			model.AuthExec, model.AuthProvider, model.AuthBasic, model.AuthNone}
		if !slices.Contains(known, c.Auth) {
			t.Fatalf("auth kind %q", c.Auth)
		}
		raw, err := clientcmd.Load(kc)
		if (err != nil || len(kc) == 0) && c.Invalid == "" {
			t.Fatalf("a kubeconfig that does not load is described as valid: %+v", c)
		}
		if err == nil && len(kc) > 0 && raw.Contexts[raw.CurrentContext] == nil && c.Invalid == "" {
			t.Fatalf("no usable current context, yet valid: %+v", c)
		}
		if !slices.IsSorted(c.NeedsOptions) || len(slices.Compact(slices.Clone(c.NeedsOptions))) != len(c.NeedsOptions) {
			t.Fatalf("options %q not sorted or repeated", c.NeedsOptions)
		}
		if u, err := url.Parse(c.Server); err == nil && u.User != nil {
			t.Fatalf("server %q keeps its user info", c.Server)
		}
		if err != nil || len(kc) == 0 {
			return
		}
		b, _ := json.Marshal(c)
		for _, secret := range kubeconfigSecrets(raw) {
			if len(secret) >= 4 && strings.Contains(string(b), secret) && !innocent(secret, c) {
				t.Fatalf("the description %s shows the secret %q", b, secret)
			}
		}
	})
}

// innocent says whether a secret-field value is also, by chance, one of
// the description's own words (a fuzzed token "exec", a password equal to
// the server's host): its presence then shows nothing.
func innocent(secret string, c model.Credential) bool {
	for _, w := range []string{string(c.Auth), c.Plugin, c.Server, c.TLSServerName, c.CA, c.Subject, c.Invalid,
		strings.Join(c.NeedsOptions, ","), "auth", "expires", "issuedAt", "server", "plugin", "subject", "needsOptions", "invalid", "insecure", "proxy", "true"} {
		if w != "" && strings.Contains(w, secret) {
			return true
		}
	}
	return false
}
