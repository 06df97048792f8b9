package collector

import (
	"context"
	"log/slog"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/meshscope/meshscope/collector/gatewaydns"
	"github.com/meshscope/meshscope/model"
)

// Options configure a Registry. The zero value reads the current kube
// context and its remote secrets, like istiod reads its own cluster and
// the secrets in it.
type Options struct {
	// Kubeconfig is an explicit kubeconfig path; empty means $KUBECONFIG
	// (merged), else ~/.kube/config.
	Kubeconfig string
	// Contexts to read; empty means the current context.
	Contexts []string
	// AllContexts reads every context of the kubeconfig.
	AllContexts bool
	// Sources, when set, replaces the kubeconfig: clusters given directly
	// (tests and the demo use fake clientsets here).
	Sources []Source

	// SystemNamespace is istiod's namespace (remote secrets, the network
	// label, ConfigMap istio). Default "istio-system".
	SystemNamespace string
	// Revision is istiod's revision (its REVISION): istiod reads
	// meshNetworks from ConfigMap "istio-<revision>" instead of "istio"
	// ("" and "default" mean "istio").
	Revision string
	// DisableRemoteSecrets stops reading remote secrets from the context
	// clusters (they are read by default, like istiod).
	DisableRemoteSecrets bool
	// ClusterIDs maps a context name to its cluster ID (--cluster-id).
	ClusterIDs map[string]string
	// AllowInsecureKubeconfig accepts remote-secret kubeconfigs with exec
	// plugins, token files, cert/key files and non-OIDC auth providers
	// (istiod's PILOT_INSECURE_MULTICLUSTER_KUBECONFIG_OPTIONS).
	AllowInsecureKubeconfig bool
	// MeshConfigFiles are mesh config files to read instead of ConfigMap
	// istio, for an istiod that reads --meshConfig from a file: by config
	// cluster ID, or "" for every context cluster. The files are read again
	// when they change.
	MeshConfigFiles map[string]string
	// DisableNodes does not watch Nodes (no localities).
	DisableNodes bool

	// SyncTimeout marks a cluster "timeout" when its informers have not
	// synced by then. Default 30s (istiod's PILOT_REMOTE_CLUSTER_TIMEOUT).
	SyncTimeout time.Duration
	// HealthInterval and HealthTimeout drive the API server probe that
	// takes a cluster out of "synced" when its API server stops answering.
	// Defaults 3s and 2s.
	HealthInterval time.Duration
	HealthTimeout  time.Duration
	// PublishInterval is the least time between two snapshots; a change
	// after a quiet period is published at once. Default 50ms.
	PublishInterval time.Duration
	// IstiodEnv states istiod settings (--istiod-env); they win over what
	// the istiod pods' env says.
	IstiodEnv []model.IstiodEnv
	// GatewayDNSServers are the DNS servers (host:port) gateway names are
	// resolved with, instead of those of /etc/resolv.conf (--gateway-dns-server).
	// GatewayResolver, when set, answers instead of any server (tests). With
	// neither, names are resolved from /etc/resolv.conf when the clusters
	// come from a kubeconfig, and not at all for given Sources (tests and the
	// demo must not ask a real DNS server).
	GatewayDNSServers []string
	GatewayResolver   gatewaydns.Resolver

	// NewClient builds a client for a cluster from its rest.Config (both
	// for contexts and for remote-secret kubeconfigs). Default
	// kubernetes.NewForConfig. The demo maps its fake server URLs to fake
	// clientsets here.
	NewClient func(id string, cfg *rest.Config) (kubernetes.Interface, error)
	// NewDynamicClient builds the client that reads Istio config
	// (DestinationRules, PeerAuthentications, ServiceEntries and
	// WorkloadEntries; only WorkloadEntries in clusters from remote
	// secrets) and Gateway API Gateways (every cluster). Default
	// dynamic.NewForConfig when NewClient is the default too; a caller that
	// maps clusters to clients of its own (fakes) gets none unless it sets
	// this. Sources with a ready Client and no Config get none unless
	// Source.Dynamic is set.
	NewDynamicClient func(id string, cfg *rest.Config) (dynamic.Interface, error)
	// Probe checks that a cluster's API server answers. Default: GET
	// /version through the discovery REST client, or ServerVersion() on
	// clients without one (fakes; a reactor on verb "get", resource
	// "version" makes a fake fail).
	Probe func(ctx context.Context, c kubernetes.Interface) error

	// TestCredential tries a remote secret's kubeconfig from where
	// meshscope runs, read-only (reach, TLS, the reader role's
	// permissions by reviews that persist nothing). Default the real test
	// (credtest.go) when the clusters come from a kubeconfig and NewClient
	// is the default; a caller that gives its clusters (Sources) or maps
	// them to clients of its own (fakes behind made-up URLs: tests, the
	// demo) gets a test that tries nothing — it must not dial or resolve
	// made-up names — unless it sets this.
	TestCredential func(ctx context.Context, cfg *rest.Config, ns string) model.CredentialTest
	// CredentialRetest is how often an unchanged remote secret is tried
	// again. Default defaultCredentialRetest.
	CredentialRetest time.Duration
	// Logger receives debug and info logs (never credentials). Default slog.Default().
	Logger *slog.Logger
}

// DefaultSyncTimeout is how long a cluster may take to sync before it is
// shown as timeout (Options.SyncTimeout, --sync-timeout).
const DefaultSyncTimeout = 30 * time.Second

func (o *Options) setDefaults() {
	if o.SystemNamespace == "" {
		o.SystemNamespace = "istio-system"
	}
	if o.SyncTimeout <= 0 {
		o.SyncTimeout = DefaultSyncTimeout
	}
	if o.HealthInterval <= 0 {
		o.HealthInterval = 3 * time.Second
	}
	if o.HealthTimeout <= 0 {
		o.HealthTimeout = 2 * time.Second
	}
	if o.PublishInterval <= 0 {
		o.PublishInterval = 50 * time.Millisecond
	}
	if o.NewDynamicClient == nil {
		o.NewDynamicClient = func(_ string, cfg *rest.Config) (dynamic.Interface, error) {
			return dynamic.NewForConfig(cfg)
		}
		if o.NewClient != nil {
			// The caller builds the clients (fake clusters behind made-up
			// URLs): a real dynamic client would only fail to connect.
			o.NewDynamicClient = func(string, *rest.Config) (dynamic.Interface, error) { return nil, nil }
		}
	}
	if o.TestCredential == nil {
		o.TestCredential = func(ctx context.Context, cfg *rest.Config, ns string) model.CredentialTest {
			return testCredential(ctx, cfg, ns, time.Now())
		}
		if o.NewClient != nil || len(o.Sources) > 0 {
			o.TestCredential = func(context.Context, *rest.Config, string) model.CredentialTest {
				return model.CredentialTest{At: time.Now(), Skipped: "not tried: the clusters are given by the caller"}
			}
		}
	}
	if o.CredentialRetest <= 0 {
		o.CredentialRetest = defaultCredentialRetest
	}
	if o.NewClient == nil {
		o.NewClient = func(_ string, cfg *rest.Config) (kubernetes.Interface, error) {
			return kubernetes.NewForConfig(cfg)
		}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}
