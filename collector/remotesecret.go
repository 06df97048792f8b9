package collector

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/meshscope/meshscope/collector/internal/errs"
	"github.com/meshscope/meshscope/model"
)

// secretEntry is one data key of one remote secret, parsed. It holds the
// rest.Config (with credentials) but nothing in it is ever printed: only
// Server, ID, Ref and Problem reach a Snapshot.
type secretEntry struct {
	ID      string
	Ref     model.SourceRef // kind secret, "ns/name", In = holding cluster, Key
	Hash    [32]byte        // SHA-256 of the kubeconfig: unchanged → not reloaded
	Server  string          // normalized
	Config  *rest.Config
	Problem errs.Failure // non-empty Kind: the kubeconfig was refused or unparsable
	// Credential describes the kubeconfig (credential.go), secrets left
	// out; WrittenAt is when the Secret was last written.
	Credential model.Credential
	WrittenAt  time.Time
	// holderKey and holderName are the registry key and the context name
	// of the cluster the secret was read from (set by reconcile; never
	// cached).
	holderKey, holderName string
	// Order sorts entries: older secrets first, like istiod registering
	// them as they arrive; "later" duplicates get the error.
	Order string
}

// parseRemoteSecret returns one entry per data key, sorted by key.
func parseRemoteSecret(s *corev1.Secret, in string, allowInsecure bool) []secretEntry {
	keys := make([]string, 0, len(s.Data))
	for k := range s.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]secretEntry, 0, len(keys))
	ref := s.Namespace + "/" + s.Name
	for _, k := range keys {
		kc := s.Data[k]
		e := secretEntry{
			ID:    k,
			Ref:   model.SourceRef{Kind: model.SourceSecret, Name: ref, In: in, Key: k},
			Hash:  sha256.Sum256(kc),
			Order: s.CreationTimestamp.UTC().Format("20060102T150405") + "/" + in + "/" + ref + "/" + k,
		}
		e.Credential, e.WrittenAt = describeCredential(kc), writtenAt(s)
		cfg, err := newUntrustedRestConfig(kc, allowInsecure)
		if err != nil {
			e.Problem = errs.Classify(err, "")
		} else {
			e.Config = cfg
			e.Server = normalizeServer(cfg.Host)
		}
		out = append(out, e)
	}
	return out
}

// writtenAt is when a Secret was last written: the newest time of its
// managed fields (the watcher's transform keeps only that), else its
// creation.
func writtenAt(s *corev1.Secret) time.Time {
	t := s.CreationTimestamp.Time
	for _, f := range s.ManagedFields {
		if f.Time != nil && f.Time.After(t) {
			t = f.Time.Time
		}
	}
	return t.UTC()
}

// parseRemoteSecretCached is parseRemoteSecret that reuses the parse of a
// data key whose kubeconfig hash is unchanged (istiod does not reload an
// unchanged kubeconfig either). holder keys the cache by the cluster the
// secret was read from; Ref.In is left for the caller to fill.
func parseRemoteSecretCached(s *corev1.Secret, holder string, allowInsecure bool, cache map[string]secretEntry) []secretEntry {
	keys := make([]string, 0, len(s.Data))
	for k := range s.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ref := s.Namespace + "/" + s.Name
	out := make([]secretEntry, 0, len(keys))
	for _, k := range keys {
		ck := holder + "/" + ref + "/" + k
		if c, ok := cache[ck]; ok && c.Hash == sha256.Sum256(s.Data[k]) {
			out = append(out, c)
			continue
		}
		one := &corev1.Secret{ObjectMeta: s.ObjectMeta, Data: map[string][]byte{k: s.Data[k]}}
		e := parseRemoteSecret(one, holder, allowInsecure)[0]
		cache[ck] = e
		out = append(out, e)
	}
	return out
}

