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
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/demo"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/live"
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
	istiodEnv               []string
	gatewayDNSServers       []string
}

func (o *meshOptions) addFlags(f *pflag.FlagSet) {
	f.BoolVar(&o.allContexts, "all-contexts", false, "read every context of the kubeconfig")
	f.StringVar(&o.istioNamespace, "istio-namespace", "istio-system", "istiod's namespace: remote secrets, the network label, ConfigMap istio")
	f.StringVar(&o.revision, "revision", "", "istiod's revision (or revision tag) to predict for, in every primary where it runs (elsewhere the primary's default revision): mesh config and meshNetworks from ConfigMap istio-REVISION, the Istio config it reads, and the istiod pod labelled istio.io/rev=REVISION to port-forward to")
	f.BoolVar(&o.remoteSecrets, "remote-secrets", true, "also read the clusters declared by remote secrets (istio/multiCluster=true)")
	f.StringArrayVar(&o.clusterIDs, "cluster-id", nil, "cluster ID of a context, CONTEXT=ID (repeatable)")
	f.DurationVar(&o.syncTimeout, "sync-timeout", collector.DefaultSyncTimeout, "how long a cluster may take to sync before it is shown as timeout")
	f.BoolVar(&o.allowInsecureKubeconfig, "allow-insecure-kubeconfig", false, "accept remote-secret kubeconfigs with exec plugins, token files or cert/key files")
	f.Int64Var(&o.seed, "seed", 1, "with --demo: seed of the demo mesh (pod names, IPs, churn)")
	f.StringArrayVar(&o.istiodEnv, "istiod-env", nil, "an istiod setting meshscope predicts with, [CLUSTER=]KEY=VALUE (repeatable): PILOT_ENABLE_AMBIENT, AMBIENT_ENABLE_MULTI_NETWORK or RESOLVE_HOSTNAME_GATEWAYS for the istiod of CLUSTER or every one; wins over the istiod pod's env (read by default)")
	f.StringArrayVar(&o.gatewayDNSServers, "gateway-dns-server", nil, "DNS server HOST:PORT to resolve east-west gateway names with (repeatable, asked in order), instead of those of /etc/resolv.conf; istiod asks those of its own resolv.conf")
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

// openMesh opens a live session on the demo mesh (--demo) or on the given
// kube contexts and their remote secrets. churn turns on the demo's live
// changes (for the UI and watch; not for one-shot commands). Flags that do
// not parse, and a kubeconfig or context that cannot be used, are bad
// input (exit 2).
func openMesh(ctx context.Context, g *globalOptions, o *meshOptions, churn bool) (*live.Session, error) {
	targets, err := parseXDSAddresses(g.XDSAddress)
	if err != nil {
		return nil, badInput(err)
	}
	debug, err := parseTargets("--istiod-debug-address", o.istiodDebug)
	if err != nil {
		return nil, badInput(err)
	}
	var env []model.IstiodEnv
	for _, v := range o.istiodEnv {
		e, err := model.ParseIstiodEnv(v)
		if err != nil {
			return nil, badInput(err)
		}
		env = append(env, e)
	}
	lo := live.Options{ControlPlanes: targets, IstiodDebug: debug}
	if g.Demo {
		if len(env) > 0 {
			return nil, badInput(fmt.Errorf("--istiod-env: the demo's control plane has fixed settings (ambient multi-network on); give it against a real mesh"))
		}
		d, err := demo.Start(ctx, demo.Options{Seed: o.seed, Churn: churn, Logger: slog.Default()})
		if err != nil {
			return nil, fmt.Errorf("demo: %w", err)
		}
		lo.InProcess = d
		return live.Open(ctx, lo)
	}
	ids, err := parseClusterIDs(o.clusterIDs)
	if err != nil {
		return nil, badInput(err)
	}
	meshFiles, err := parseMeshConfigFiles(o.meshConfigFiles)
	if err != nil {
		return nil, badInput(err)
	}
	lo.Collector = collector.Options{
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
		IstiodEnv:               env,
		GatewayDNSServers:       o.gatewayDNSServers,
	}
	s, err := live.Open(ctx, lo)
	if err != nil {
		// The collector fails to start only on what it was given: the
		// kubeconfig, a context, its options.
		return nil, badInput(noClusterHint(err))
	}
	return s, nil
}

// noClusterHint adds the way out to "no kubeconfig / no context" errors.
func noClusterHint(err error) error {
	return fmt.Errorf("%w\n(no cluster at hand? try the built-in demo mesh: meshscope demo, or --demo on any command)", err)
}

// withSettledMesh is the shape of every one-shot command: open the mesh,
// wait until it settles (Ctrl-C interrupts), run fn, close. A wait past
// progressAfter is shown on stderr when it is a terminal: the clusters'
// sync, then awaiting (what fn waits for: istiod, its streams).
func withSettledMesh(cmd *cobra.Command, g *globalOptions, o *meshOptions, awaiting string, fn func(ctx context.Context, m *live.Session, snap *model.Snapshot) error) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	m, err := openMesh(ctx, g, o, false)
	if err != nil {
		return err
	}
	defer m.Close()
	p := startProgress(cmd.ErrOrStderr(), func() string { return syncStatus(m.Registry().Snapshot()) })
	defer p.stop()
	cmd.SetOut(p.stopping(cmd.OutOrStdout()))
	snap, err := m.Settle(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return errInterrupted
		}
		return err
	}
	if why := snap.RevisionNotRunning(o.revision); why != "" {
		return outcome{incomplete: snap.Unread()}.fail(fmt.Errorf("--revision %s: %s", o.revision, why))
	}
	if awaiting != "" {
		p.set(func() string { return syncStatus(snap) + "; " + awaiting })
	}
	err = fn(ctx, m, snap)
	if err != nil && ctx.Err() != nil {
		return errInterrupted
	}
	return err
}

// checkOutput validates an -o value.
func checkOutput(got string, allowed ...string) error {
	if slices.Contains(allowed, got) {
		return nil
	}
	return badInput(fmt.Errorf("--output %q: want %s or %s", got, strings.Join(allowed[:len(allowed)-1], ", "), allowed[len(allowed)-1]))
}

// writeJSON writes v as indented JSON, the -o json of every command.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
