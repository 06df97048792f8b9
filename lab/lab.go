package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Lab is a running lab. Its methods are safe for one test goroutine at a
// time; the mutations in mutate.go go through the real apiservers.
type Lab struct {
	cfg Config
	log io.Writer

	mu       sync.Mutex
	etcd     *proc
	clusters map[string]*Cluster
	istiods  []*Istiod
	kubelet  *proc
	dns      *proc // the lab's DNS server (dns.go), when started

	// Kubeconfig is the path of a kubeconfig with one context per cluster,
	// named after it, authenticated as the lab admin.
	Kubeconfig string
}

// Cluster is one running lab cluster.
type Cluster struct {
	ClusterSpec
	URL        string // https://127.0.0.1:PORT
	CAData     []byte // the apiserver's self-signed serving certificate
	AdminToken string `json:"-"`
	// ReadOnlyToken authenticates ReadOnlyUser: get/list/watch on what
	// meshscope reads, but not Secrets.
	ReadOnlyToken string `json:"-"`
	dir           string
	apiserver     *proc
	client        kubernetes.Interface
}

// Istiod is one running istiod.
type Istiod struct {
	IstiodSpec
	proc *proc
	// env is set by SetIstiodEnv: settings on top of the lab's;
	// meshNetworks by SetMeshNetworks: what its --networksConfig file holds.
	env          []string
	meshNetworks string
}

// XDSAddress is istiod's plaintext xDS address.
func (i *Istiod) XDSAddress() string { return fmt.Sprintf("127.0.0.1:%d", i.GRPC) }

// SecureXDSAddress is istiod's TLS xDS address.
func (i *Istiod) SecureXDSAddress() string { return fmt.Sprintf("127.0.0.1:%d", i.SecureGRPC) }

// HTTPURL is the base URL of istiod's /ready and /debug endpoints.
func (i *Istiod) HTTPURL() string { return fmt.Sprintf("http://127.0.0.1:%d", i.HTTP) }

// Start builds what is missing, starts etcd, the apiservers and istiod(s),
// seeds the fixture and waits until istiod reports every cluster synced.
// On failure it stops whatever it started.
func Start(ctx context.Context, cfg Config, log io.Writer) (_ *Lab, err error) {
	if log == nil {
		log = io.Discard
	}
	if cfg.Dir == "" {
		cfg.Dir = filepath.Join(cfg.Root, ".lab", "run")
	}
	if st, err := loadState(cfg.Dir); err == nil && st.anyAlive() {
		return nil, fmt.Errorf("a lab is already running from %s (stop it with make lab-down)", cfg.Dir)
	}
	if err := EnsureBinaries(cfg.Root, log); err != nil {
		return nil, err
	}
	if err := checkPorts(cfg.ports()); err != nil {
		return nil, err
	}
	// Every start is a clean lab: the fixture is the known state tests rely on.
	if err := os.RemoveAll(cfg.Dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	l := &Lab{cfg: cfg, log: log, clusters: map[string]*Cluster{}}
	defer func() {
		if err != nil {
			_ = l.Stop()
		}
	}()
	started := time.Now()
	if err := l.startEtcd(ctx); err != nil {
		return nil, err
	}
	if err := l.saveState(); err != nil {
		return nil, err
	}
	for _, spec := range cfg.Clusters {
		c, err := l.newCluster(spec)
		if err != nil {
			return nil, err
		}
		l.clusters[spec.Name] = c
		if err := l.startAPIServer(c); err != nil {
			return nil, err
		}
		// Record every PID as soon as it exists, so make lab-down can stop a
		// lab whose start failed half way.
		if err := l.saveState(); err != nil {
			return nil, err
		}
	}
	for _, spec := range cfg.Clusters {
		if err := l.waitAPIServer(ctx, l.clusters[spec.Name]); err != nil {
			return nil, err
		}
	}
	if err := l.writeKubeconfig(); err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "lab: apiservers ready in %s; seeding the fixture\n", time.Since(started).Round(time.Millisecond))
	if err := l.seed(ctx); err != nil {
		return nil, fmt.Errorf("lab fixture: %w", err)
	}
	if cfg.DNS {
		if err := l.startDNS(ctx); err != nil {
			return nil, err
		}
		if err := l.checkDNSNamespace(); err != nil {
			return nil, err
		}
	}
	if !cfg.DeferIstiods {
		if err := l.StartIstiods(ctx); err != nil {
			return nil, err
		}
		for _, rev := range cfg.Revisions {
			if _, err := l.AddRevision(ctx, cfg.Clusters[0].Name, rev, ""); err != nil {
				return nil, err
			}
		}
	}
	fmt.Fprintf(log, "lab: ready in %s\n", time.Since(started).Round(time.Millisecond))
	return l, nil
}

