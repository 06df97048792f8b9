package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sahilm/fuzzy"
	"github.com/spf13/cobra"

	"github.com/meshscope/meshscope/analysis/ambient"
	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/istiod"
	"github.com/meshscope/meshscope/session/live"
	"github.com/meshscope/meshscope/xdsclient"
)

func init() { subcommands = append(subcommands, newExplainCmd) }

type explainOptions struct {
	mesh     meshOptions
	from     []string
	port     int32
	output   string
	allViews bool
	timeout  time.Duration
	mode     string
	subset   string
	// namespace is the impersonated proxy's namespace; labels its labels
	// (its locality: topology.kubernetes.io/region, zone).
	namespace string
	labels    map[string]string
	// kube reads the pods of pod:NS/NAME@CONTEXT viewpoints.
	kube istiod.Kube
}

func newExplainCmd(g *globalOptions) *cobra.Command {
	o := &explainOptions{}
	cmd := &cobra.Command{
		Use:   "explain SERVICE",
		Short: "Show the endpoints istiod sends for a service from each network, what it should send, and why",
		Long: `explain impersonates a proxy in each viewpoint (default: one sidecar per
network), asks istiod for the service's EDS, and puts it next to meshscope's
prediction of istiod's split-horizon rules: every endpoint with its kind
(local, gateway, leaked, forced), what it stands for, and why; every dropped
endpoint with its reason; and each difference between actual and predicted
as a sentence with its likely cause. Each view is predicted from the
clusters its control plane reads (its remote secrets, when its cluster is a
context; else its /debug/clusterz with --istiod-debug-address), and a note
says which endpoints it cannot send and why.

SERVICE is name.namespace, a full hostname (also a ServiceEntry host), or a
fuzzy query. --subset explains a DestinationRule subset's cluster
(outbound|PORT|SUBSET|HOST); --namespace puts the proxy in that namespace
(which services it sees depends on their exportTo); --proxy-label gives it
labels: its locality (topology.kubernetes.io/region and zone, which locality
failover and distribute rules are relative to) or those a DestinationRule's
workloadSelector picks.` + exitHelp("a view differs from its prediction (or a ztunnel view does)"),
		Example: `  meshscope explain helloworld.sample --demo
  meshscope explain helloworld.sample --from cluster1/network1 --from cluster2/network2 -o json
  meshscope explain hello --all-views --xds-address 127.0.0.1:15010
  meshscope explain helloworld.sample --subset v2 --namespace sample
  meshscope explain helloworld.sample --proxy-label topology.kubernetes.io/region=us-east-1 --proxy-label topology.kubernetes.io/zone=us-east-1a`,
		Args: exactArgs("SERVICE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExplain(cmd, g, o, args[0])
		},
	}
	f := cmd.Flags()
	o.mesh.addFlags(f)
	o.mesh.addIstiodFlag(f)
	f.StringArrayVar(&o.from, "from", nil, "viewpoint: NETWORK, CLUSTER, CLUSTER/NETWORK, CLUSTER/none (repeatable; default one per network)")
	f.Int32Var(&o.port, "port", 0, "service port (default: every port)")
	f.StringVarP(&o.output, "output", "o", "table", "output format: table or json")
	f.BoolVar(&o.allViews, "all-views", false, "also explain from a proxy without NETWORK (cluster/none)")
	f.DurationVar(&o.timeout, "timeout", 20*time.Second, "how long to wait for istiod's EDS")
	f.StringVar(&o.mode, "xds-mode", "delta", "ADS flavour: delta or sotw")
	f.StringVar(&o.subset, "subset", "", "DestinationRule subset: explain the cluster outbound|PORT|SUBSET|HOST")
	f.StringVar(&o.namespace, "namespace", xdsclient.DefaultNamespace, "the impersonated proxy's namespace (exportTo decides which services it sees)")
	f.StringToStringVar(&o.labels, "proxy-label", nil, "a label of the impersonated proxy, KEY=VALUE (repeatable): its locality (topology.kubernetes.io/region, zone), or what a DestinationRule's workloadSelector matches")
	return cmd
}

