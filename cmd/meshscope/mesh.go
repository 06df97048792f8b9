package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/demo"
	"github.com/meshscope/meshscope/xdsclient"
)

// meshOptions are the flags of every command that reads the mesh.
type meshOptions struct {
	allContexts             bool
	istioNamespace          string
	revision                string
	remoteSecrets           bool
	clusterIDs              []string
	syncTimeout             time.Duration
	allowInsecureKubeconfig bool
	seed                    int64
	istiodDebug             string
	meshConfigFiles         []string
}

func (o *meshOptions) addFlags(f *pflag.FlagSet) {
	f.BoolVar(&o.allContexts, "all-contexts", false, "read every context of the kubeconfig")
	f.StringVar(&o.istioNamespace, "istio-namespace", "istio-system", "istiod's namespace: remote secrets, the network label, ConfigMap istio")
	f.StringVar(&o.revision, "revision", "", "istiod's revision: meshNetworks from ConfigMap istio-REVISION, and the istiod pod labelled istio.io/rev=REVISION to port-forward to")
	f.BoolVar(&o.remoteSecrets, "remote-secrets", true, "also read the clusters declared by remote secrets (istio/multiCluster=true)")
	f.StringArrayVar(&o.clusterIDs, "cluster-id", nil, "cluster ID of a context, CONTEXT=ID (repeatable)")
	f.DurationVar(&o.syncTimeout, "sync-timeout", 30*time.Second, "how long a cluster may take to sync before it is shown as timeout")
	f.BoolVar(&o.allowInsecureKubeconfig, "allow-insecure-kubeconfig", false, "accept remote-secret kubeconfigs with exec plugins, token files or cert/key files")
	f.Int64Var(&o.seed, "seed", 1, "with --demo: seed of the demo mesh (pod names, IPs, churn)")
	f.StringArrayVar(&o.meshConfigFiles, "mesh-config", nil, "mesh config file istiod reads instead of ConfigMap istio (its --meshConfig), FILE or CLUSTER=FILE per control plane (repeatable); followed as it changes")
}

// parseMeshConfigFiles reads --mesh-config values: FILE (every control
// plane) or CLUSTER=FILE.
func parseMeshConfigFiles(vals []string) (map[string]string, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, v := range vals {
		cluster, file := "", v
		if k, f, ok := strings.Cut(v, "="); ok {
			cluster, file = strings.TrimSpace(k), strings.TrimSpace(f)
			if cluster == "" {
				return nil, fmt.Errorf("--mesh-config %q: empty cluster before '='", v)
			}
		}
		if file == "" {
			return nil, fmt.Errorf("--mesh-config %q: no file", v)
		}
		if _, dup := out[cluster]; dup {
			return nil, fmt.Errorf("--mesh-config: %s given twice", orEvery(cluster))
		}
		out[cluster] = file
	}
	return out, nil
}

func orEvery(cluster string) string {
	if cluster == "" {
		return "a file for every control plane"
	}
	return "cluster " + cluster
}

// addIstiodFlag adds --istiod-debug-address, for the commands that compare
// istiod's own view with meshscope's (doctor, the UI).
func (o *meshOptions) addIstiodFlag(f *pflag.FlagSet) {
	f.StringVar(&o.istiodDebug, "istiod-debug-address", "", "istiod's HTTP debug address (e.g. 127.0.0.1:8080 through a port-forward), or CLUSTER=HOST:PORT,... per control plane: compare istiod's own view (clusterz, networkz) with meshscope's")
}

// mesh is an open mesh: a running collector and the control planes to ask.
type mesh struct {
	Registry *collector.Registry
	// ControlPlanes are the istiods to impersonate proxies against; empty
	// means "port-forward to the istiod pod of each context".
	ControlPlanes []XDSTarget
	// IstiodDebug are istiod HTTP debug addresses (--istiod-debug-address).
	IstiodDebug []XDSTarget
	Demo        *demo.Demo
	syncTimeout time.Duration
	stop        func()

	// Without --xds-address, the first stream port-forwards to the istiod
	// pod of the first context (as istioctl does), once; so does the first
	// read of istiod's debug view without --istiod-debug-address.
	kube     *watchKube
	istiodNS string
	// runCtx lives until Close: port-forwards outlive the callers that
	// start them, and end (or stop trying) with the mesh.
	runCtx   context.Context
	pfMu     sync.Mutex
	forwards map[int]*istiodForward // by istiod's port
}

