package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/istiod"
	"github.com/meshscope/meshscope/session/live"
	"github.com/meshscope/meshscope/xdsclient"
)

func init() { subcommands = append(subcommands, newWatchCmd) }

type watchOptions struct {
	From        []string
	AsPod       []string
	Mode        string
	Resources   []string
	Service     string
	Port        int32
	Listeners   bool
	Output      string
	TLS         bool
	CAFile      string
	TokenFile   string
	ServerName  string
	IstiodNS    string
	Revision    string
	DialTimeout time.Duration
	Seed        int64
}

func newWatchCmd(g *globalOptions) *cobra.Command {
	o := &watchOptions{}
	cmd := &cobra.Command{
		Use:   "watch --from VIEWPOINT",
		Short: "Stream every xDS push istiod sends to a proxy at a viewpoint",
		Long: `watch impersonates a proxy at each viewpoint, subscribes to istiod over ADS and
prints one event per push (cds, eds, lds, rds) with what changed, plus connect,
disconnect, reconnect, nack and error events, until interrupted.

Viewpoints: network1, cluster1, cluster1/network1, cluster1/none (a proxy that
sends no NETWORK), none, pod:NAMESPACE/POD@CONTEXT (a real pod's identity);
ztunnel@CLUSTER (ambient mode: a ztunnel on the istiod of CLUSTER, subscribed
to the workload API; one wds event per push with the workloads and services
added, removed or changed) or ztunnel (one on every control plane). What an
istiod sends a ztunnel does not depend on the ztunnel's network: one per
control plane shows what all its ztunnels get.
A bare name must be known: give cluster1/network1 when in doubt.

Without --xds-address, watch port-forwards to an istiod pod (label app=istiod)
in --istiod-namespace of the current (or first --context) kube context.

watch runs until interrupted (Ctrl-C), then exits 0 when every stream was
up at the end, else 3 with the streams that were not and why (-o jsonl: a
last line {"type":"incomplete","incomplete":[...]}).` + exitHelp("never: watch shows pushes, it does not judge them"),
		Example: `  meshscope watch --xds-address 127.0.0.1:15010 --from cluster1/network1
  meshscope watch --xds-address cluster1=127.0.0.1:15010,cluster2=127.0.0.1:15020 --from ztunnel@cluster2 -o table
  meshscope watch --xds-address 127.0.0.1:15010 --from cluster1/none -o table \
      --resource 'outbound|5000||helloworld.sample.svc.cluster.local'
  meshscope watch --xds-address 127.0.0.1:15010 --from cluster1/network1 --service helloworld.sample
  meshscope watch --xds-address 127.0.0.1:15012 --tls --ca-file root-cert.pem \
      --token-file token --from cluster1/network1`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runWatch(ctx, cmd, g, o)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.From, "from", nil, "viewpoint to watch from (repeatable)")
	f.StringArrayVar(&o.AsPod, "as-pod", nil, "watch as a real pod, NAMESPACE/POD[@CONTEXT] (repeatable; read with client-go)")
	f.StringVar(&o.Mode, "xds-mode", "delta", "ADS variant: delta (like the istio agent) or sotw")
	f.StringArrayVar(&o.Resources, "resource", nil, "EDS cluster name to watch, e.g. 'outbound|5000||helloworld.sample.svc.cluster.local' (repeatable; default: every EDS cluster CDS names)")
	f.StringVar(&o.Service, "service", "", "watch one service: NAME.NAMESPACE or its hostname; EDS for its ports only, without CDS (read from the kube context(s), get only)")
	f.Int32Var(&o.Port, "port", 0, "with --service: only this port")
	f.BoolVar(&o.Listeners, "listeners", false, "also subscribe LDS and RDS")
	f.StringVarP(&o.Output, "output", "o", "jsonl", "output format: jsonl or table")
	f.BoolVar(&o.TLS, "tls", false, "use TLS (istiod's port 15012)")
	f.StringVar(&o.CAFile, "ca-file", "", "PEM file with istiod's root certificate (for --tls)")
	f.StringVar(&o.TokenFile, "token-file", "", "file with a bearer token (audience istio-ca) sent over TLS")
	f.StringVar(&o.ServerName, "server-name", xdsclient.DefaultServerName, "name to verify in istiod's certificate (for --tls)")
	f.StringVar(&o.Revision, "revision", "", "istiod's revision: port-forward to the istiod pod labelled istio.io/rev=REVISION")
	f.StringVar(&o.IstiodNS, "istiod-namespace", istiod.DefaultNamespace, "namespace of the istiod pod to port-forward to")
	f.DurationVar(&o.DialTimeout, "dial-timeout", xdsclient.DefaultDialTimeout, "timeout of each connection attempt")
	f.Int64Var(&o.Seed, "seed", 1, "with --demo: seed of the demo mesh (pod names, IPs, churn)")
	return cmd
}

