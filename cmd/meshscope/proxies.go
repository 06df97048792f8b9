package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/meshscope/meshscope/analysis/fleet"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/live"
)

func init() { subcommands = append(subcommands, newProxiesCmd) }

type proxiesOptions struct {
	mesh                              meshOptions
	output                            string
	clusters, namespaces, cps, states []string
	probes                            bool
}

func newProxiesCmd(g *globalOptions) *cobra.Command {
	o := &proxiesOptions{}
	cmd := &cobra.Command{
		Use:   "proxies",
		Short: "Every real proxy of the mesh, from every istiod: connected where, in sync, injected identity, versions",
		Long: `proxies lists the proxies of the whole mesh, like istioctl proxy-status
across every primary: each istiod's /debug/syncz (from --istiod-debug-address,
CLUSTER=HOST:PORT per control plane, else through a port-forward to port
8080 of each primary's istiod pod, in the primary's own kube context)
joined with the pods meshscope watches in every cluster.

Each row is a proxy connected to an istiod, with its sync state per xDS type
as istiod sees it (SYNCED, STALE for how long, NACK with the proxy's error,
NOT SENT), or a pod that runs a proxy (an istio-proxy container) and that no
istiod lists (DISCONNECTED; UNKNOWN when some istiod could not be read).
Pods in ambient mode are served by their node's ztunnel and take its state.

IDENTITY shows where the network or cluster a sidecar was injected with
(ISTIO_META_NETWORK, ISTIO_META_CLUSTER_ID, fixed when the pod started)
differs from what the mesh gives its pod today: istiod sends such a proxy
the wrong side of the split horizon until its pods restart.

meshscope's own impersonated proxies (ISTIO_VERSION ending in -meshscope)
are marked "probe" and left out of every check; --probes=false hides them.` + exitHelp("never: proxies out of sync are listed, not judged (doctor judges them)"),
		Example: `  meshscope proxies --context cluster1,cluster2
  meshscope proxies --context cluster1,cluster2 --istiod-debug-address cluster1=127.0.0.1:8080,cluster2=127.0.0.1:8090
  meshscope proxies --state STALE,NACK,DISCONNECTED
  meshscope proxies --namespace sample -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runProxies(cmd, g, o) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "table", "output format: table or json")
	f.StringSliceVar(&o.clusters, "cluster", nil, "only proxies of these clusters")
	f.StringSliceVarP(&o.namespaces, "namespace", "n", nil, "only proxies of these namespaces")
	f.StringSliceVar(&o.cps, "control-plane", nil, "only proxies connected to these control planes (cluster IDs; \"none\" for proxies connected to none)")
	f.StringSliceVar(&o.states, "state", nil, "only proxies in these states: SYNCED, STALE, NACK, \"NOT SENT\", DISCONNECTED, UNKNOWN")
	f.BoolVar(&o.probes, "probes", true, "list meshscope's own impersonated proxies (marked probe)")
	o.mesh.addFlags(f)
	o.mesh.addIstiodFlag(f)
	return cmd
}

func runProxies(cmd *cobra.Command, g *globalOptions, o *proxiesOptions) error {
	if err := checkOutput(o.output, "table", "json"); err != nil {
		return err
	}
	for i, s := range o.states {
		st := fleet.State(strings.ToUpper(strings.TrimSpace(s)))
		if st == "NOTSENT" || st == "NOT-SENT" {
			st = fleet.NotSent
		}
		if !slices.Contains(fleet.States, st) {
			return badInput(fmt.Errorf("--state %q: want SYNCED, STALE, NACK, NOT SENT, DISCONNECTED or UNKNOWN", s))
		}
		o.states[i] = string(st)
	}
	return withSettledMesh(cmd, g, &o.mesh, "reading each istiod's connected proxies", func(ctx context.Context, m *live.Session, snap *model.Snapshot) error {
		f, warnings, unread := readFleet(ctx, m)
		f.Proxies = slices.DeleteFunc(f.Proxies, func(p fleet.Proxy) bool { return !o.keep(p) })
		if o.output == "json" {
			if f.Proxies == nil {
				f.Proxies = []fleet.Proxy{}
			}
			if err := writeJSON(cmd.OutOrStdout(), struct {
				fleet.Fleet
				Warnings   []string           `json:"warnings,omitempty"`
				Incomplete []model.Incomplete `json:"incomplete"`
			}{f, warnings, append([]model.Incomplete{}, unread...)}); err != nil {
				return err
			}
			return outcome{incomplete: unread}.exit()
		}
		writeIncomplete(cmd.OutOrStdout(), unread, servicesKnown(snap))
		writeFleet(cmd.OutOrStdout(), f)
		for _, w := range warnings {
			fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
		}
		return outcome{incomplete: unread}.exit()
	})
}

// readFleet reads every istiod's syncz and joins it with the collector's
// newest snapshot (joinFleet).
func readFleet(ctx context.Context, m *live.Session) (fleet.Fleet, []string, []model.Incomplete) {
	return joinFleet(ctx, m.Registry().Snapshot, m.IstiodSyncz)
}

// joinFleet takes the newest snapshot just before the syncz reads, as the
// UI's feed does (live.Feed.Syncz): a pod that starts while the reads run,
// and connects after its istiod's syncz was read, is then not in the
// snapshot either — with the snapshot taken after the reads it would be a
// pod that no istiod lists, reported DISCONNECTED. The same snapshot names
// the control planes whose syncz is read. What could not be read (the
// snapshot's clusters, an istiod's syncz) is unread; the istiods meshscope
// has no way to reach (no context for their cluster) are warnings.
func joinFleet(ctx context.Context, newest func() *model.Snapshot, syncz func(context.Context, *model.Snapshot) []fleet.Read) (f fleet.Fleet, warnings []string, unread []model.Incomplete) {
	snap := newest()
	unread = snap.Unread()
	reads := syncz(ctx, snap)
	for _, r := range reads {
		if r.Err != nil {
			unread = andAlso(unread, model.Incomplete{Cluster: r.ControlPlane, What: model.IncompleteIstiod,
				Why: fmt.Sprintf("its connected proxies (/debug/syncz%s): %v", at(r.Address), r.Err)})
		}
	}
	f = fleet.Build(snap, reads, time.Now())
	for _, cp := range f.Missing {
		if slices.ContainsFunc(unread, func(i model.Incomplete) bool { return i.Cluster == cp || i.Cluster == model.ControlPlaneCluster(cp) }) {
			continue // meshscope tried: what it met is said
		}
		warnings = append(warnings, fmt.Sprintf("the proxies connected to istiod %s were not read (give --context %s to port-forward to it, or --istiod-debug-address %s=HOST:PORT): a pod that no istiod read lists is UNKNOWN, not DISCONNECTED", cp, cp, cp))
	}
	return f, warnings, unread
}

// at is " at ADDRESS", or nothing when there is no address (the
// port-forward to istiod failed, and its error says so).
func at(addr string) string {
	if addr == "" {
		return ""
	}
	return " at " + addr
}

func (o *proxiesOptions) keep(p fleet.Proxy) bool {
	cp := p.ControlPlane
	if cp == "" {
		cp = "none"
	}
	return (o.probes || !p.Probe) &&
		(len(o.clusters) == 0 || slices.Contains(o.clusters, p.Cluster)) &&
		(len(o.namespaces) == 0 || slices.Contains(o.namespaces, p.Namespace)) &&
		(len(o.cps) == 0 || slices.Contains(o.cps, cp)) &&
		(len(o.states) == 0 || slices.Contains(o.states, string(p.State)))
}

func writeFleet(w io.Writer, f fleet.Fleet) {
	if len(f.Proxies) == 0 {
		fmt.Fprintln(w, "No proxies.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROXY\tCLUSTER\tKIND\tISTIOD\tSTATE\tCDS\tLDS\tEDS\tRDS\tVERSION\tIDENTITY")
	for _, p := range f.Proxies {
		kind := p.Kind
		if p.Probe {
			kind += " (probe)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.ID, dash(p.Cluster), kind, dash(p.ControlPlane), p.StateText(),
			p.TypeText("CDS"), p.TypeText("LDS"), p.TypeText("EDS"), p.TypeText("RDS"), p.VersionText(), p.IdentityText())
	}
	tw.Flush()
	var n, off int
	for _, p := range f.Proxies {
		if !p.Probe {
			n++
			if p.State != fleet.Synced {
				off++
			}
		}
	}
	fmt.Fprintf(w, "%d proxies (probes not counted), %d not in sync.\n", n, off)
}
