// Package fleet joins what every istiod says of its connected proxies
// (/debug/syncz) with the pods the collector watches: each pod that runs a
// proxy (or that ambient mode captures) is connected to which control
// plane, or to none, and in what sync state; each proxy's identity as
// injected against what the mesh gives it today; versions against their
// istiod's. It is pure: the reads come from session/live, the problems
// it finds are reported by explain.Diagnose.
package fleet