func runWatch(ctx context.Context, cmd *cobra.Command, g *globalOptions, o *watchOptions) error {
	if len(o.From) == 0 && len(o.AsPod) == 0 {
		return usageError(cmd, "watch: give at least one --from VIEWPOINT (e.g. cluster1/network1, or ztunnel@cluster1) or --as-pod NAMESPACE/POD")
	}
	mode, targets, known, err := watchInputs(g, o)
	if err != nil {
		return err
	}
	var snap *model.Snapshot
	if g.Demo {
		// The demo mesh, with churn so there is something to watch; its
		// collector also says which names are clusters and networks.
		m, err := openMesh(ctx, g, &meshOptions{seed: o.Seed}, true)
		if err != nil {
			return err
		}
		defer m.Close()
		if snap, err = m.Settle(ctx); err != nil {
			return errInterrupted
		}
		known = knownOf(snap)
		targets = m.ControlPlanes()
	}
	kube := istiod.Kube{Kubeconfig: g.Kubeconfig, Contexts: g.Contexts, Revision: o.Revision}
	vps, ztunnels, err := watchViewpoints(ctx, kube, known, o)
	if err != nil {
		return err
	}
	edsNames := o.Resources
	if o.Service != "" {
		names, err := serviceEDSNames(ctx, kube, snap, o.Service, o.Port)
		if err != nil {
			return badInput(err)
		}
		edsNames = append(slices.Clone(o.Resources), names...)
	}
	out, err := newWatchWriter(cmd.OutOrStdout(), o.Output)
	if err != nil {
		return badInput(err)
	}
	health := newStreamHealth()
	p := startProgress(cmd.ErrOrStderr(), health.status)
	defer p.stop()
	err = live.Watch(ctx, live.WatchOptions{
		Viewpoints: vps, Ztunnels: ztunnels, ControlPlanes: targets, Kube: kube, IstiodNamespace: o.IstiodNS,
		Transport: xdsclient.TransportConfig{TLS: o.TLS, CAFile: o.CAFile, TokenFile: o.TokenFile,
			ServerName: o.ServerName, DialTimeout: o.DialTimeout},
		Mode: mode, EDSNames: edsNames, EDSOnly: o.Service != "", Listeners: o.Listeners,
		OnEvent: func(ev xdsclient.Event) {
			// The events say the rest, the first one its cause; a
			// stream ended by the end of watch is not down.
			p.stop()
			if !ending(ctx) {
				health.see(ev)
			}
			out.write(ev)
		},
		OnForward: func(pod, addr string) {
			p.stop()
			fmt.Fprintf(cmd.ErrOrStderr(), "meshscope: port-forwarding to %s on %s\n", pod, addr)
		},
	})
	p.stop()
	var unread []model.Incomplete
	switch {
	case errors.Is(err, live.ErrForward):
		unread = []model.Incomplete{{Cluster: forwardContext(g), What: model.IncompleteIstiod, Why: err.Error()}}
	case err != nil:
		return badInput(err) // the transport or a viewpoint cannot work
	default:
		unread = health.unread()
	}
	out.incomplete(unread)
	if ferr := out.flush(); ferr != nil {
		return ferr
	}
	return outcome{incomplete: unread}.exit()
}