// explainResult is the JSON of explain (docs/explain.md): the sidecar
// views, for ambient services the ztunnel views, and what could not be
// read (always a list, [] when nothing).
type explainResult struct {
	Service    string                `json:"service"`
	Views      []explain.View        `json:"views"`
	Ztunnels   []ambient.Explanation `json:"ztunnels,omitempty"`
	Incomplete []model.Incomplete    `json:"incomplete"`
}

func runExplain(cmd *cobra.Command, g *globalOptions, o *explainOptions, query string) error {
	if err := checkOutput(o.output, "table", "json"); err != nil {
		return err
	}
	o.kube = istiod.Kube{Kubeconfig: g.Kubeconfig, Contexts: g.Contexts, Revision: o.mesh.revision}
	return withSettledMesh(cmd, g, &o.mesh, "asking istiod for the service's endpoints", func(ctx context.Context, m *live.Session, snap *model.Snapshot) error {
		return explainService(ctx, cmd, m, snap, o, query)
	})
}

func explainService(ctx context.Context, cmd *cobra.Command, m *live.Session, snap *model.Snapshot, o *explainOptions, query string) error {
	res := explainResult{Service: query, Views: []explain.View{}, Incomplete: snap.Unread()}
	out := outcome{incomplete: res.Incomplete}
	host, err := resolveService(snap, query)
	if err != nil {
		return explainFailed(cmd, o, res, err)
	}
	res.Service = host
	side, sidecars, zt, err := explainTargets(m, snap, host, o.from, o.allViews)
	if err != nil {
		return out.fail(err)
	}
	if sidecars {
		var unread []model.Incomplete
		if res.Views, unread, err = explainSidecars(ctx, m, snap, host, side, o); err != nil {
			return out.fail(err)
		}
		res.Incomplete = andAlso(res.Incomplete, unread...)
	}
	if len(zt) > 0 {
		if res.Ztunnels, err = explainZtunnels(ctx, m, host, zt, o.timeout); err != nil {
			return out.fail(err)
		}
	}
	res.Incomplete = andAlso(res.Incomplete, streamsUnread(res)...)
	if res.Incomplete == nil {
		res.Incomplete = []model.Incomplete{} // JSON: [] when everything was read
	}
	if o.output == "json" {
		if err := writeJSON(cmd.OutOrStdout(), res); err != nil {
			return err
		}
	} else {
		writeIncomplete(cmd.OutOrStdout(), res.Incomplete, "")
		writeExplainTable(cmd.OutOrStdout(), res)
		writeZtunnelTable(cmd.OutOrStdout(), res, len(res.Views) > 0)
	}
	return outcome{finding: explainFinding(res), incomplete: res.Incomplete}.exit()
}

// explainFailed ends explain on err (no such service, most often): with
// -o json the answer is still JSON, with what could not be read; the
// error itself goes to stderr, after the cause when something was not
// read (the service may be in a cluster that was not).
func explainFailed(cmd *cobra.Command, o *explainOptions, res explainResult, err error) error {
	if o.output == "json" && len(res.Incomplete) > 0 {
		if werr := writeJSON(cmd.OutOrStdout(), res); werr != nil {
			return werr
		}
	}
	return outcome{incomplete: res.Incomplete}.fail(err)
}

// explainFinding is explain's finding: the views that differ from their
// prediction, and those sent as predicted whose second hop (a gateway)
// breaks ("" when every one matches).
func explainFinding(res explainResult) string {
	n, broken := 0, 0
	for _, v := range res.Views {
		switch v.Verdict {
		case explain.Match:
		case explain.Broken:
			broken++
		default:
			n++
		}
	}
	for _, z := range res.Ztunnels {
		if z.Verdict != ambient.Match {
			n++
		}
	}
	var parts []string
	if n > 0 {
		parts = append(parts, plural(n, "view differs", "views differ")+" from the prediction")
	}
	if broken > 0 {
		parts = append(parts, plural(broken, "view is", "views are")+" sent as predicted, but a gateway cannot carry the requests (second hop)")
	}
	return strings.Join(parts, "; ")
}

