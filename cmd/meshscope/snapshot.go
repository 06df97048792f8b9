package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/live"
)

func init() { subcommands = append(subcommands, newSnapshotCmd) }

type snapshotOptions struct {
	mesh   meshOptions
	output string
}

func newSnapshotCmd(g *globalOptions) *cobra.Command {
	o := &snapshotOptions{}
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Print the mesh as meshscope sees it: clusters, networks, gateways, services",
		Long: `snapshot reads the given kube contexts and the remote secrets in them, waits
until every cluster is synced, timed out or in error, and prints one snapshot.
The JSON is described in docs/snapshot.md. It never contains credentials.
A cluster that could not be read is said on the first line (JSON: the
"incomplete" list) and exits 3.` + exitHelp("never: snapshot shows the mesh, it does not judge it"),
		Example: `  meshscope snapshot --demo
  meshscope snapshot --context cluster1 -o json
  meshscope snapshot --demo -o dot | dot -Tsvg > mesh.svg`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSnapshot(cmd, g, o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "table", "output format: json, yaml, table, or dot (the map: Graphviz, e.g. | dot -Tsvg)")
	o.mesh.addFlags(f)
	return cmd
}

func parseClusterIDs(vals []string) (map[string]string, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, v := range vals {
		ctx, id, ok := strings.Cut(v, "=")
		ctx, id = strings.TrimSpace(ctx), strings.TrimSpace(id)
		if !ok || ctx == "" || id == "" {
			return nil, fmt.Errorf("--cluster-id %q: want CONTEXT=ID", v)
		}
		if prev, dup := out[ctx]; dup && prev != id {
			return nil, fmt.Errorf("--cluster-id: context %q given twice", ctx)
		}
		out[ctx] = id
	}
	return out, nil
}

func runSnapshot(cmd *cobra.Command, g *globalOptions, o *snapshotOptions) error {
	if err := checkOutput(o.output, "json", "yaml", "table", "dot"); err != nil {
		return err
	}
	return withSettledMesh(cmd, g, &o.mesh, "", func(_ context.Context, _ *live.Session, snap *model.Snapshot) error {
		res := outcome{incomplete: snap.Unread()}
		var err error
		if o.output == "dot" {
			err = writeSnapshotDot(cmd.OutOrStdout(), snap)
		} else {
			err = writeSnapshot(cmd.OutOrStdout(), snap, o.output)
		}
		if err != nil {
			return err
		}
		return res.exit()
	})
}

// snapshotJSON is snapshot's JSON and YAML (docs/snapshot.md): the
// snapshot, and what could not be read (always a list, [] when nothing).
type snapshotJSON struct {
	*model.Snapshot
	Incomplete []model.Incomplete `json:"incomplete"`
}

// writeSnapshot writes s as format; what could not be read comes first
// (text: the first lines; JSON and YAML: the "incomplete" list).
func writeSnapshot(w io.Writer, s *model.Snapshot, format string) error {
	inc := s.Unread()
	if inc == nil {
		inc = []model.Incomplete{}
	}
	switch format {
	case "json":
		return writeJSON(w, snapshotJSON{s, inc})
	case "yaml":
		b, err := yaml.Marshal(snapshotJSON{s, inc})
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	default:
		writeIncomplete(w, inc, servicesKnown(s))
		return writeSnapshotTable(w, s)
	}
}

