package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/whatif"
	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/live"
)

// doctor --remote-secret [CLUSTER=]FILE: the checks of a remote secret as
// it would be, before it is applied (docs/secrets.md). The exit codes are
// the commands' contract (exit.go): 0 nothing fails, 1 an error-level
// problem, 2 the input cannot be read, 3 a cluster not read or a
// credential that could not be tried from here (winning over 1).

func runPreflight(cmd *cobra.Command, g *globalOptions, o *doctorOptions) error {
	var srcs []whatif.Source
	for _, f := range o.remoteSecrets {
		srcs = append(srcs, whatif.ParseSource(f))
	}
	objs, err := whatif.Read(srcs, "", cmd.InOrStdin())
	if err != nil {
		return badInput(err)
	}
	if len(objs) == 0 {
		return badInput(errors.New("--remote-secret: the file holds no object"))
	}
	return withSettledMesh(cmd, g, &o.mesh, "trying the remote secrets' credentials", func(ctx context.Context, m *live.Session, snap *model.Snapshot) error {
		res := outcome{incomplete: snap.Unread()}
		objs, err := onHolders(objs, snap)
		if err != nil {
			return res.fail(err)
		}
		src := &doctorAnswers{ctx: ctx, m: m, snap: snap, offline: true}
		in := explain.Inputs{Istiod: src.Istiod(), Skip: o.skip}
		pf, err := live.Preflight(m.Registry(), objs, in)
		if errors.Is(err, collector.ErrWhatIf) {
			return res.fail(err)
		}
		if err != nil {
			return err
		}
		res.finding = doctorFinding(pf.Problems)
		res.incomplete = append(res.incomplete, pf.Incomplete()...)
		if o.output == "json" {
			if err := writeJSON(cmd.OutOrStdout(), struct {
				explain.Preflight
				Incomplete []model.Incomplete `json:"incomplete"`
			}{pf, append([]model.Incomplete{}, res.incomplete...)}); err != nil {
				return err
			}
		} else {
			writeIncomplete(cmd.OutOrStdout(), res.incomplete, "")
			writePreflight(cmd.OutOrStdout(), pf, time.Now())
		}
		return res.exit()
	})
}

// onHolders gives each object without CLUSTER= the clusters it would be
// applied to: every primary whose remote secrets meshscope reads, but one
// the secret declares itself (a secret for cluster2 goes to the others).
func onHolders(objs []whatif.Object, snap *model.Snapshot) ([]whatif.Object, error) {
	var holders []string
	for _, cp := range snap.ControlPlanes() {
		if c := snap.ClusterByID(cp); c != nil && c.IsContext() {
			holders = append(holders, cp)
		}
	}
	var out []whatif.Object
	for _, o := range objs {
		if o.Cluster != "" {
			out = append(out, o)
			continue
		}
		keys := dataKeys(o)
		n := 0
		for _, h := range holders {
			if !slices.Contains(keys, h) || len(keys) > 1 {
				o.Cluster = h
				out = append(out, o)
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("%s: no primary to apply it to (the primaries meshscope reads: %s): give CLUSTER=FILE", o.Origin(), orNone(holders))
		}
	}
	return out, nil
}

// dataKeys are the keys of a Secret's data and stringData.
func dataKeys(o whatif.Object) []string {
	var keys []string
	for _, f := range []string{"data", "stringData"} {
		if m, ok := o.Object.Object[f].(map[string]any); ok {
			for k := range m {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// writePreflight prints each key of the secrets (its credential and what
// trying it found), the what-if's notes, then the problems.
func writePreflight(w io.Writer, pf explain.Preflight, now time.Time) {
	for _, s := range pf.Secrets {
		fmt.Fprintf(w, "%s key %s (%s), applied to %s:\n", s.Ref.Name, s.Ref.Key, s.Origin, s.Ref.In)
		for _, l := range credentialLines(s.RemoteSecret, now) {
			fmt.Fprintln(w, "  "+l)
		}
		if s.Cluster == "" {
			fmt.Fprintf(w, "  istiod %s ignores it: the key is its own cluster's ID\n", s.Ref.In)
		}
	}
	for _, n := range pf.Notes {
		fmt.Fprintln(w, "Note: "+n)
	}
	if len(pf.Secrets) > 0 || len(pf.Notes) > 0 {
		fmt.Fprintln(w)
	}
	writeProblems(w, pf.Problems)
	writeNotRun(w, pf.NotRun)
}

// credentialLines describe a remote secret's credential and its test,
// never a secret: kinds, names and times.
func credentialLines(rs model.RemoteSecret, now time.Time) []string {
	c := rs.Credential
	if c.Invalid != "" {
		return []string{"kubeconfig istiod cannot load: " + c.Invalid}
	}
	auth := c.Short(now)
	if !c.Expires.IsZero() {
		auth += ", until " + c.Expires.UTC().Format("2006-01-02 15:04 UTC")
	}
	if c.Subject != "" {
		auth += ", as " + c.Subject
	}
	ca := map[string]string{"data": "its certificate-authority-data", "file": "a certificate-authority file", "": "the system's roots"}[c.CA]
	if c.Insecure {
		ca = "nothing (insecure-skip-tls-verify)"
	}
	server := "server " + orDash(c.Server) + ", verified with " + ca
	if c.TLSServerName != "" {
		server += " as " + c.TLSServerName
	}
	lines := []string{"credential: " + auth, server}
	if len(c.NeedsOptions) > 0 {
		lines = append(lines, "istiod loads it only with "+model.EnvInsecureKubeconfigOptions+"="+strings.Join(c.NeedsOptions, ","))
	}
	return append(lines, "tried from here: "+rs.Test.Summary())
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
