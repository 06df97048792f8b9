package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/meshscope/meshscope/analysis/whatif"
	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/live"
)

func init() { subcommands = append(subcommands, newWhatIfCmd) }

type whatIfOptions struct {
	mesh   meshOptions
	output string
	files  []string
	to     string
	delete bool
	failOn []string
	max    int
}

func newWhatIfCmd(g *globalOptions) *cobra.Command {
	o := &whatIfOptions{}
	cmd := &cobra.Command{
		Use:   "what-if",
		Short: "Every proxy's endpoints after a change, before it is made: objects and istiod settings held in memory",
		Long: `what-if reads the mesh like snapshot does, applies changes in memory — never
to a cluster — and shows what istiod would send every proxy before and after:

- objects from -f FILE|DIR|- (repeatable; YAML documents or JSON, Lists
  too, as kubectl apply -f takes them), put into the cluster --to names (the
  first context by default) or, per file, CLUSTER=FILE; with --delete they
  are deleted instead (kubectl delete -f). A put object replaces the one of
  its name as written (labels it leaves out are removed); what the API
  server fills in and the file leaves out (a Service's status and cluster
  IP, a pod's node, IP and readiness) is kept from the live object;
- every kind meshscope reads: Namespaces, Services, Pods, EndpointSlices,
  Nodes, remote-secret Secrets, ConfigMaps istio / istio-REV (mesh config,
  meshNetworks), DestinationRules, PeerAuthentications, Sidecars,
  VirtualServices, ServiceEntries, WorkloadEntries, Gateway API Gateways.
  Other kinds are listed with why they change nothing meshscope predicts
  (and whether istiod reads them at all);
- --istiod-env [CLUSTER=]KEY=VALUE: an istiod setting as it would be
  (PILOT_ENABLE_AMBIENT, AMBIENT_ENABLE_MULTI_NETWORK,
  RESOLVE_HOSTNAME_GATEWAYS), for the istiod of CLUSTER or every one.

The changed objects go through the same path as a real change: the
collector's transforms and parsers, the planning of clusters from remote
secrets, the same snapshot build, each control plane's own view.

It prints a summary line, then every service port whose predicted endpoints
change from some viewpoint (each network's sidecars and a proxy without
NETWORK, per control plane; each control plane's ztunnel view in ambient
mode): the endpoints before and after, each network's share of requests,
and why; then the doctor problems the change brings and resolves, and what
each object did. -o json gives all of it (docs/what-if.md).` + exitHelp("the change fails a --fail-on rule (default: a new error-level\n       problem, or a service that loses every endpoint from some viewpoint)"),
		Example: `  meshscope what-if --demo -f docs/examples/what-if-unlabel-network.yaml
  meshscope what-if --context cluster1,cluster2 -f cluster2=gateway.yaml
  meshscope what-if --context cluster1 --delete -f cluster1=remote-secret.yaml
  meshscope what-if --context cluster1 --istiod-env AMBIENT_ENABLE_MULTI_NETWORK=true
  kubectl get ns sample -o yaml | yq '.metadata.labels["istio.io/dataplane-mode"]="ambient"' | meshscope what-if -f - -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runWhatIf(cmd, g, o) },
	}
	f := cmd.Flags()
	f.StringArrayVarP(&o.files, "filename", "f", nil, "objects to put (or delete): FILE, DIR, - (stdin), or CLUSTER=FILE (repeatable)")
	f.StringVar(&o.to, "to", "", "the cluster (ID) the objects of -f without CLUSTER= are for (default: the first context's)")
	f.BoolVar(&o.delete, "delete", false, "delete the objects of -f instead of putting them (kubectl delete -f)")
	f.StringSliceVar(&o.failOn, "fail-on", whatif.DefaultFailOn, "exit 1 when the change brings: error (a new error-level problem), warning (a new problem), lost (a service loses every endpoint from some viewpoint), lost-remote (… or every endpoint of the other clusters), change (anything), or none")
	f.IntVar(&o.max, "max", 50, "with -o text: show at most this many changed service views (0: all)")
	f.StringVarP(&o.output, "output", "o", "text", "output format: text or json")
	o.mesh.addFlags(f)
	f.Lookup("istiod-env").Usage = "an istiod setting as the what-if would have it, [CLUSTER=]KEY=VALUE (repeatable): PILOT_ENABLE_AMBIENT, AMBIENT_ENABLE_MULTI_NETWORK or RESOLVE_HOSTNAME_GATEWAYS for the istiod of CLUSTER or every one (today's settings are read from the istiod pods)"
	return cmd
}

func runWhatIf(cmd *cobra.Command, g *globalOptions, o *whatIfOptions) error {
	if err := checkOutput(o.output, "text", "json"); err != nil {
		return err
	}
	rules, err := whatif.ParseFailOn(o.failOn)
	if err != nil {
		return badInput(err)
	}
	var env []model.IstiodEnv
	for _, v := range o.mesh.istiodEnv {
		e, err := model.ParseIstiodEnv(v)
		if err != nil {
			return badInput(err)
		}
		env = append(env, e)
	}
	if len(o.files) == 0 && len(env) == 0 {
		return usageError(cmd, "nothing to try: give objects with -f FILE (or CLUSTER=FILE), or istiod settings with --istiod-env")
	}
	var srcs []whatif.Source
	for _, f := range o.files {
		srcs = append(srcs, whatif.ParseSource(f))
	}
	// Read the changes before opening the mesh: a typo costs no sync.
	objs, err := whatif.Read(srcs, o.to, cmd.InOrStdin())
	if err != nil {
		return badInput(err)
	}
	mesh := o.mesh
	mesh.istiodEnv = nil // the settings given are the what-if's, not today's
	return withSettledMesh(cmd, g, &mesh, "", func(ctx context.Context, m *live.Session, snap *model.Snapshot) error {
		// A cluster not read is in neither the before nor the after.
		out := outcome{incomplete: snap.Unread()}
		def := o.to
		if def == "" {
			def = firstContext(snap)
		}
		for i := range objs {
			if objs[i].Cluster == "" {
				objs[i].Cluster = def
			}
		}
		for _, e := range env {
			if e.Cluster != "" && snap.ClusterByID(e.Cluster) == nil {
				return out.fail(fmt.Errorf("--istiod-env %s=%s=%s: no cluster %q in the mesh", e.Cluster, e.Key, e.Value, e.Cluster))
			}
		}
		rep, err := live.WhatIf(m.Registry(), whatif.Request{Objects: objs, Delete: o.delete, Env: env})
		if errors.Is(err, collector.ErrWhatIf) {
			return out.fail(err)
		}
		if err != nil {
			return err
		}
		whatif.Judge(rep, rules)
		if o.output == "json" {
			if err := writeJSON(cmd.OutOrStdout(), struct {
				*whatif.Report
				Incomplete []model.Incomplete `json:"incomplete"`
			}{rep, append([]model.Incomplete{}, out.incomplete...)}); err != nil {
				return err
			}
		} else {
			writeIncomplete(cmd.OutOrStdout(), out.incomplete, servicesKnown(snap))
			whatif.WriteText(cmd.OutOrStdout(), rep, o.max)
		}
		if len(rep.Fail) > 0 {
			out.finding = "the change fails --fail-on: " + strings.Join(rep.Fail, "; ")
		}
		return out.exit()
	})
}

// firstContext is the ID of the mesh's first context cluster.
func firstContext(snap *model.Snapshot) string {
	for _, c := range snap.Clusters {
		if c.IsContext() {
			return c.ID
		}
	}
	if len(snap.Clusters) > 0 {
		return snap.Clusters[0].ID
	}
	return ""
}
