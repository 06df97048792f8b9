// Package watch is the machinery that reads one cluster for the
// collector's Registry: a Watcher runs the cluster's informers (Services,
// EndpointSlices, Pods, Nodes, Namespaces, the system namespace's
// ConfigMaps, istiod pods, revision tags, the root CA, remote secrets, and
// Istio config and Gateways through the dynamic client), tracks its sync
// and watch health with a /version probe, keeps slim caches (the informers'
// transforms into collector/build's types, sharing strings and label sets),
// and parses what it caches into the model's types.
//
// It is apart from the Registry so that the plan of the mesh, its
// make-before-break swaps and its publishing read a cluster only through
// what a Watcher offers, and apart from the build (collector/build) so
// that the build reads plain objects, not informers. A what-if reads a
// Watcher through an Overlay of its caches (Shadow), changing nothing of
// the live ones.
//
// It only lists and watches; errors become data (collector/internal/errs),
// redacted of the cluster's credentials.
package watch