// streamsUnread are the views for which no answer came from istiod (a
// stream that failed, nothing within --timeout): one per control plane and
// cause.
func streamsUnread(res explainResult) []model.Incomplete {
	var out []model.Incomplete
	add := func(i model.Incomplete) { out = append(out, i) } // andAlso keeps one per control plane
	for _, v := range res.Views {
		if v.Error != "" {
			add(model.Incomplete{Cluster: v.Viewpoint.ControlPlane, What: model.IncompleteXDS, Why: v.Error})
		}
	}
	for _, z := range res.Ztunnels {
		if z.Actual == nil && z.Error != "" {
			add(model.Incomplete{Cluster: z.ControlPlane, What: model.IncompleteXDS, Why: z.Error})
		}
	}
	return out
}

// explainSidecars is explain's sidecar part: each viewpoint's EDS for every
// port of the service next to the prediction.
// What could not be read of istiod's own view (--istiod-debug-address)
// is returned as incomplete.
func explainSidecars(ctx context.Context, m *live.Session, snap *model.Snapshot, host string, from []string, o *explainOptions) ([]explain.View, []model.Incomplete, error) {
	svc := snap.Service(host)
	ports := []int32{}
	for _, p := range svc.Ports {
		if o.port == 0 || p.Port == o.port {
			ports = append(ports, p.Port)
		}
	}
	if len(ports) == 0 {
		return nil, nil, fmt.Errorf("%s has no port %d (ports: %s)", host, o.port, portList(svc))
	}
	vps, err := explainViewpoints(snap, from, o.allViews)
	if err != nil {
		return nil, nil, err
	}
	for i := range vps {
		if vps[i].Pod != nil {
			// A real pod as it is: the identity its proxy was injected
			// with (its ISTIO_META_* env), its namespace and labels.
			ref := *vps[i].Pod
			vp, err := o.kube.ViewpointFromPod(ctx, ref)
			if err != nil {
				return nil, nil, podViewpointError(fmt.Errorf("--from %s: %w", ref, err))
			}
			vp.Cluster = live.ContextClusterID(snap, vp.Cluster)
			vp.Pod.Cluster = live.ContextClusterID(snap, ref.Cluster)
			vps[i] = vp
			continue
		}
		vps[i].Namespace = o.namespace
		if len(o.labels) > 0 {
			vps[i].Labels = maps.Clone(o.labels)
		}
	}
	mode, err := xdsclient.ParseMode(o.mode)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, len(ports))
	for i, p := range ports {
		names[i] = horizon.SubsetClusterName(host, o.subset, p)
	}
	actual := m.FetchEDS(ctx, vps, names, mode, o.timeout)
	// Which clusters a control plane reads: from its remote secrets, else
	// from its clusterz when --istiod-debug-address is given (without it,
	// explain does not open a second port-forward just for that).
	var views []istiod.View
	var unread []model.Incomplete
	if o.mesh.istiodDebug != "" {
		var ps []model.Problem
		views, ps = istiodViews(ctx, m, snap)
		unread = problemsUnread(ps)
	}

	// Predict from the newest snapshot: it is at least as new as the EDS.
	snap = m.Registry().Snapshot()
	planes := plane.NewSet(snap, views)
	hops := explain.NewHops(planes, nil) // every view's second hops, from one prediction per gateway pod
	out := []explain.View{}
	for i, vp := range vps {
		for _, p := range ports {
			name := horizon.SubsetClusterName(host, o.subset, p)
			la, ok := actual[i].LoadAssignments[name]
			var lap *xdsclient.LoadAssignment
			if ok {
				lap = &la
			}
			var clp *xdsclient.Cluster
			if cl, ok := actual[i].CDS[name]; ok {
				clp = &cl
			}
			v := explain.ExplainWith(planes, host, p, vp, actual[i].ControlPlane, lap, explain.Extra{Subset: o.subset, Cluster: clp, Hops: hops})
			if !ok {
				v.Error = actual[i].Why
			}
			if n := explain.DriftNote(planes, host, p, vp, actual[i].ControlPlane, o.subset); n != "" {
				v.Notes = append(v.Notes, n)
			}
			out = append(out, v)
		}
	}
	return out, unread, nil
}