// StartIstiods starts the configured istiods and the kubelet stand-in that
// port-forwards to them, and waits until every istiod reports every lab
// cluster synced. Start calls it unless Config.DeferIstiods is set (a
// benchmark fills the clusters first); it is an error to call it twice.
func (l *Lab) StartIstiods(ctx context.Context) error {
	if len(l.istiods) > 0 {
		return errors.New("lab: istiods already started")
	}
	for _, spec := range l.cfg.istiods() {
		is := &Istiod{IstiodSpec: spec}
		l.istiods = append(l.istiods, is)
		if err := l.startIstiod(is); err != nil {
			return err
		}
		if err := l.saveState(); err != nil {
			return err
		}
	}
	for _, is := range l.istiods {
		if err := l.waitIstiod(ctx, is); err != nil {
			return err
		}
	}
	return l.startKubelet(ctx)
}

// Stop stops every process the lab started, istiod first, by PID.
func (l *Lab) Stop() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	if l.kubelet != nil {
		errs = append(errs, l.kubelet.stop())
	}
	for i := len(l.istiods) - 1; i >= 0; i-- {
		if l.istiods[i].proc != nil {
			errs = append(errs, l.istiods[i].proc.stop())
		}
	}
	for _, spec := range l.cfg.Clusters {
		if c := l.clusters[spec.Name]; c != nil && c.apiserver != nil {
			errs = append(errs, c.apiserver.stop())
		}
	}
	if l.dns != nil {
		errs = append(errs, l.dns.stop())
	}
	if l.etcd != nil {
		errs = append(errs, l.etcd.stop())
	}
	_ = os.Remove(statePath(l.cfg.Dir))
	return errors.Join(errs...)
}

// Cluster returns the running cluster by name (cluster1, cluster2).
func (l *Lab) Cluster(name string) *Cluster {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.clusters[name]
}

// Clusters returns the clusters in configuration order.
func (l *Lab) Clusters() []*Cluster {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*Cluster
	for _, spec := range l.cfg.Clusters {
		out = append(out, l.clusters[spec.Name])
	}
	return out
}

// Istiods returns the running istiods; the first is primary of cluster1.
func (l *Lab) Istiods() []*Istiod { return l.istiods }

// Dir is the lab's state folder (logs under Dir/logs).
func (l *Lab) Dir() string { return l.cfg.Dir }

// Client is an admin client-go clientset for the cluster.
func (c *Cluster) Client() kubernetes.Interface { return c.client }

// RESTConfig is an admin rest.Config for the cluster.
func (c *Cluster) RESTConfig() *rest.Config {
	return &rest.Config{
		Host:            c.URL,
		BearerToken:     c.AdminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.CAData},
		Timeout:         10 * time.Second,
		QPS:             200,
		Burst:           400,
	}
}

// ---- state file: lets `make lab-down` stop a detached lab by PID ----

type state struct {
	Kubeconfig string  `json:"kubeconfig"`
	Procs      []*proc `json:"procs"`
}

func statePath(dir string) string { return filepath.Join(dir, "state.json") }

func (l *Lab) saveState() error {
	st := state{Kubeconfig: l.Kubeconfig}
	if l.etcd != nil {
		st.Procs = append(st.Procs, l.etcd)
	}
	for _, spec := range l.cfg.Clusters {
		if c := l.clusters[spec.Name]; c != nil && c.apiserver != nil {
			st.Procs = append(st.Procs, c.apiserver)
		}
	}
	for _, is := range l.istiods {
		if is.proc != nil {
			st.Procs = append(st.Procs, is.proc)
		}
	}
	if l.kubelet != nil {
		st.Procs = append(st.Procs, l.kubelet)
	}
	if l.dns != nil {
		st.Procs = append(st.Procs, l.dns)
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(statePath(l.cfg.Dir), b, 0o644)
}

func loadState(dir string) (*state, error) {
	b, err := os.ReadFile(statePath(dir))
	if err != nil {
		return nil, err
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", statePath(dir), err)
	}
	return &st, nil
}

func (s *state) anyAlive() bool {
	for _, p := range s.Procs {
		if pidAlive(p.PID, p.Bin) {
			return true
		}
	}
	return false
}

// Down stops a lab started elsewhere (make lab) from its state file, newest
// process first. It is not an error when nothing runs.
func Down(dir string, log io.Writer) error {
	st, err := loadState(dir)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(log, "lab: nothing to stop (no %s)\n", statePath(dir))
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for i := len(st.Procs) - 1; i >= 0; i-- {
		p := st.Procs[i]
		if !pidAlive(p.PID, p.Bin) {
			continue
		}
		fmt.Fprintf(log, "lab: stopping %s (pid %d)\n", p.Name, p.PID)
		errs = append(errs, p.stop())
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return os.Remove(statePath(dir))
}

// Running says whether a lab started elsewhere (make lab) runs from dir,
// and where its kubeconfig is.
func Running(dir string) (kubeconfig string, ok bool) {
	st, err := loadState(dir)
	if err != nil || !st.anyAlive() {
		return "", false
	}
	return st.Kubeconfig, true
}
