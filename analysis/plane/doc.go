// Package plane is the one home of "what control plane X sees": a View is
// the mesh as the istiod of one control plane (a primary, or another
// running revision of it, cluster1@canary) reads it — the clusters it
// reads and how meshscope knows them (its remote secrets, else its
// /debug/clusterz), its mesh config, Istio config and settings, its
// revision, the gateways at the addresses istiod itself resolved, and the
// horizon index that predicts from it. A Set holds the views of one
// snapshot, each built once, and is built by whoever holds the snapshot:
// the UI's index, one doctor run, each side of a what-if. explain,
// doctor, what-if, the map and the UI all predict through it, so a
// what-if's before is explain's prediction by construction.
//
// The viewpoints meshscope predicts for by default (Viewpoints,
// SidecarViewpoints) live in horizon, next to the proxy model.
package plane
