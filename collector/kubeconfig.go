package collector

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sort"
	"strings"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshscope/meshscope/collector/internal/errs"
)

// Source is one cluster given to the Registry directly: a kube context
// (loaded by LoadContexts) or, for tests and the demo, a ready client.
type Source struct {
	// Name is the context name; it is the cluster ID unless
	// Options.ClusterIDs or another cluster's remote secret names it.
	Name string
	// Server is the API server URL. It identifies the cluster: a remote
	// secret pointing at the same URL is the same cluster. Filled from
	// Config.Host when empty.
	Server string
	// Config is used to build a client with Options.NewClient when Client
	// is nil.
	Config *rest.Config
	// Client, when set, is used as is (e.g. a fake clientset).
	Client kubernetes.Interface
	// Dynamic, when set, reads Istio config (DestinationRules,
	// PeerAuthentications) instead of a client built from Config.
	Dynamic dynamic.Interface
}

// loadContexts reads a kubeconfig the way kubectl does — the explicit path,
// else $KUBECONFIG (merged), else ~/.kube/config — and returns one Source per
// requested context: the given names, every context when all is true, or
// the current context when neither is given. A missing context or a broken
// kubeconfig is an error that names the problem.
func loadContexts(kubeconfig string, contexts []string, all bool) ([]Source, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	if err := CheckKubeconfig(kubeconfig); err != nil {
		return nil, err
	}
	raw, err := rules.Load()
	if err != nil {
		return nil, fmt.Errorf("cannot load kubeconfig: %s", errs.OneLine(err.Error()))
	}
	names := contexts
	switch {
	case all:
		names = names[:0:0]
		for n := range raw.Contexts {
			names = append(names, n)
		}
		sort.Strings(names)
		if len(names) == 0 {
			return nil, fmt.Errorf("kubeconfig %s has no contexts", describeKubeconfig(rules))
		}
	case len(names) == 0:
		if raw.CurrentContext == "" {
			return nil, fmt.Errorf("kubeconfig %s has no current context; pass --context", describeKubeconfig(rules))
		}
		names = []string{raw.CurrentContext}
	}
	var out []Source
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		if _, ok := raw.Contexts[n]; !ok {
			return nil, fmt.Errorf("context %q not found in kubeconfig %s", n, describeKubeconfig(rules))
		}
		cc := clientcmd.NewNonInteractiveClientConfig(*raw, n, &clientcmd.ConfigOverrides{}, rules)
		cfg, err := cc.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("context %q: %s", n, errs.OneLine(err.Error()))
		}
		out = append(out, Source{Name: n, Server: normalizeServer(cfg.Host), Config: cfg})
	}
	return out, nil
}

// CheckKubeconfig says where meshscope looked when no kubeconfig file is
// there at all — the explicit path, else $KUBECONFIG, else
// ~/.kube/config — where client-go would load an empty config and "no
// current context" would hide the cause. It reads no file.
func CheckKubeconfig(explicit string) error {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = explicit
	if rules.ExplicitPath != "" {
		if _, err := os.Stat(rules.ExplicitPath); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("no kubeconfig: %s (--kubeconfig) does not exist", rules.ExplicitPath)
		}
		return nil
	}
	for _, p := range rules.Precedence {
		if _, err := os.Stat(p); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return nil // there is one (or something meshscope cannot stat: Load says what)
		}
	}
	if env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); env != "" {
		return fmt.Errorf("no kubeconfig: $KUBECONFIG (%s) names no file that exists (%s is not read while it is set); give --kubeconfig FILE", env, clientcmd.RecommendedHomeFile)
	}
	return fmt.Errorf("no kubeconfig: $KUBECONFIG is not set and %s does not exist; give --kubeconfig FILE", clientcmd.RecommendedHomeFile)
}

func describeKubeconfig(rules *clientcmd.ClientConfigLoadingRules) string {
	if rules.ExplicitPath != "" {
		return rules.ExplicitPath
	}
	if len(rules.Precedence) > 0 {
		return strings.Join(rules.Precedence, ":")
	}
	return "(default)"
}

// normalizeServer makes the spellings of one API server URL compare equal,
// so a context and a remote secret that reach the same server are one
// cluster: "https://API.example.com:443/", "api.example.com" and
// "https://api.example.com" are the same; scheme and host are
// case-insensitive, the default port of the scheme is implied, a trailing
// slash means nothing. The path is kept as written (API servers behind a
// path-routing proxy differ by it).
func normalizeServer(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return strings.ToLower(strings.TrimRight(s, "/"))
	}
	scheme := strings.ToLower(u.Scheme)
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // IPv6
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host + strings.TrimRight(u.EscapedPath(), "/")
}