func writeSnapshotTable(w io.Writer, s *model.Snapshot) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tSTATE\tNETWORK\tSOURCE\tSERVER\tSERVICES\tENDPOINTS\tREASON")
	for _, c := range s.Clusters {
		src := string(c.Source.Kind) + " " + c.Source.Name
		if c.Source.In != "" {
			src += " (in " + c.Source.In + ")"
		}
		if n := len(c.Sources); n > 1 {
			src += fmt.Sprintf(" +%d", n-1)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", c.ID, c.State, dash(c.Network), src, dash(c.Server),
			c.Counts.Services, c.Counts.Endpoints, dash(c.Reason))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range s.Clusters {
		for _, warn := range c.Warnings {
			fmt.Fprintf(w, "warning: %s: %s\n", c.ID, warn)
		}
	}
	fmt.Fprintln(w)
	writeRevisionTables(tw, s)
	fmt.Fprintln(tw, "NETWORK\tCLUSTERS\tGATEWAY\tFROM\tCLUSTER\tSERVICE")
	for _, n := range s.Networks {
		gws := s.GatewaysFor(n.Name)
		if len(gws) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t%s\t\t\t\n", n.Name, dash(strings.Join(n.Clusters, ",")), "(none)")
			continue
		}
		for i, g := range gws {
			name, clusters := n.Name, strings.Join(n.Clusters, ",")
			if i > 0 {
				name, clusters = "", ""
			}
			addr := model.HostPort(g.Address, g.Port)
			if g.Port == 0 && g.HBONEPort != 0 {
				addr = fmt.Sprintf("%s:%d (hbone)", g.Address, g.HBONEPort)
			}
			switch {
			case g.Name != "":
				addr = g.Name + " → " + addr
			case g.Hostname:
				addr += " (DNS name without address: istiod drops it)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", name, dash(clusters), addr, g.From, dash(g.Cluster), dash(orGateway(g)))
		}
	}
	for _, n := range s.GatewayNames {
		fmt.Fprintf(tw, "gateway name %s: %s\n", n.Name, gatewayNameText(n))
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "SERVICE\tSOURCE\tPORTS\tENDPOINTS (cluster: address network ...; ServiceEntry NS/NAME: ...)")
	for _, svc := range s.Services {
		var ports []string
		for _, p := range svc.Ports {
			ports = append(ports, fmt.Sprint(p.Port))
		}
		ids := make([]string, 0, len(svc.Clusters))
		for id := range svc.Clusters {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		var parts []string
		for _, id := range ids {
			parts = append(parts, id+": "+endpointList(svc.Clusters[id].Endpoints))
		}
		for _, se := range svc.ServiceEntries {
			what := fmt.Sprintf("ServiceEntry %s/%s", se.Namespace, se.Name)
			if se.Resolution != "STATIC" {
				what += " " + se.Resolution
			}
			parts = append(parts, what+": "+endpointList(se.Endpoints))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", svc.Hostname, dash(string(svc.Source)), dash(strings.Join(ports, ",")), strings.Join(parts, "; "))
	}
	return tw.Flush()
}

// endpointList is the first three endpoints (address, network, not-ready)
// and how many more there are.
func endpointList(all []model.Endpoint) string {
	var eps []string
	for i, e := range all {
		if i == 3 {
			eps = append(eps, fmt.Sprintf("+%d more", len(all)-3))
			break
		}
		flag := ""
		if !e.Ready {
			flag = " not-ready"
		}
		eps = append(eps, fmt.Sprintf("%s %s%s", dash(e.Address), dash(e.Network), flag))
	}
	if len(eps) == 0 {
		return "(none)"
	}
	return strings.Join(eps, ", ")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// orGateway names what a gateway comes from: its Service, else its Gateway
// API Gateway.
func orGateway(g model.Gateway) string {
	if g.Service != "" {
		return g.Service
	}
	return g.Gateway
}

// gatewayNameText says what a gateway DNS name resolved to, and where.
func gatewayNameText(n model.GatewayName) string {
	switch {
	case n.Pending:
		return "not resolved (" + n.Err + ")"
	case n.Resolves() && n.Err != "":
		return strings.Join(n.Addresses, ", ") + " (the last query failed, the previous answer is kept: " + n.Err + ")"
	case n.Resolves():
		return fmt.Sprintf("%s (resolved from where meshscope runs, TTL %s)", strings.Join(n.Addresses, ", "), n.TTL)
	case n.Err != "":
		return "no address: " + n.Err
	}
	return "does not resolve: istiod drops its gateways"
}
