package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/fix"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/live"
	"github.com/meshscope/meshscope/xdsclient"
)

func init() { subcommands = append(subcommands, newDoctorCmd) }

type doctorOptions struct {
	mesh          meshOptions
	output        string
	offline       bool
	timeout       time.Duration
	mode          string
	skewThreshold int
	staleAfter    time.Duration
	skip          []string
	listChecks    bool
	// fix, fixDir and allFixes: each problem's fix, proven by what-if
	// (doctor_fix.go).
	fix           bool
	fixDir        string
	allFixes      bool
	remoteSecrets []string
}

func newDoctorCmd(g *globalOptions) *cobra.Command {
	o := &doctorOptions{}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "List what is wrong in the mesh: control planes, root CAs, gateways, services, secrets, leaks, drops, skew",
		Long: `doctor reads the mesh like snapshot does and lists every problem it finds,
errors first, the same cause over many pods or services grouped into one
row with a count:

- per control plane: a cluster of the mesh that a primary's istiod does not
  read (no remote secret for it there), with the services whose proxies lose
  endpoints; and, unless --offline, where what each control plane really
  sends (one sidecar per network, every service; through the port-forward to
  istiod or --xds-address) differs from the prediction for the clusters it
  reads — stale endpoints (pods gone or not ready that istiod still sends)
  among them;
- root CAs: clusters whose published roots (ConfigMap istio-ca-root-cert)
  share none, roots expiring within 30 days;
- services missing in a cluster whose sidecars would call them, services
  that differ across clusters, locality failover without outlier detection,
  config that differs between primaries;
- east-west gateways without the mTLS port, a pending load balancer, no ready
  pod, or an address another network's gateway uses;
- remote secrets that fail, name one API server twice, name a cluster unlike
  its istiod's CLUSTER_ID, or lack a permission istiod needs;
- Istio config that leaves istiod without endpoints: a ServiceEntry whose
  workloadSelector picks nothing, a ServiceEntry port named unlike the
  Kubernetes Service's, an unhealthy WorkloadEntry, a mesh config that does
  not parse;
- leaks, mTLS drops, and cross-network skew that endpoint counts do not
  explain (beyond --skew-threshold points);
- ambient mode: a network without an HBONE east-west gateway istiod can
  use, several gateways for one network, east-west Gateways istiod
  ignores, services global in some clusters only (their pods elsewhere are
  dropped); and, unless --offline, where what each control plane sends a
  ztunnel (the workload API) differs from the prediction;
- istiod's own view (/debug/clusterz, /debug/networkz) where it disagrees:
  from --istiod-debug-address, else through a port-forward to port 8080
  of each primary's istiod pod, in the primary's own kube context;
- the mesh's real proxies (each istiod's /debug/syncz, from the same
  address; see meshscope proxies): a pod with an istio-proxy container that
  no istiod lists (proxy-disconnected), a proxy that NACKed or has not
  acknowledged a push for --stale-after (proxy-stale), a sidecar injected with a
  network or cluster its pod no longer has (proxy-identity-drift), proxies
  outside the version skew their istiod supports and primaries on different
  minor versions (version-skew);
- revisions (canary upgrades): a namespace labelled for a revision or tag
  no istiod serves in its cluster, sidecars injected by a revision no istiod
  serves, pods still on the revision their namespace left, and two
  revisions of one primary whose ConfigMaps istio / istio-REV differ in
  meshNetworks, serviceSettings or discoverySelectors.

Each check is named: --list-checks lists them (what each looks at, what it
needs beyond the clusters' objects, the problem kinds it raises), --skip
leaves some out, and a check that did not run (skipped, or an input it
needs was not read: --offline asks no istiod) is said after the problems
("Not run: check sent-eds: …"; JSON: notRun).

--fix adds each problem's fix: the change that resolves it — edits of live
objects (read whole, read-only), or a command where the fix is no object
(istioctl create-remote-secret, a rollout restart) — in order, each with
what it trades, and its proof: what-if on the same mesh predicts the
problem gone, no new error-level problem and no service that loses every
endpoint where a client runs. A proposal that fails its proof is not
offered (the reason is said); one what-if cannot model (a restart, RBAC,
the sidecar injector) is shown with --all-fixes only. --fix-dir DIR writes
each fix as a file kubectl replace -f (create -f for a new object) and
meshscope what-if -f take, its header saying what it fixes and what
what-if predicted. -o json carries
each problem's fix and proof. Nothing is ever written to a cluster.

--remote-secret [CLUSTER=]FILE (istioctl create-remote-secret's output, YAML
or JSON, - for stdin) checks remote secrets before they are applied: in
memory, on CLUSTER (default: every primary but the one it declares), its
credentials tried read-only, every check run before and after; it lists each
key's credential and the problems that are new or name it; a credential that
could not be tried from here makes the answer incomplete (docs/secrets.md).
` + exitHelp("an error-level problem (warnings alone exit 0)"),
		Example: `  meshscope doctor --demo
  meshscope doctor --context cluster1,cluster2 -o json
  meshscope doctor --context cluster1 --xds-address cluster1=127.0.0.1:15010,cluster2=127.0.0.1:15020
  meshscope doctor --offline
  meshscope doctor --list-checks
  meshscope doctor --skip root-cas,localities
  meshscope doctor --demo --fix
  meshscope doctor --fix-dir fixes/ && kubectl replace --context cluster2 -f fixes/01-drop-helloworld-v2-54df5f84b-9hxgw-cluster2.yaml
  istioctl create-remote-secret --context=cluster2 --name=cluster2 | meshscope doctor --context cluster1 --remote-secret -
  meshscope doctor --context cluster1 --remote-secret cluster1=remote-secret-cluster2.yaml -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDoctor(cmd, g, o)
		},
	}
	o.addFlags(cmd)
	return cmd
}

// addFlags defines doctor's flags.
func (o *doctorOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "table", "output format: table or json")
	f.BoolVar(&o.offline, "offline", false, "predict only: do not ask the control planes what they send")
	f.DurationVar(&o.timeout, "timeout", 20*time.Second, "how long to wait for each control plane's CDS and EDS")
	f.StringVar(&o.mode, "xds-mode", "delta", "ADS flavour: delta or sotw")
	f.DurationVar(&o.staleAfter, "stale-after", explain.DefaultStaleAfter, "report a proxy that has not acknowledged istiod's last push for this long (proxy-stale)")
	f.StringSliceVar(&o.skip, "skip", nil, "checks not to run, by name (see --list-checks)")
	f.StringArrayVar(&o.remoteSecrets, "remote-secret", nil, "check remote secrets before they are applied: [CLUSTER=]FILE, - for stdin (istioctl create-remote-secret's output; repeatable)")
	f.BoolVar(&o.listChecks, "list-checks", false, "list doctor's checks (name, what each looks at, what it needs, the problem kinds it raises) and exit")
	f.BoolVar(&o.fix, "fix", false, "show each problem's fix with its proof (what-if on the same mesh)")
	f.StringVar(&o.fixDir, "fix-dir", "", "write each proven fix into this directory, a file per fix and cluster (kubectl replace -f, or create -f for a new object, and meshscope what-if -f take them); implies --fix")
	f.BoolVar(&o.allFixes, "all-fixes", false, "with --fix: also the proposals not offered (unproven, or failing their proof) in full; implies --fix")
	f.IntVar(&o.skewThreshold, "skew-threshold", explain.DefaultSkewThreshold, "report cross-network skew when the share of traffic crossing networks strays more than this many percentage points from what endpoint counts give")
	o.mesh.addFlags(f)
	o.mesh.addIstiodFlag(f)
	_ = cmd.RegisterFlagCompletionFunc("skip", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return explain.CheckNames(), cobra.ShellCompDirectiveNoFileComp
	})
}

func runDoctor(cmd *cobra.Command, g *globalOptions, o *doctorOptions) error {
	if err := checkOutput(o.output, "table", "json"); err != nil {
		return err
	}
	if o.listChecks {
		return writeChecks(cmd.OutOrStdout(), o.output)
	}
	if err := explain.ValidateSkip(o.skip); err != nil {
		return badInput(err)
	}
	if len(o.remoteSecrets) > 0 {
		return runPreflight(cmd, g, o)
	}
	mode, err := xdsclient.ParseMode(o.mode)
	if err != nil {
		return badInput(err)
	}
	if err := checkFixDir(o.fixDir); err != nil {
		return badInput(err)
	}
	withFix := o.fix || o.fixDir != "" || o.allFixes
	if o.skewThreshold < 1 || o.skewThreshold > 100 {
		return badInput(fmt.Errorf("--skew-threshold %d: want 1 to 100 percentage points", o.skewThreshold))
	}
	started := time.Now()
	return withSettledMesh(cmd, g, &o.mesh, "asking each istiod for its views and what it sends", func(ctx context.Context, m *live.Session, snap *model.Snapshot) error {
		src := &doctorAnswers{ctx: ctx, m: m, snap: snap, mode: mode, timeout: o.timeout, offline: o.offline}
		in := explain.Gather(snap, explain.Inputs{Since: started, SkewThreshold: o.skewThreshold, StaleAfter: o.staleAfter, Skip: o.skip}, src)
		if !o.offline {
			// Predict from the newest snapshot: it is at least as new as the EDS.
			snap = m.Registry().Snapshot()
		}
		in.Planes = plane.NewSet(snap, in.Istiod) // the diagnosis's and "Not checked"'s
		d := explain.Run(snap, in)
		ps := append(d.Problems, src.extra...)
		explain.SortProblems(ps)
		res := outcome{finding: doctorFinding(ps), incomplete: andAlso(snap.Unread(), problemsUnread(ps)...)}
		var fixes []fix.Fix
		if withFix {
			fixes = live.Fixes(ctx, m.Registry(), snap, ps)
			if o.fixDir != "" {
				if err := writeFixDir(o.fixDir, fixes); err != nil {
					return err
				}
			}
		}
		if o.output == "json" {
			if err := writeJSON(cmd.OutOrStdout(), struct {
				Problems   []problemJSON      `json:"problems"`
				NotRun     []explain.NotRun   `json:"notRun,omitempty"`
				Incomplete []model.Incomplete `json:"incomplete"`
			}{problemsJSON(ps, fixes), d.NotRun, append([]model.Incomplete{}, res.incomplete...)}); err != nil {
				return err
			}
		} else {
			writeIncomplete(cmd.OutOrStdout(), res.incomplete, servicesKnown(snap))
			writeProblems(cmd.OutOrStdout(), ps)
			writeNotRun(cmd.OutOrStdout(), d.NotRun)
			writeNotChecked(cmd.OutOrStdout(), in.Planes)
			writeOtherRevisions(cmd.OutOrStdout(), snap)
			fix.WriteText(cmd.OutOrStdout(), fixes, o.allFixes)
		}
		return res.exit()
	})
}

// problemJSON is a problem in doctor's JSON, with its fix under --fix.
type problemJSON struct {
	model.Problem
	Fix *fix.Fix `json:"fix,omitempty"`
}

func problemsJSON(ps []model.Problem, fixes []fix.Fix) []problemJSON {
	out := make([]problemJSON, len(ps))
	for i, p := range ps {
		out[i].Problem = p
		if i < len(fixes) {
			out[i].Fix = &fixes[i]
		}
	}
	return out
}

// doctorFinding is doctor's finding: its error-level problems ("" when
// there are none; warnings alone do not fail it).
func doctorFinding(ps []model.Problem) string {
	n := 0
	for _, p := range ps {
		if p.Severity == model.SeverityError {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return plural(n, "error-level problem", "error-level problems")
}

func writeProblems(w io.Writer, ps []model.Problem) {
	if len(ps) == 0 {
		fmt.Fprintln(w, "No problems found.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SEVERITY\tKIND\tCLUSTER\tSERVICE\tPROBLEM")
	for _, p := range ps {
		kind := string(p.Kind)
		if p.Count > 1 {
			kind = fmt.Sprintf("%s ×%d", kind, p.Count)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", strings.ToUpper(string(p.Severity)), kind, dash(p.Cluster), dash(model.ShortHost(p.Service)), p.Sentence)
	}
	tw.Flush()
}

// writeOtherRevisions says, for each primary that runs several istiod
// revisions, how doctor named them: each revision is a control plane of
// its own (its ConfigMap, its Istio config, its proxies), the predicted one
// under the cluster's name and the others as cluster@REV.
func writeOtherRevisions(w io.Writer, snap *model.Snapshot) {
	for _, cp := range snap.ControlPlanes() {
		others := snap.RevisionControlPlanes(cp)
		if len(others) == 0 {
			continue
		}
		fmt.Fprintf(w, "istiod %s runs %d revisions, each a control plane of its own: %s is revision %s, and %s; what each sends is compared with its own prediction when meshscope reaches it (a port-forward to each revision's pod, or --xds-address %s=ADDRESS).\n",
			cp, len(others)+1, cp, snap.ControlPlaneRevision(cp), strings.Join(others, ", "), others[0])
	}
}
