package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshscope/meshscope/xdsclient"
)

func init() { subcommands = append(subcommands, newWatchCmd) }

type watchOptions struct {
	From        []string
	AsPod       []string
	Mode        string
	Resources   []string
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
sends no NETWORK), none, pod:NAMESPACE/POD@CONTEXT (a real pod's identity).
A bare name must be known: give cluster1/network1 when in doubt.

Without --xds-address, watch port-forwards to an istiod pod (label app=istiod)
in --istiod-namespace of the current (or first --context) kube context.`,
		Example: `  meshscope watch --xds-address 127.0.0.1:15010 --from cluster1/network1
  meshscope watch --xds-address 127.0.0.1:15010 --from cluster1/none -o table \
      --resource 'outbound|5000||helloworld.sample.svc.cluster.local'
  meshscope watch --xds-address 127.0.0.1:15012 --tls --ca-file root-cert.pem \
      --token-file token --from cluster1/network1`,
		Args: cobra.NoArgs,
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
	f.BoolVar(&o.Listeners, "listeners", false, "also subscribe LDS and RDS")
	f.StringVarP(&o.Output, "output", "o", "jsonl", "output format: jsonl or table")
	f.BoolVar(&o.TLS, "tls", false, "use TLS (istiod's port 15012)")
	f.StringVar(&o.CAFile, "ca-file", "", "PEM file with istiod's root certificate (for --tls)")
	f.StringVar(&o.TokenFile, "token-file", "", "file with a bearer token (audience istio-ca) sent over TLS")
	f.StringVar(&o.ServerName, "server-name", xdsclient.DefaultServerName, "name to verify in istiod's certificate (for --tls)")
	f.StringVar(&o.Revision, "revision", "", "istiod's revision: port-forward to the istiod pod labelled istio.io/rev=REVISION")
	f.StringVar(&o.IstiodNS, "istiod-namespace", xdsclient.DefaultSystemNamespace, "namespace of the istiod pod to port-forward to")
	f.DurationVar(&o.DialTimeout, "dial-timeout", xdsclient.DefaultDialTimeout, "timeout of each connection attempt")
	f.Int64Var(&o.Seed, "seed", 1, "with --demo: seed of the demo mesh (pod names, IPs, churn)")
	return cmd
}

// watchTarget is one control plane with its shared connection.
type watchTarget struct {
	cluster, address string
	conn             *grpc.ClientConn
}

func runWatch(ctx context.Context, cmd *cobra.Command, g *globalOptions, o *watchOptions) error {
	if len(o.From) == 0 && len(o.AsPod) == 0 {
		return errors.New("watch: give at least one --from VIEWPOINT (e.g. cluster1/network1) or --as-pod NAMESPACE/POD")
	}
	mode, err := xdsclient.ParseMode(o.Mode)
	if err != nil {
		return err
	}
	out, err := newWatchWriter(cmd.OutOrStdout(), o.Output)
	if err != nil {
		return err
	}
	targets, err := parseXDSAddresses(g.XDSAddress)
	if err != nil {
		return err
	}
	known := xdsclient.Known{Clusters: map[string]string{}, Networks: map[string][]string{}}
	for _, t := range targets {
		if t.Cluster != "" {
			known.Clusters[t.Cluster] = "" // its network is not known here
		}
	}
	if g.Demo {
		// The demo mesh, with churn so there is something to watch; its
		// collector also says which names are clusters and networks.
		m, err := openMesh(ctx, g, &meshOptions{seed: o.Seed}, true)
		if err != nil {
			return err
		}
		defer m.Close()
		snap, err := m.settle(ctx)
		if err != nil {
			return err
		}
		known = knownOf(snap)
		targets = m.ControlPlanes
	}
	kube := &watchKube{kubeconfig: g.Kubeconfig, contexts: g.Contexts, revision: o.Revision}

	// Viewpoints first: a typo should fail before any connection.
	var vps []xdsclient.Viewpoint
	for _, s := range o.From {
		vp, err := xdsclient.ParseViewpoint(s, known)
		if err != nil {
			return err
		}
		if vp.Pod != nil {
			if vp, err = kube.viewpointFromPod(ctx, *vp.Pod); err != nil {
				return err
			}
		} else if vp.Network == "" && !vp.NoNetwork {
			return fmt.Errorf("viewpoint %q: its network is not known without the collector; write %s/NETWORK, or %s/none for a proxy without NETWORK", s, vp.Cluster, vp.Cluster)
		}
		vps = append(vps, vp)
	}
	for _, s := range o.AsPod {
		ref, err := xdsclient.ParsePodRef(s)
		if err != nil {
			return fmt.Errorf("--as-pod %q: %w", s, err)
		}
		vp, err := kube.viewpointFromPod(ctx, ref)
		if err != nil {
			return err
		}
		vps = append(vps, vp)
	}

	var tgs []*watchTarget
	if len(targets) == 0 {
		port := istiodXDSPort
		if o.TLS {
			port = 15012
		}
		pf, tg, err := kube.portForward(ctx, o.IstiodNS, port, o.DialTimeout)
		if err != nil {
			return err
		}
		defer pf.Close()
		fmt.Fprintf(cmd.ErrOrStderr(), "meshscope: port-forwarding to %s on %s\n", pf.Pod, pf.Address)
		tgs = append(tgs, tg)
	}
	for _, t := range targets {
		tgs = append(tgs, &watchTarget{cluster: t.Cluster, address: t.Address})
	}
	for _, t := range tgs {
		t.conn, err = xdsclient.Dial(xdsclient.TransportConfig{
			Address: t.address, TLS: o.TLS, CAFile: o.CAFile, TokenFile: o.TokenFile,
			ServerName: o.ServerName, DialTimeout: o.DialTimeout,
		})
		if err != nil {
			return err
		}
		defer t.conn.Close()
	}

	var clients []*xdsclient.Client
	for _, vp := range vps {
		for _, t := range pickTargets(tgs, vp) {
			cp := t.cluster
			if cp == "" {
				cp = t.address
			}
			c, err := xdsclient.New(xdsclient.Options{
				Viewpoint: vp, ControlPlane: cp, Conn: t.conn,
				Transport: xdsclient.TransportConfig{Address: t.address},
				Mode:      mode, EDSNames: o.Resources, Listeners: o.Listeners,
				DialTimeout: o.DialTimeout, OnEvent: out.write,
			})
			if err != nil {
				return err
			}
			clients = append(clients, c)
		}
	}

	var wg sync.WaitGroup
	errs := make([]error, len(clients))
	for i, c := range clients {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = c.Run(ctx) }()
	}
	wg.Wait()
	if err := out.flush(); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// pickTargets chooses the control planes a viewpoint is watched on: the one
// that is primary of its ControlPlane or Cluster, else the only one, else
// all of them (to compare what each istiod sends to the same proxy).
func pickTargets(tgs []*watchTarget, vp xdsclient.Viewpoint) []*watchTarget {
	want := vp.ControlPlane
	if want == "" {
		want = vp.Cluster
	}
	for _, t := range tgs {
		if t.cluster != "" && t.cluster == want {
			return []*watchTarget{t}
		}
	}
	return tgs
}

// watchKube reads the kubeconfig like kubectl does, lazily: watch with
// --xds-address and plain viewpoints never touches it.
type watchKube struct {
	kubeconfig string
	contexts   []string
	// revision narrows the istiod pod to port-forward to (istio.io/rev).
	revision string
}

func (k *watchKube) config(kctx string) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if k.kubeconfig != "" {
		rules.ExplicitPath = k.kubeconfig
	}
	if kctx == "" && len(k.contexts) > 0 {
		kctx = k.contexts[0]
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kctx})
	raw, err := cc.RawConfig()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	if kctx == "" {
		kctx = raw.CurrentContext
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("kube context %q: %w", kctx, err)
	}
	cfg.Timeout = 15 * time.Second
	return cfg, kctx, nil
}

// viewpointFromPod reads one Pod (get only) and copies its identity. The
// @CONTEXT names the kube context; the cluster ID comes from the pod's
// ISTIO_META_CLUSTER_ID, else the context name.
func (k *watchKube) viewpointFromPod(ctx context.Context, ref xdsclient.PodRef) (xdsclient.Viewpoint, error) {
	cfg, kctx, err := k.config(ref.Cluster)
	if err != nil {
		return xdsclient.Viewpoint{}, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return xdsclient.Viewpoint{}, err
	}
	pod, err := cs.CoreV1().Pods(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return xdsclient.Viewpoint{}, fmt.Errorf("pod %s/%s in context %q: %w", ref.Namespace, ref.Name, kctx, err)
	}
	vp, err := xdsclient.ViewpointFromPod(pod, "")
	if err != nil {
		return vp, err
	}
	if vp.Cluster == "" {
		vp.Cluster = kctx
	}
	return vp, nil
}

// portForward finds istiod in the kube context and forwards a local port to
// one of its ports (xDS 15010, 15012 with TLS; debug 8080).
func (k *watchKube) portForward(ctx context.Context, ns string, port int, timeout time.Duration) (*xdsclient.PortForward, *watchTarget, error) {
	cfg, kctx, err := k.config("")
	if err != nil {
		return nil, nil, fmt.Errorf("no --xds-address, and no kube context to port-forward through: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	// The Pod is found again whenever the forward must be re-established
	// (istiod rolled out while the UI or watch runs).
	find := func(ctx context.Context) (string, string, error) {
		lctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		pod, err := xdsclient.FindIstiod(lctx, cs, ns, k.revision)
		if err != nil {
			return "", "", fmt.Errorf("context %q: %w", kctx, err)
		}
		return pod.Namespace, pod.Name, nil
	}
	pf, err := xdsclient.StartPortForwardTo(ctx, xdsclient.PortForwardOptions{
		Config: cfg, RemotePort: port, Timeout: timeout, Find: find,
		Logf: func(format string, args ...any) { slog.Info(fmt.Sprintf(format, args...), "context", kctx) },
	})
	if err != nil {
		return nil, nil, err
	}
	return pf, &watchTarget{cluster: kctx, address: pf.Address}, nil
}