func portList(svc *model.Service) string {
	var s []string
	for _, p := range svc.Ports {
		s = append(s, fmt.Sprint(p.Port))
	}
	return strings.Join(s, ", ")
}

// resolveService accepts a full hostname, name.namespace, or a fuzzy query
// over every hostname (the best match wins; ties are reported).
func resolveService(snap *model.Snapshot, q string) (string, error) {
	q = strings.TrimSpace(q)
	if snap.Service(q) != nil {
		return q, nil
	}
	if name, ns, ok := strings.Cut(q, "."); ok && !strings.Contains(ns, ".") && snap.Service(model.Hostname(name, ns)) != nil {
		return model.Hostname(name, ns), nil
	}
	hosts := make([]string, len(snap.Services))
	for i, s := range snap.Services {
		hosts[i] = s.Hostname
	}
	matches := fuzzy.Find(q, hosts)
	if len(matches) == 0 {
		return "", fmt.Errorf("no service matches %q (%d services known; try meshscope snapshot)", q, len(hosts))
	}
	if len(matches) > 1 && matches[0].Score == matches[1].Score {
		var c []string
		for i := 0; i < len(matches) && i < 5 && matches[i].Score == matches[0].Score; i++ {
			c = append(c, matches[i].Str)
		}
		return "", fmt.Errorf("%q is ambiguous: %s", q, strings.Join(c, ", "))
	}
	return matches[0].Str, nil
}

// knownOf tells ParseViewpoint which names are clusters and networks.
func knownOf(snap *model.Snapshot) xdsclient.Known {
	k := xdsclient.Known{Clusters: map[string]string{}, Networks: map[string][]string{}}
	for _, c := range snap.Clusters {
		k.Clusters[c.ID] = c.Network
	}
	for _, n := range snap.Networks {
		k.Networks[n.Name] = n.Clusters
	}
	return k
}

func explainViewpoints(snap *model.Snapshot, from []string, allViews bool) ([]xdsclient.Viewpoint, error) {
	var vps []xdsclient.Viewpoint
	if len(from) > 0 {
		known := knownOf(snap)
		for _, f := range from {
			vp, err := xdsclient.ParseViewpoint(f, known)
			if err != nil {
				return nil, err
			}
			if _, ok := snap.CanonicalControlPlane(vp.ControlPlane); !ok {
				// @cluster1@canary where no canary runs: nothing would
				// predict it.
				cluster, rev := model.SplitControlPlane(vp.ControlPlane)
				revs := "none seen"
				if c := snap.ClusterByID(cluster); c != nil && len(c.Revisions()) > 0 {
					revs = strings.Join(c.Revisions(), ", ")
				}
				return nil, fmt.Errorf("--from %s: no istiod of revision %s runs in %s (revisions there: %s)", f, rev, cluster, revs)
			}
			vps = append(vps, vp)
		}
		return vps, nil
	}
	vps = append(vps, horizon.SidecarViewpoints(snap, "")...)
	if allViews || len(vps) == 0 {
		c := ""
		if len(snap.Clusters) > 0 {
			c = snap.Clusters[0].ID
		}
		vps = append(vps, xdsclient.Viewpoint{Cluster: c, NoNetwork: true, NodeType: xdsclient.Sidecar})
	}
	return vps, nil
}