// watchViewpoints reads --from and --as-pod: a typo fails before any
// connection (bad input); a pod that cannot be read is incomplete.
func watchViewpoints(ctx context.Context, kube istiod.Kube, known xdsclient.Known, o *watchOptions) ([]xdsclient.Viewpoint, []string, error) {
	var vps []xdsclient.Viewpoint
	var ztunnels []string
	for _, s := range o.From {
		if cp, ok := xdsclient.ParseZtunnel(s); ok {
			ztunnels = append(ztunnels, cp)
			continue
		}
		vp, err := xdsclient.ParseViewpoint(s, known)
		if err != nil {
			return nil, nil, badInput(err)
		}
		if vp.Pod != nil {
			if vp, err = kube.ViewpointFromPod(ctx, *vp.Pod); err != nil {
				return nil, nil, podViewpointError(err)
			}
		} else if vp.Network == "" && !vp.NoNetwork {
			return nil, nil, badInput(fmt.Errorf("viewpoint %q: its network is not known without the collector; write %s/NETWORK, or %s/none for a proxy without NETWORK", s, vp.Cluster, vp.Cluster))
		}
		vps = append(vps, vp)
	}
	for _, s := range o.AsPod {
		ref, err := xdsclient.ParsePodRef(s)
		if err != nil {
			return nil, nil, badInput(fmt.Errorf("--as-pod %q: %w", s, err))
		}
		vp, err := kube.ViewpointFromPod(ctx, ref)
		if err != nil {
			return nil, nil, podViewpointError(err)
		}
		vps = append(vps, vp)
	}
	return vps, ztunnels, nil
}

// ending reports whether ctx has ended or is past its deadline (gRPC ends
// a stream at the deadline on a timer of its own, before ctx says so).
func ending(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Before(dl)
}

// isPodViewpoint reports whether a --from value is pod:NS/NAME[@CONTEXT].
func isPodViewpoint(s string) bool { return strings.HasPrefix(s, "pod:") }

// forwardContext is the kube context watch port-forwards through: the
// first --context, else the kubeconfig's current one.
func forwardContext(g *globalOptions) string {
	if len(g.Contexts) > 0 {
		return g.Contexts[0]
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = g.Kubeconfig
	if raw, err := rules.Load(); err == nil && raw.CurrentContext != "" {
		return raw.CurrentContext
	}
	return "the current context"
}

// watchInputs checks watch's flags before anything is read: the ADS mode,
// the control planes given by address (whose clusters are then known
// names), the flags that go together, and a kubeconfig where the kube
// contexts will be read.
func watchInputs(g *globalOptions, o *watchOptions) (xdsclient.Mode, []live.Target, xdsclient.Known, error) {
	known := xdsclient.Known{Clusters: map[string]string{}, Networks: map[string][]string{}}
	mode, err := xdsclient.ParseMode(o.Mode)
	if err != nil {
		return mode, nil, known, badInput(err)
	}
	targets, err := parseXDSAddresses(g.XDSAddress)
	if err != nil {
		return mode, targets, known, badInput(err)
	}
	for _, t := range targets {
		if t.Cluster != "" {
			known.Clusters[t.Cluster] = "" // its network is not known here
		}
	}
	if o.Port != 0 && o.Service == "" {
		return mode, targets, known, badInput(errors.New("watch: --port goes with --service"))
	}
	if o.Service != "" {
		if o.Listeners {
			return mode, targets, known, badInput(errors.New("watch: --service asks EDS for one service only; --listeners needs the whole proxy config (drop one of them)"))
		}
		if _, _, _, err := serviceHost(o.Service); err != nil {
			return mode, targets, known, badInput(err)
		}
	}
	if !g.Demo && (len(targets) == 0 || len(o.AsPod) > 0 || o.Service != "" || slices.ContainsFunc(o.From, isPodViewpoint)) {
		// The kube contexts are read: say where meshscope looked when
		// there is no kubeconfig.
		if err := collector.CheckKubeconfig(g.Kubeconfig); err != nil {
			return mode, targets, known, badInput(noClusterHint(err))
		}
	}
	return mode, targets, known, nil
}