// newUntrustedRestConfig parses a kubeconfig taken from a remote secret the
// way istiod does (istio pkg/kube/util.go NewUntrustedRestConfig): it must
// load and validate, and unless allowInsecure it must not make meshscope run
// a program (exec plugin, non-OIDC auth provider) or read local files
// (tokenFile, client certificate or key files, a certificate-authority
// file). The error is a Problem whose sentence names the refused field but
// never a credential: every sentence passes through a errs.Redactor of the
// kubeconfig's secrets, whatever field a secret happens to equal.
func newUntrustedRestConfig(kubeconfig []byte, allowInsecure bool) (*rest.Config, error) {
	if len(kubeconfig) == 0 {
		return nil, errs.Newf(model.ErrBadKubeconfig, "bad kubeconfig: the remote secret's kubeconfig is empty")
	}
	raw, err := clientcmd.Load(kubeconfig)
	if err != nil {
		// The YAML error may quote a line of the input (and so a token):
		// say only that it does not parse.
		return nil, errs.Newf(model.ErrBadKubeconfig, "bad kubeconfig: the remote secret's kubeconfig cannot be parsed")
	}
	red := redactorFor(raw) // before sanitizing drops anything
	cfg, p := untrustedRestConfig(raw, allowInsecure)
	if p.Kind != "" {
		// Redact, then flatten and cut (a key body spans lines), then
		// redact what flattening joined and what the cut left of a secret.
		p.Reason = red.Clean(errs.OneLine(red.Clean(p.Reason)))
		return nil, p
	}
	return cfg, nil
}

func untrustedRestConfig(raw *clientcmdapi.Config, allowInsecure bool) (*rest.Config, errs.Failure) {
	// Refuse before validating: clientcmd.Validate itself reads the cert,
	// key and token files a kubeconfig names, which a remote secret must
	// not make us do (istiod validates first; we are stricter).
	if p := sanitizeKubeconfig(raw, allowInsecure); p.Kind != "" {
		return nil, p
	}
	if err := clientcmd.Validate(*raw); err != nil {
		return nil, errs.Newf(model.ErrBadKubeconfig, "bad kubeconfig: %s", validationSummary(raw))
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*raw, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, errs.Newf(model.ErrBadKubeconfig, "bad kubeconfig: %s", err.Error())
	}
	// client-go parses the server URL only when it builds a client, and
	// url.Parse quotes the whole URL, password included, in its error.
	if _, _, err := rest.DefaultServerUrlFor(cfg); err != nil {
		return nil, errs.Newf(model.ErrBadKubeconfig, "bad kubeconfig: the server of context %q is not a valid URL", raw.CurrentContext)
	}
	return cfg, errs.Failure{}
}

// validationSummary says what is wrong without echoing field values that
// could be credentials: clientcmd.Validate's messages name files and
// contexts, which is fine, but we rebuild a short sentence anyway.
func validationSummary(raw *clientcmdapi.Config) string {
	if len(raw.Contexts) == 0 {
		return "it has no contexts"
	}
	if raw.CurrentContext == "" {
		return "it has no current-context"
	}
	ctx, ok := raw.Contexts[raw.CurrentContext]
	if !ok {
		return fmt.Sprintf("current-context %q does not exist", raw.CurrentContext)
	}
	cl, ok := raw.Clusters[ctx.Cluster]
	if !ok {
		return fmt.Sprintf("cluster %q of context %q does not exist", ctx.Cluster, raw.CurrentContext)
	}
	if cl.Server == "" {
		return fmt.Sprintf("cluster %q has no server", ctx.Cluster)
	}
	if err := clientcmd.Validate(*raw); err != nil {
		return err.Error()
	}
	return "invalid"
}