// istiodForward is one port-forward to the istiod pod. Once up it heals
// by itself (xdsclient.PortForward); a failed attempt is remembered and
// tried again after forwardRetry (istiod not ready yet, RBAC fixed).
type istiodForward struct {
	mu       sync.Mutex
	pf       *xdsclient.PortForward
	target   XDSTarget
	err      error
	failedAt time.Time
}

// istiod's ports meshscope forwards to.
const (
	istiodXDSPort   = 15010
	istiodDebugPort = 8080
)

// forwardRetry is how long a failed port-forward is not tried again (a
// variable for tests).
var forwardRetry = 15 * time.Second

// openMesh starts the collector on the demo mesh (--demo) or on the given
// kube contexts and their remote secrets. churn turns on the demo's live
// changes (for the UI and watch; not for one-shot commands).
func openMesh(ctx context.Context, g *globalOptions, o *meshOptions, churn bool) (*mesh, error) {
	targets, err := parseXDSAddresses(g.XDSAddress)
	if err != nil {
		return nil, err
	}
	debug, err := parseTargets("--istiod-debug-address", o.istiodDebug)
	if err != nil {
		return nil, err
	}
	if g.Demo {
		d, err := demo.Start(ctx, demo.Options{Seed: o.seed, Churn: churn, Logger: slog.Default()})
		if err != nil {
			return nil, fmt.Errorf("demo: %w", err)
		}
		if len(targets) == 0 {
			targets = []XDSTarget{{Cluster: d.ControlPlane, Address: d.XDSAddress}}
		}
		return &mesh{Registry: d.Registry, ControlPlanes: targets, IstiodDebug: debug, Demo: d, syncTimeout: 5 * time.Second, stop: d.Stop}, nil
	}
	ids, err := parseClusterIDs(o.clusterIDs)
	if err != nil {
		return nil, err
	}
	meshFiles, err := parseMeshConfigFiles(o.meshConfigFiles)
	if err != nil {
		return nil, err
	}
	reg, err := collector.NewRegistry(collector.Options{
		Kubeconfig:              g.Kubeconfig,
		Contexts:                g.Contexts,
		AllContexts:             o.allContexts,
		SystemNamespace:         o.istioNamespace,
		Revision:                o.revision,
		DisableRemoteSecrets:    !o.remoteSecrets,
		ClusterIDs:              ids,
		SyncTimeout:             o.syncTimeout,
		AllowInsecureKubeconfig: o.allowInsecureKubeconfig,
		MeshConfigFiles:         meshFiles,
	})
	if err != nil {
		return nil, noClusterHint(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = reg.Run(runCtx); close(done) }()
	m := &mesh{Registry: reg, ControlPlanes: targets, IstiodDebug: debug, syncTimeout: o.syncTimeout, runCtx: runCtx,
		kube: &watchKube{kubeconfig: g.Kubeconfig, contexts: g.Contexts, revision: o.revision}, istiodNS: o.istioNamespace}
	m.stop = func() {
		cancel()
		<-done
		m.pfMu.Lock()
		defer m.pfMu.Unlock()
		for _, f := range m.forwards {
			f.mu.Lock()
			f.pf.Close()
			f.mu.Unlock()
		}
	}
	return m, nil
}

// portForwarded port-forwards to a port of the istiod pod (once per port,
// shared by every caller) and returns its local address.
func (m *mesh) portForwarded(ctx context.Context, port int) (XDSTarget, error) {
	m.pfMu.Lock()
	if m.forwards == nil {
		m.forwards = map[int]*istiodForward{}
	}
	f := m.forwards[port]
	if f == nil {
		f = &istiodForward{}
		m.forwards[port] = f
	}
	m.pfMu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pf != nil || (f.err != nil && time.Since(f.failedAt) < forwardRetry) {
		return f.target, f.err
	}
	if m.kube == nil {
		return XDSTarget{}, fmt.Errorf("no istiod address: give --xds-address")
	}
	ns := m.istiodNS
	if ns == "" {
		ns = xdsclient.DefaultSystemNamespace
	}
	// An attempt gives up when the caller or the mesh is done; once up,
	// the forward serves every caller until Close, whatever their contexts.
	actx, cancel := context.WithCancel(m.runCtx)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	pf, t, err := m.kube.portForward(actx, ns, port, 15*time.Second)
	if err != nil {
		f.err, f.failedAt = fmt.Errorf("port-forwarding to istiod's port %d failed: %w", port, err), time.Now()
		return XDSTarget{}, f.err
	}
	f.pf, f.target, f.err = pf, XDSTarget{Cluster: m.clusterIDOfContext(t.cluster), Address: t.address}, nil
	slog.Info("port-forwarding to istiod", "pod", pf.Pod, "port", port, "local", pf.Address)
	return f.target, nil
}

// clusterIDOfContext names the cluster of a kube context by its ID (the
// context name may be an EKS ARN while istiod calls the cluster cluster1).
func (m *mesh) clusterIDOfContext(kctx string) string {
	for _, c := range m.Registry.Snapshot().Clusters {
		if c.Source.Kind == collector.SourceContext && c.Source.Name == kctx {
			return c.ID
		}
	}
	return kctx
}

// forwardsToIstiod says whether meshscope reaches istiod by port-forward:
// a real mesh (not the demo) and no --xds-address.
func (m *mesh) forwardsToIstiod() bool {
	return m.Demo == nil && len(m.ControlPlanes) == 0 && m.kube != nil
}

// readsIstiodView says whether istiodDebugTargets can give anything.
func (m *mesh) readsIstiodView() bool { return len(m.IstiodDebug) > 0 || m.forwardsToIstiod() }

// istiodDebugTargets are the istiod debug endpoints to read istiod's own
// view from: --istiod-debug-address, else — when meshscope reaches istiod
// by port-forward anyway (no --xds-address) — a port-forward to the istiod
// pod's 8080. With --xds-address only, istiod's HTTP address is unknown:
// none. The error says why the port-forward failed.
func (m *mesh) istiodDebugTargets(ctx context.Context) ([]XDSTarget, error) {
	if len(m.IstiodDebug) > 0 || !m.forwardsToIstiod() {
		return m.IstiodDebug, nil
	}
	t, err := m.portForwarded(ctx, istiodDebugPort)
	if err != nil {
		return nil, err
	}
	return []XDSTarget{t}, nil
}

// settle waits until every cluster is synced, timed out or in error. On
// the outer deadline it returns what there is: unsettled clusters show
// their state.
func (m *mesh) settle(ctx context.Context) (*collector.Snapshot, error) {
	// The margin covers clusters found late through remote secrets.
	waitCtx, cancel := context.WithTimeout(ctx, 2*m.syncTimeout+5*time.Second)
	defer cancel()
	snap, err := m.Registry.WaitSettled(waitCtx)
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("interrupted")
	}
	if snap == nil {
		snap = m.Registry.Snapshot()
	}
	return snap, nil
}

