package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/collector/explain"
	"github.com/meshscope/meshscope/xdsclient"
)

func init() { subcommands = append(subcommands, newDoctorCmd) }

type doctorOptions struct {
	mesh   meshOptions
	output string
}

func newDoctorCmd(g *globalOptions) *cobra.Command {
	o := &doctorOptions{}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "List what is wrong in the mesh: leaks, drops, skew, gateways, clusters, remote secrets",
		Long: `doctor reads the mesh like snapshot does and lists every problem it finds,
errors first: endpoints that leak across networks (no gateway for their
network), endpoints dropped for lack of mTLS, cross-network traffic skew,
gateways without an address or with only a hostname, gateway Services without
ready endpoints, network label disagreements, clusters that are not synced and
remote secrets that fail — for Kubernetes Services and ServiceEntry hosts
(VMs through WorkloadEntries) alike — and Istio config that leaves istiod
without endpoints: a ServiceEntry whose workloadSelector picks nothing, a
ServiceEntry port named unlike the Kubernetes Service's, a mesh config that
does not parse. It also reads istiod's own view (/debug/clusterz,
/debug/networkz) and reports where it disagrees with meshscope's — notably a
cluster istiod still calls "synced" although its API server is gone: from
--istiod-debug-address, else through a port-forward to the istiod pod's
port 8080 (found like the xDS port-forward; not with --xds-address alone,
which says nothing about istiod's HTTP address).

Exit status: 1 when any error-level problem exists, 0 otherwise.`,
		Example: `  meshscope doctor --demo
  meshscope doctor --context cluster1 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDoctor(cmd, g, o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "table", "output format: table or json")
	o.mesh.addFlags(f)
	o.mesh.addIstiodFlag(f)
	return cmd
}

func runDoctor(cmd *cobra.Command, g *globalOptions, o *doctorOptions) error {
	if err := checkOutput(o.output, "table", "json"); err != nil {
		return err
	}
	return withSettledMesh(cmd, g, &o.mesh, func(ctx context.Context, m *mesh, snap *collector.Snapshot) error {
		ps := explain.Problems(snap)
		debug, err := m.istiodDebugTargets(ctx)
		if err != nil {
			ps = append(ps, explain.Problem{Severity: explain.Warning, Kind: "istiod-unreachable",
				Sentence: fmt.Sprintf("cannot read istiod's own view (give --istiod-debug-address to point at it): %v", err)})
		}
		for _, t := range debug {
			cp := t.Cluster
			if cp == "" && len(snap.Clusters) > 0 {
				cp = snap.Clusters[0].ID // the first context: the primary istiod is asked about
			}
			v, err := xdsclient.FetchIstiodView(ctx, cp, t.Address)
			if err != nil {
				ps = append(ps, explain.Problem{Severity: explain.Warning, Kind: "istiod-unreachable", Cluster: cp,
					Sentence: fmt.Sprintf("cannot read istiod's own view at %s: %v", t.Address, err)})
				continue
			}
			ps = append(ps, explain.IstiodDisagreements(snap, v)...)
		}
		explain.SortProblems(ps)
		if o.output == "json" {
			if ps == nil {
				ps = []explain.Problem{}
			}
			if err := writeJSON(cmd.OutOrStdout(), struct {
				Problems []explain.Problem `json:"problems"`
			}{ps}); err != nil {
				return err
			}
		} else {
			writeProblems(cmd.OutOrStdout(), ps)
		}
		if explain.HasErrors(ps) {
			return exitWith(1)
		}
		return nil
	})
}

func writeProblems(w io.Writer, ps []explain.Problem) {
	if len(ps) == 0 {
		fmt.Fprintln(w, "No problems found.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SEVERITY\tKIND\tCLUSTER\tSERVICE\tPROBLEM")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", strings.ToUpper(string(p.Severity)), p.Kind, dash(p.Cluster), dash(shortHost(p.Service)), p.Sentence)
	}
	tw.Flush()
}

// shortHost drops the cluster domain for tables.
func shortHost(h string) string { return strings.TrimSuffix(h, ".svc.cluster.local") }
