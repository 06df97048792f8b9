package live

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshscope/meshscope/analysis/fix"
	"github.com/meshscope/meshscope/analysis/whatif"
	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/model"
)

// Fixes plans the fix of every problem (analysis/fix), builds each
// proposal from the live objects it edits — read whole through the
// cluster's client, never written — and proves it with a what-if on the
// registry's mesh (WhatIf). Nothing is written to any cluster.
// One change that fixes several problems (the same drop seen from two
// networks) is tried once.
func Fixes(ctx context.Context, reg *collector.Registry, snap *model.Snapshot, ps []model.Problem) []fix.Fix {
	b := newBuilder(ctx, reg, snap)
	out := make([]fix.Fix, len(ps))
	for i, p := range ps {
		out[i] = b.fix(p)
	}
	return out
}

// Fix is Fixes for one problem.
func Fix(ctx context.Context, reg *collector.Registry, snap *model.Snapshot, p model.Problem) fix.Fix {
	return newBuilder(ctx, reg, snap).fix(p)
}

func newBuilder(ctx context.Context, reg *collector.Registry, snap *model.Snapshot) *builder {
	return &builder{ctx: ctx, reg: reg, snap: snap, owners: map[model.ObjectRef]ownerOf{}, tried: map[string]*whatif.Report{}}
}

func (b *builder) fix(p model.Problem) fix.Fix {
	plan := fix.Propose(b.snap, p)
	f := fix.Fix{Problem: p, None: plan.None}
	for _, pr := range plan.Proposals {
		f.Proposals = append(f.Proposals, b.offer(p, pr))
	}
	return f
}

// offer builds and proves one proposal.
func (b *builder) offer(p model.Problem, pr fix.Proposal) fix.Offer {
	o := fix.Offer{Proposal: pr}
	ms, err := b.manifests(pr)
	if err == nil && len(pr.Restart) > 0 {
		o.Command, err = b.restarts(pr.Restart)
	}
	if err != nil {
		o.Why = "cannot be built: " + err.Error()
		return o
	}
	o.Manifests = ms
	if pr.Unproven != "" {
		o.Why = "not proven: " + pr.Unproven
		return o
	}
	req := whatif.Request{Diagnose: fix.Services(p)}
	for i, m := range ms {
		req.Objects = append(req.Objects, whatif.Object{Cluster: m.Cluster, Object: m.Change(), Delete: m.Delete, File: "fix", Line: i + 1})
	}
	key := tryKey(pr, req.Diagnose)
	rep, ok := b.tried[key]
	if !ok {
		var err error
		if rep, err = WhatIf(b.reg, req); err != nil {
			o.Why = "what-if cannot try it: " + err.Error()
			return o
		}
		b.tried[key] = rep
	}
	proof := fix.Judge(p, rep)
	o.Proof = &proof
	o.Offered = len(proof.Fail) == 0
	if !o.Offered {
		o.Why = "fails its proof: " + strings.Join(proof.Fail, "; ")
	}
	return o
}

// builder reads the live objects a plan edits, once each.
type builder struct {
	ctx    context.Context
	reg    *collector.Registry
	snap   *model.Snapshot
	owners map[model.ObjectRef]ownerOf
	// podLabels are the labels of the snapshot's pods (made when first
	// needed: replicaSetOf).
	podLabels map[model.ObjectRef]map[string]string
	// tried are the what-ifs already answered, by tryKey.
	tried map[string]*whatif.Report
}

// tryKey identifies a what-if of a proposal: its edits (each object and
// what changes in it) and the services diagnosed.
func tryKey(pr fix.Proposal, diagnose []string) string {
	var b strings.Builder
	for _, e := range pr.Edits {
		fmt.Fprintf(&b, "%s|%v|%v|%v|%v|%s|%s\n", e.Object, e.Template, e.From, e.Delete, e.New, e.RemoteSecret+"/"+e.SecretKey, e.What)
	}
	return b.String() + strings.Join(diagnose, ",")
}

// manifests are a proposal's objects: each object read once and every
// edit of it made in order (a pod template's edits on the workload that
// owns the pod), an object to create copied from its source, an object
// to delete named, a remote secret built in memory.
func (b *builder) manifests(pr fix.Proposal) ([]fix.Manifest, error) {
	var out []fix.Manifest
	at := map[model.ObjectRef]int{}
	for _, e := range pr.Edits {
		ctxName := fix.ContextOf(b.snap, e.Object.Cluster)
		switch {
		case e.RemoteSecret != "" && pr.Unproven != "":
			continue // built for a proof only, and there is none
		case e.RemoteSecret != "":
			u, err := b.reg.RemoteSecretFor(e.RemoteSecret, e.SecretKey)
			if err != nil {
				return nil, err
			}
			u.SetNamespace(e.Object.Namespace)
			u.SetName(e.Object.Name)
			out = append(out, fix.SecretManifest(e.Object.Cluster, u))
			continue
		case e.Delete:
			out = append(out, fix.DeleteManifest(e.Object, ctxName))
			continue
		case e.New:
			u := &unstructured.Unstructured{Object: map[string]any{}}
			if err := e.Apply(u); err != nil {
				return nil, fmt.Errorf("%s: %w", e.Object, err)
			}
			u.SetNamespace(e.Object.Namespace)
			u.SetName(e.Object.Name)
			out = append(out, fix.Manifest{Cluster: e.Object.Cluster, Context: ctxName, Object: u, Create: true})
			continue
		}
		target, src := e.Object, e.Object
		if e.Template {
			o, err := b.ownerOf(e.Object)
			if err != nil {
				return nil, err
			}
			target, src = o.ref, o.ref
		}
		if e.From != nil {
			src = *e.From
		}
		i, seen := at[target]
		if !seen {
			u, err := b.reg.Get(b.ctx, src)
			if err != nil {
				return nil, err
			}
			if e.From != nil {
				u = fix.Copy(u)
				u.SetNamespace(target.Namespace)
				u.SetName(target.Name)
			} else {
				fix.Clean(u)
			}
			i = len(out)
			at[target] = i
			out = append(out, fix.Manifest{Cluster: target.Cluster, Context: ctxName, Object: u, Create: e.From != nil})
		}
		if err := e.Apply(out[i].Object); err != nil {
			return nil, fmt.Errorf("%s: %w", target, err)
		}
	}
	return out, nil
}

// restarts is the command that restarts the workloads of pods.
func (b *builder) restarts(pods []model.ObjectRef) (string, error) {
	var cmds []string
	seen := map[model.ObjectRef]bool{}
	for _, p := range pods {
		o, err := b.ownerOf(p)
		if err != nil {
			return "", err
		}
		if o.ref.Kind == "Pod" {
			return "", fmt.Errorf("%s has no controller to restart it: delete it and make it again", p)
		}
		if seen[o.ref] {
			continue
		}
		seen[o.ref] = true
		cmds = append(cmds, fmt.Sprintf("kubectl rollout restart %s/%s -n %s --context %s", strings.ToLower(o.ref.Kind), o.ref.Name, o.ref.Namespace,
			orDefault(fix.ContextOf(b.snap, o.ref.Cluster), o.ref.Cluster)))
	}
	return strings.Join(cmds, " && "), nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
