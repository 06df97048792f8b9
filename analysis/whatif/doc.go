// Package whatif answers "what will this change do to every proxy's
// traffic?" before the change is made: it reads changes written as
// Kubernetes objects (input.go: files, directories or stdin, as kubectl
// apply -f and delete -f take them), has the collector build the mesh as
// it is and as it would be (collector.Registry.WhatIf: the same
// transforms, parsers, planning and build as real events), and compares
// the two the way istiod would serve them (diff.go): every service port
// from every viewpoint — each network's sidecars and a proxy without
// NETWORK, per control plane, and each control plane's ztunnel view in
// ambient mode — with the endpoints before and after, the share of each
// network and why; then the doctor problems the change brings and the ones
// it resolves (report.go), and whether a pipeline should stop (fail.go).
package whatif