func (m *mesh) Close() { m.stop() }

// noClusterHint adds the way out to "no kubeconfig / no context" errors.
func noClusterHint(err error) error {
	return fmt.Errorf("%w\n(no cluster at hand? try the built-in demo mesh: meshscope demo, or --demo on any command)", err)
}

// withSettledMesh is the shape of every one-shot command: open the mesh,
// wait until it settles (Ctrl-C interrupts), run fn, close.
func withSettledMesh(cmd *cobra.Command, g *globalOptions, o *meshOptions, fn func(ctx context.Context, m *mesh, snap *collector.Snapshot) error) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	m, err := openMesh(ctx, g, o, false)
	if err != nil {
		return err
	}
	defer m.Close()
	snap, err := m.settle(ctx)
	if err != nil {
		return err
	}
	return fn(ctx, m, snap)
}

// checkOutput validates an -o value.
func checkOutput(got string, allowed ...string) error {
	if slices.Contains(allowed, got) {
		return nil
	}
	return fmt.Errorf("--output %q: want %s or %s", got, strings.Join(allowed[:len(allowed)-1], ", "), allowed[len(allowed)-1])
}

// controlPlaneFor picks the istiod serving a viewpoint: the one given for
// its cluster, else the only (or first) one given; with none given, a
// port-forward to the istiod pod of the first context.
func (m *mesh) controlPlaneFor(ctx context.Context, vp xdsclient.Viewpoint) (XDSTarget, error) {
	if len(m.ControlPlanes) == 0 {
		t, err := m.portForwarded(ctx, istiodXDSPort)
		if err != nil {
			return t, fmt.Errorf("no --xds-address, and %w", err)
		}
		return t, nil
	}
	want := vp.ControlPlane
	if want == "" {
		want = vp.Cluster
	}
	for _, t := range m.ControlPlanes {
		if t.Cluster == want {
			return t, nil
		}
	}
	t := m.ControlPlanes[0]
	if t.Cluster == "" {
		t.Cluster = t.Address
	}
	return t, nil
}

// writeJSON writes v as indented JSON, the -o json of every command.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
