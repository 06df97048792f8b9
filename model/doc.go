// Package model is meshscope's model of a multicluster Istio mesh, apart
// from the machinery that fills it (package collector): the immutable
// Snapshot (clusters with their sync and watch health, networks, gateways,
// services across clusters with their endpoints, Istio config, mesh config,
// ambient facts, root CAs, istiod pods), the labels and annotations istiod
// reads, the parsers of what people write (mesh config, meshNetworks, root
// certificates) and the pure queries every reader shares: the mesh as one
// control plane sees it (ForControlPlane, Restrict), the control planes
// (ControlPlanes) and what changed between two snapshots (DiffSnapshots).
//
// It imports no client-go: the predictions (analysis/horizon,
// analysis/ambient), the diagnosis (analysis/explain), the UI and the
// commands read a Snapshot without linking informers, and a Snapshot can
// be built from objects that never came from an API server.
package model
