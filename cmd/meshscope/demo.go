package main

import (
	"github.com/spf13/cobra"
)

func init() { subcommands = append(subcommands, newDemoCmd) }

func newDemoCmd(g *globalOptions) *cobra.Command {
	o := &meshOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Open the terminal UI on the built-in demo mesh (no cluster needed)",
		Long: `demo opens the terminal UI on meshscope's built-in demo mesh: three clusters
on two networks (cluster2 and cluster3 found through remote secrets), an
east-west gateway per network, about forty services, an in-process control
plane, live churn, a VM service (a ServiceEntry with WorkloadEntries), a
DestinationRule with subsets, and a few planted problems (a service without
mTLS in cluster3, a flapping gateway, cross-network skew, a remote secret
with the wrong CA, a cluster with a root CA of its own, a Service missing in
one cluster, a remote service in two zones whose duplicate gateway entries
Envoy drops). Every other command takes --demo to run on the same mesh.` + exitHelp("never: the UI shows, it does not judge"),
		Example: `  meshscope demo
  meshscope demo --seed 7 --theme catppuccin-mocha`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			g.Demo = true
			return runTUI(cmd, g, o)
		},
	}
	cmd.Flags().Int64Var(&o.seed, "seed", 1, "seed of the demo mesh (pod names, IPs, churn)")
	return cmd
}