func writeExplainTable(w io.Writer, res explainResult) {
	for i, v := range res.Views {
		if i > 0 {
			fmt.Fprintln(w)
		}
		what := fmt.Sprintf("%s port %d", res.Service, v.Port)
		if v.Subset != "" {
			what += " subset " + v.Subset
		}
		if v.Source != "" && v.Source != model.SourceKube {
			what += fmt.Sprintf(" (%s in %s)", v.Source, v.Namespace)
		}
		fmt.Fprintf(w, "%s from %s (control plane %s): %s\n", what, v.Viewpoint.Name, dash(v.Viewpoint.ControlPlane), strings.ToUpper(string(v.Verdict)))
		if v.Error != "" {
			fmt.Fprintf(w, "  %s\n", v.Error)
		}
		for _, n := range v.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
		if v.NoEndpoints != "" {
			fmt.Fprintf(w, "  no endpoints: %s\n", v.NoEndpoints)
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		if len(v.Actual)+len(v.Predicted)+len(v.Dropped) > 0 { // no empty table under "no endpoints"
			fmt.Fprintln(tw, "ENDPOINT\tSTATUS\tWEIGHT\tLOCALITY\tSHARE\tKIND\tSTANDS FOR\tCLUSTER\tNETWORK\tWHY")
		}
		pred := map[explain.Key]horizon.Endpoint{}
		kp := explain.Keyer{}
		for _, p := range v.Predicted {
			pred[kp.Key(p.Address, p.Port, p.Locality)] = p
		}
		seen := map[explain.Key]bool{}
		ka := explain.Keyer{}
		for _, a := range v.Actual {
			k := ka.Key(a.Address, a.Port, a.Locality)
			seen[k] = true
			why := "not predicted"
			if p, ok := pred[k]; ok {
				why = p.Why
			}
			fmt.Fprintf(tw, "%s:%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Address, a.Port, a.Health, a.Weight, explain.LocalityText(a.Locality, a.Priority), explain.ShareText(a.Effect), a.Kind, standsFor(a.StandsFor, explain.WorkloadName(a.Pod, a.Workload)), dash(a.Cluster), dash(a.Network), why)
		}
		kp = explain.Keyer{}
		for _, p := range v.Predicted {
			if !seen[kp.Key(p.Address, p.Port, p.Locality)] {
				fmt.Fprintf(tw, "%s:%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Address, p.Port, "NOT SENT", p.Weight, explain.LocalityText(p.Locality, p.Priority), explain.ShareText(p.Effect), p.Kind, standsFor(p.StandsFor, explain.WorkloadName(p.Pod, p.Workload)), dash(p.Cluster), dash(p.Network), "predicted: "+p.Why)
			}
		}
		for _, d := range v.Dropped {
			fmt.Fprintf(tw, "%s:%d\t%s\t-\t-\t-\t%s\t%s\t%s\t%s\t%s\n", d.Address, d.Port, "DROPPED", d.Reason, dash(explain.WorkloadName(d.Pod, d.Workload)), dash(d.Cluster), dash(d.Network), d.Why)
		}
		tw.Flush()
		for _, h := range v.SecondHop {
			fmt.Fprintf(w, "  second hop %s\n", h.Path())
		}
		if line := explain.SplitLine(v); line != "" {
			fmt.Fprintf(w, "  %s\n", line)
		}
		for _, d := range v.Differences {
			fmt.Fprintf(w, "  ! %s\n", d.Sentence)
		}
	}
}

func standsFor(refs []horizon.Ref, pod string) string {
	if len(refs) == 0 {
		return dash(pod)
	}
	if len(refs) == 1 {
		return dash(explain.WorkloadName(refs[0].Pod, refs[0].Workload))
	}
	names := make([]string, 0, len(refs))
	for _, r := range refs {
		names = append(names, explain.WorkloadName(r.Pod, r.Workload))
	}
	sort.Strings(names)
	if len(names) > 3 {
		return fmt.Sprintf("%s +%d", strings.Join(names[:2], ","), len(names)-2)
	}
	return strings.Join(names, ",")
}
