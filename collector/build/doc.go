// Package build is the pure build of a snapshot: from one cluster's caches
// (Caches: Services, the slim EndpointSlices, Pods and Nodes the watchers
// keep, Namespaces, Gateway API Gateways, WorkloadEntries) to that
// cluster's share (BuildPart → Part), and from every share, the mesh-wide
// Istio config and meshNetworks to one immutable model.Snapshot (Assemble).
// It resolves networks, gateways, localities and ServiceEntry selections
// the way istiod does (docs/istiod-rules.md).
//
// It reads nothing but its input: no informer, no client (it imports no
// client-go), so a snapshot can be built from objects that did not come
// from an API server — the benchmarks' fills, tests, a what-if. The
// collector's Registry feeds it from its watchers (collector/gather.go).
package build