// sanitizeKubeconfig refuses what istiod refuses (pkg/kube/util.go
// sanitizeKubeConfig: of the auth providers only oidc, which neither runs
// code nor reads files; no exec plugin, tokenFile, client-certificate or
// client-key file) in any user of the kubeconfig, used or not, plus a
// certificate-authority file, which istiod allows but which would make
// meshscope read a local file too. It rebuilds each AuthInfo from known
// fields so that a field added to client-go later is not acted on without
// review.
func sanitizeKubeconfig(raw *clientcmdapi.Config, allowInsecure bool) errs.Failure {
	const allow = " (--allow-insecure-kubeconfig to allow)"
	if !allowInsecure {
		for _, n := range slices.Sorted(maps.Keys(raw.Clusters)) {
			if raw.Clusters[n] != nil && raw.Clusters[n].CertificateAuthority != "" {
				return errs.Newf(model.ErrRefusedConfig, "refused certificate-authority file for cluster %q: a remote secret must not make meshscope read local files; use certificate-authority-data"+allow, n)
			}
		}
	}
	for _, n := range slices.Sorted(maps.Keys(raw.AuthInfos)) {
		a := raw.AuthInfos[n]
		if a == nil {
			continue
		}
		if !allowInsecure {
			switch {
			case a.Exec != nil:
				return errs.Newf(model.ErrRefusedConfig, "refused exec plugin: user %q runs the program %q; a remote secret must not make meshscope run programs"+allow, n, a.Exec.Command)
			case a.AuthProvider != nil && a.AuthProvider.Name != "oidc":
				return errs.Newf(model.ErrRefusedConfig, "refused auth provider %q for user %q: only oidc is allowed in a remote secret"+allow, a.AuthProvider.Name, n)
			case a.TokenFile != "":
				return errs.Newf(model.ErrRefusedConfig, "refused tokenFile for user %q: a remote secret must not make meshscope read local files"+allow, n)
			case a.ClientCertificate != "":
				return errs.Newf(model.ErrRefusedConfig, "refused client-certificate file for user %q: a remote secret must not make meshscope read local files"+allow, n)
			case a.ClientKey != "":
				return errs.Newf(model.ErrRefusedConfig, "refused client-key file for user %q: a remote secret must not make meshscope read local files"+allow, n)
			}
		}
		raw.AuthInfos[n] = &clientcmdapi.AuthInfo{
			ClientCertificate:     a.ClientCertificate,
			ClientCertificateData: a.ClientCertificateData,
			ClientKey:             a.ClientKey,
			ClientKeyData:         a.ClientKeyData,
			Token:                 a.Token,
			TokenFile:             a.TokenFile,
			Impersonate:           a.Impersonate,
			ImpersonateGroups:     a.ImpersonateGroups,
			ImpersonateUserExtra:  a.ImpersonateUserExtra,
			Username:              a.Username,
			Password:              a.Password,
			AuthProvider:          a.AuthProvider,
			Exec:                  a.Exec,
		}
	}
	return errs.Failure{}
}

// redactorFor lists every credential string in a kubeconfig: tokens,
// passwords (of users and in server and proxy URLs), key and certificate
// bodies, auth-provider settings, and the arguments and environment of exec
// plugins, which commonly carry tokens.
func redactorFor(raw *clientcmdapi.Config) errs.Redactor {
	var r errs.Redactor
	for _, a := range raw.AuthInfos {
		if a == nil {
			continue
		}
		r = append(r, a.Token, a.Password, string(a.ClientKeyData), string(a.ClientCertificateData))
		if a.AuthProvider != nil {
			for _, v := range a.AuthProvider.Config {
				r = append(r, v)
			}
		}
		if a.Exec != nil {
			r = append(r, a.Exec.Args...)
			for _, e := range a.Exec.Env {
				r = append(r, e.Value)
			}
		}
	}
	for _, c := range raw.Clusters {
		if c != nil {
			r = append(r, urlPassword(c.Server), urlPassword(c.ProxyURL))
		}
	}
	return r
}

// urlPassword is the password of a URL's user info ("https://u:PASS@host"),
// found without url.Parse so that a URL too broken to parse is covered too.
func urlPassword(s string) string {
	_, rest, ok := strings.Cut(s, "://")
	if !ok {
		rest = s
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return ""
	}
	_, pass, _ := strings.Cut(rest[:at], ":")
	return pass
}

// redactorForConfig lists the credential strings of a rest.Config.
func redactorForConfig(c *rest.Config) errs.Redactor {
	if c == nil {
		return nil
	}
	return errs.Redactor{c.BearerToken, c.Password, string(c.KeyData), string(c.CertData), urlPassword(c.Host)}
}
