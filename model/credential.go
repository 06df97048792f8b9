package model

import (
	"fmt"
	"strings"
	"time"
)

// A remote secret's credential, described and tested. Every key of a
// remote secret is a kubeconfig istiod reads another cluster with; the
// collector describes each one (collector/credential.go: how it
// authenticates, when that stops working, where it points, whether istiod
// would load it) and tests it from where meshscope runs
// (collector/credtest.go: reach, TLS, and what the istio reader role
// grants, by reviews that persist nothing). Nothing here is secret: no
// token, key or kubeconfig text, only kinds, names and times.

// AuthKind is how a kubeconfig's user authenticates.
type AuthKind string

// The auth kinds, in the words istioctl and kubectl users know.
const (
	// AuthToken: a bearer token without an expiry (a legacy service-account
	// token Secret, or any static token).
	AuthToken AuthKind = "token"
	// AuthBoundToken: a service-account token with an expiry (TokenRequest,
	// kubectl create token): it stops working at Expires.
	AuthBoundToken AuthKind = "bound-token"
	// AuthClientCert: a client certificate and key given inline.
	AuthClientCert AuthKind = "client-cert"
	// AuthClientCertFile: a client certificate or key read from a file.
	AuthClientCertFile AuthKind = "client-cert-file"
	// AuthTokenFile: a token read from a file.
	AuthTokenFile AuthKind = "token-file"
	// AuthExec: an exec credential plugin (EKS, GKE, AKS, …).
	AuthExec AuthKind = "exec"
	// AuthProvider: an auth-provider plugin (oidc, gcp, azure, …).
	AuthProvider AuthKind = "auth-provider"
	// AuthBasic: a user name and password.
	AuthBasic AuthKind = "basic"
	// AuthNone: no credential at all (anonymous).
	AuthNone AuthKind = "none"
)

// Credential describes one kubeconfig of a remote secret (its current
// context's user and cluster), without any secret material.
type Credential struct {
	Auth AuthKind `json:"auth"`
	// Expires is when the credential stops working: a token's JWT exp
	// (read unverified) or the client certificate's NotAfter, the earlier
	// when both. Zero: no expiry known.
	Expires time.Time `json:"expires,omitzero"`
	// IssuedAt is a JWT's iat, when it has one.
	IssuedAt time.Time `json:"issuedAt,omitzero"`
	// Subject is who the credential says it is: a service account
	// "system:serviceaccount:NS:NAME" (a JWT's sub), or a client
	// certificate's common name.
	Subject string `json:"subject,omitempty"`
	// Plugin names an exec plugin's command or an auth provider.
	Plugin string `json:"plugin,omitempty"`
	// Server is the API server URL, without user info.
	Server string `json:"server,omitempty"`
	// TLSServerName is the name the server's certificate is verified
	// against when it differs from the URL's host (tls-server-name).
	TLSServerName string `json:"tlsServerName,omitempty"`
	// CA says where the CA comes from: "data" (certificate-authority-data),
	// "file" (certificate-authority), or "" (the system's roots).
	CA string `json:"ca,omitempty"`
	// Insecure: insecure-skip-tls-verify, the server is not verified.
	Insecure bool `json:"insecure,omitempty"`
	// Proxy: the kubeconfig names a proxy-url.
	Proxy bool `json:"proxy,omitempty"`
	// NeedsOptions are the values of PILOT_INSECURE_MULTICLUSTER_KUBECONFIG_OPTIONS
	// istiod needs before it loads this kubeconfig (exec, tokenFile,
	// clientCertificate, clientKey, or an auth provider's name), for any
	// of its users (istio pkg/kube/util.go sanitizeKubeConfig).
	NeedsOptions []string `json:"needsOptions,omitempty"`
	// Invalid says why istiod cannot load the kubeconfig at all (it does
	// not parse, or does not validate); "" when it loads.
	Invalid string `json:"invalid,omitempty"`
}

// Short is the credential in a few characters for a table: "token 3d" (a
// bound token), "token" (one that does not expire), "token expired",
// "exec aws", "client-cert 280d".
func (c Credential) Short(now time.Time) string {
	s := string(c.Auth)
	if c.Auth == AuthBoundToken {
		s = string(AuthToken) // its expiry says it is bound
	}
	switch {
	case c.Invalid != "":
		return "invalid"
	case c.Plugin != "" && (c.Auth == AuthExec || c.Auth == AuthProvider):
		s += " " + c.Plugin
	}
	if c.Expires.IsZero() {
		return s
	}
	if !c.Expires.After(now) {
		return s + " expired"
	}
	return s + " " + ShortDuration(c.Expires.Sub(now))
}

// ExpiresWithin says whether the credential expires (or has) before
// now+d.
func (c Credential) ExpiresWithin(now time.Time, d time.Duration) bool {
	return !c.Expires.IsZero() && c.Expires.Before(now.Add(d))
}

