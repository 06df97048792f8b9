// Package collector fills meshscope's model of a multicluster Istio mesh
// (package model): it finds the clusters it can reach (from kube contexts
// and from istiod-style remote secrets), plans the clusters of the mesh,
// watches each through a watcher of its own (package collector/watch:
// informers, sync and watch health, slim caches, object parsers), and
// builds every service, endpoint, network and east-west gateway in them
// into a model.Snapshot (package collector/build), resolved the way
// istiod resolves them (docs/istiod-rules.md). This package is the
// Registry: plan, apply, make-before-break swaps, gather and publish, and
// a what-if's two snapshots.
//
// Data flows one way: informers → Registry → immutable *model.Snapshot →
// readers. The Registry only ever lists and watches; it never writes to a
// cluster. Readers (the TUI, the CLI) get snapshots and never touch
// client-go.
//
// Secrets stay secret: kubeconfig bodies, tokens and keys never leave the
// informer caches and rest.Configs; errors are classified into sentences
// (package collector/internal/errs) and redacted before they reach a
// Snapshot or a log.
package collector
