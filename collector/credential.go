package collector

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/meshscope/meshscope/model"
)

// describeCredential says what a remote secret's kubeconfig is, without
// any secret in the answer: how its current context's user authenticates
// and until when (a JWT's exp read without verifying it, a client
// certificate's NotAfter), the server and how it is verified, and which
// insecure options istiod needs allowed before it loads it. It reads no
// file and runs nothing. A kubeconfig that istiod cannot load says why in
// Invalid (in words that quote none of its values).
func describeCredential(kubeconfig []byte) model.Credential {
	if len(kubeconfig) == 0 {
		return model.Credential{Auth: model.AuthNone, Invalid: "the kubeconfig is empty"}
	}
	raw, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return model.Credential{Auth: model.AuthNone, Invalid: "the kubeconfig does not parse"}
	}
	return describeRaw(raw)
}

// describeRaw is describeCredential of a loaded kubeconfig.
func describeRaw(raw *clientcmdapi.Config) model.Credential {
	c := model.Credential{Auth: model.AuthNone, NeedsOptions: istiodOptionsNeeded(raw)}
	ctx := raw.Contexts[raw.CurrentContext]
	switch {
	case raw.CurrentContext == "":
		c.Invalid = "it has no current-context"
		return c
	case ctx == nil:
		c.Invalid = "its current-context does not exist"
		return c
	}
	if cl := raw.Clusters[ctx.Cluster]; cl != nil {
		c.Server = serverWithoutUser(cl.Server)
		c.TLSServerName = cl.TLSServerName
		c.Insecure = cl.InsecureSkipTLSVerify
		c.Proxy = cl.ProxyURL != ""
		switch {
		case len(cl.CertificateAuthorityData) > 0:
			c.CA = "data"
		case cl.CertificateAuthority != "":
			c.CA = "file"
		}
	}
	if a := raw.AuthInfos[ctx.AuthInfo]; a != nil {
		describeUser(&c, a)
	}
	// What istiod's own loading (clientcmd.Validate) rejects; a file it
	// would read is no validation matter here: NeedsOptions says it.
	switch {
	case raw.Clusters[ctx.Cluster] == nil:
		c.Invalid = "its context's cluster does not exist"
	case c.Server == "":
		c.Invalid = "its cluster has no server"
	case ctx.AuthInfo != "" && raw.AuthInfos[ctx.AuthInfo] == nil:
		c.Invalid = "its context's user does not exist"
	}
	return c
}

// describeUser fills the auth kind, expiry and subject of one user. An
// exec plugin or auth provider decides (client-go lets them supply the
// credential); otherwise a token, then a client certificate.
func describeUser(c *model.Credential, a *clientcmdapi.AuthInfo) {
	switch {
	case a.Exec != nil:
		c.Auth, c.Plugin = model.AuthExec, filepath.Base(a.Exec.Command)
	case a.AuthProvider != nil:
		c.Auth, c.Plugin = model.AuthProvider, a.AuthProvider.Name
	case a.Token != "":
		c.Auth = model.AuthToken
		if jc, ok := jwtClaims(a.Token); ok {
			c.Subject, c.IssuedAt = jc.Sub, unixTime(jc.Iat)
			if !unixTime(jc.Exp).IsZero() {
				c.Auth, c.Expires = model.AuthBoundToken, unixTime(jc.Exp)
			}
		}
	case a.TokenFile != "":
		c.Auth = model.AuthTokenFile
	case len(a.ClientCertificateData) > 0:
		c.Auth = model.AuthClientCert
	case a.ClientCertificate != "" || a.ClientKey != "":
		c.Auth = model.AuthClientCertFile
	case a.Username != "" || a.Password != "":
		c.Auth = model.AuthBasic
	}
	// A client certificate works alongside a token: whichever ends first.
	if cert := firstCert(a.ClientCertificateData); cert != nil {
		if c.Subject == "" {
			c.Subject = cert.Subject.CommonName
		}
		if c.Expires.IsZero() || cert.NotAfter.Before(c.Expires) {
			c.Expires = cert.NotAfter
		}
	}
}

// istiodOptionsNeeded are the PILOT_INSECURE_MULTICLUSTER_KUBECONFIG_OPTIONS
// values istiod needs allowed before it loads raw: istio pkg/kube/util.go
// sanitizeKubeConfig refuses, in any user, an auth provider other than
// oidc (by its name), clientKey, clientCertificate, tokenFile and exec
// unless the allow list names them. Sorted, each once.
func istiodOptionsNeeded(raw *clientcmdapi.Config) []string {
	need := map[string]bool{}
	for _, a := range raw.AuthInfos {
		if a == nil {
			continue
		}
		if a.AuthProvider != nil && a.AuthProvider.Name != "oidc" {
			need[a.AuthProvider.Name] = true
		}
		if a.ClientKey != "" {
			need["clientKey"] = true
		}
		if a.ClientCertificate != "" {
			need["clientCertificate"] = true
		}
		if a.TokenFile != "" {
			need["tokenFile"] = true
		}
		if a.Exec != nil {
			need["exec"] = true
		}
	}
	if len(need) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(need))
}

// claims are the JWT claims meshscope reads; nothing is verified (the
// API server does that): they only say when the token stops working.
type claims struct {
	Sub string  `json:"sub"`
	Exp float64 `json:"exp"`
	Iat float64 `json:"iat"`
}

// jwtClaims reads a JWT's payload, unverified. ok is false for a token
// that is no JWT (three dot-separated base64url parts, a JSON payload).
func jwtClaims(token string) (claims, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return claims{}, false
	}
	body, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return claims{}, false
	}
	var c claims
	if err := json.Unmarshal(body, &c); err != nil {
		return claims{}, false
	}
	return c, true
}

// unixTime is a JWT NumericDate (zero for none, or nonsense).
func unixTime(v float64) time.Time {
	if v <= 0 || v > 1e11 {
		return time.Time{}
	}
	return time.Unix(int64(v), 0).UTC()
}

// firstCert parses the first certificate of a PEM bundle (nil when none).
func firstCert(data []byte) *x509.Certificate {
	for len(data) > 0 {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		if c, err := x509.ParseCertificate(b.Bytes); err == nil {
			return c
		}
	}
	return nil
}

// serverWithoutUser is the server URL without user info (a password in
// a URL is a secret); a URL that does not parse is kept only up to its
// host, without anything before an "@".
func serverWithoutUser(s string) string {
	if u, err := url.Parse(s); err == nil {
		u.User = nil
		return u.String()
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		rest, scheme = s, ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		rest = rest[at+1:]
	}
	if scheme != "" {
		return scheme + "://" + rest
	}
	return rest
}