// ShortDuration is "3d", "5h", "12m", "40s".
func ShortDuration(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
	case d >= 2*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	case d >= 2*time.Minute:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	}
	return fmt.Sprintf("%ds", int(d/time.Second))
}

// Permission is one verb on one resource, as a role grants it.
type Permission struct {
	Group    string `json:"group,omitempty"`
	Resource string `json:"resource"`
	Verb     string `json:"verb"`
}

// String is "nodes" or "gateways.gateway.networking.k8s.io" (the
// resource as kubectl names it), without the verb.
func (p Permission) String() string {
	if p.Group == "" {
		return p.Resource
	}
	return p.Resource + "." + p.Group
}

// CredentialTest is what trying a credential from where meshscope runs
// found, step by step: reach the server, verify it with the given CA,
// authenticate, and hold what the istio reader role grants. A step that
// failed says why; the steps after it did not run.
type CredentialTest struct {
	At time.Time `json:"at"`
	// Skipped says why the credential was not tried ("" when it was): a
	// kubeconfig meshscope refuses to run (an exec plugin), or one that
	// does not load.
	Skipped string `json:"skipped,omitempty"`
	// Failed is the kind of the step that failed ("" when every step
	// passed): ErrUnreachable, ErrTLS, ErrUnauthorized, ErrOther; Reason
	// the sentence.
	Failed ErrorKind `json:"failed,omitempty"`
	Reason string    `json:"reason,omitempty"`
	// Missing are the permissions of the istio reader role the
	// credential's user lacks (get, list and watch of what istiod reads),
	// confirmed one by one by SelfSubjectAccessReview.
	Missing []Permission `json:"missing,omitempty"`
	// Unchecked says why permissions could not be checked ("" when they
	// were).
	Unchecked string `json:"unchecked,omitempty"`
}

// Summary says in a few words what trying the credential found.
func (t *CredentialTest) Summary() string {
	switch {
	case t == nil:
		return "not tried yet"
	case t.Skipped != "":
		return "not tried: " + t.Skipped
	case t.Failed != "":
		return "fails: " + t.Reason
	case t.Unchecked != "":
		return "server reached, CA verifies it, credential accepted; permissions not checked: " + t.Unchecked
	case len(t.Missing) > 0:
		return fmt.Sprintf("server reached, CA verifies it, credential accepted; %d permissions of istio's reader role missing", len(t.Missing))
	}
	return "server reached, CA verifies it, credential accepted, istio's reader role held"
}

// Works says whether every step passed and nothing is missing.
func (t *CredentialTest) Works() bool {
	return t != nil && t.Skipped == "" && t.Failed == "" && len(t.Missing) == 0 && t.Unchecked == ""
}

// RemoteSecret is one key of one remote secret: the kubeconfig istiod
// reads a cluster with, described, with when the Secret was last written
// and, once tried, the test of its credential.
type RemoteSecret struct {
	// Ref names the secret ("ns/name"), the cluster holding it (In) and the
	// key (the cluster ID it declares).
	Ref        SourceRef  `json:"ref"`
	Credential Credential `json:"credential"`
	// WrittenAt is when the Secret was last written (its managed fields'
	// newest time, else its creation).
	WrittenAt time.Time `json:"writtenAt,omitzero"`
	// Test is the credential tried from where meshscope runs (nil: not
	// tried yet).
	Test *CredentialTest `json:"test,omitempty"`
}

// RemoteSecretsOf returns the remote secrets that declare cluster id (a
// key whose source is one of its sources).
func (s *Snapshot) RemoteSecretsOf(id string) []RemoteSecret {
	c := s.ClusterByID(id)
	if c == nil {
		return nil
	}
	var out []RemoteSecret
	for _, rs := range s.RemoteSecrets {
		for _, src := range c.allSources() {
			if src == rs.Ref {
				out = append(out, rs)
				break
			}
		}
	}
	return out
}

// ClusterOfSecret is the ID of the cluster a remote secret's key stands
// for in the mesh ("" when none: a key istiod ignores, equal to its own
// cluster's ID).
func (s *Snapshot) ClusterOfSecret(ref SourceRef) string {
	for i := range s.Clusters {
		for _, src := range s.Clusters[i].allSources() {
			if src == ref {
				return s.Clusters[i].ID
			}
		}
	}
	return ""
}

// SubjectAccount is the service account "ns/name" of a subject
// "system:serviceaccount:NS:NAME" ("" for any other subject).
func SubjectAccount(subject string) string {
	rest, ok := strings.CutPrefix(subject, "system:serviceaccount:")
	if !ok {
		return ""
	}
	ns, name, ok := strings.Cut(rest, ":")
	if !ok {
		return ""
	}
	return ns + "/" + name
}
