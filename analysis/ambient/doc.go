// Package ambient predicts what an istiod in ambient multi-network mode
// sends a ztunnel over the workload discovery API (WDS), and compares the
// prediction with what it really sent (xdsclient.WDSClient).
//
// The rules mirror istiod's ambient index (pilot/pkg/serviceregistry/ambient
// and pilot/pkg/xds/workload.go); docs/ambient.md lists each with the
// function it comes from. In short, for a service S and the istiod of
// cluster C, on network N (the network label of C's system namespace):
//
//   - WDS is drawn around istiod's own network N, not the client's: every
//     ztunnel of one istiod gets the same workloads. A prediction is per
//     control plane (View), never per viewpoint.
//   - S is global in a cluster when a serviceScopeConfigs entry of istiod's
//     mesh config selects it (namespace labels and Service labels there).
//     Another cluster's non-global S is never read; C's own S always is.
//   - The Service resource merges the VIPs of every cluster's S when the
//     merged S is global; when C has S and it is not global, only C's S.
//   - Pods backing S in clusters of network N are sent one by one.
//   - Pods backing S in another network M are merged into one split-horizon
//     workload per (M, S), reached through M's network gateway (its HBONE
//     port, 15008 when the gateway gives none), with capacity the sum of
//     theirs — when the merged S is global and M has a gateway; otherwise
//     they are dropped, with that reason.
//   - Network gateways are Gateway API Gateways: of class istio-east-west
//     in the other clusters (HBONE listener, TLS terminated), of class
//     istio-remote in C itself; with several for one network istiod uses
//     the first it finds (istio/istio#59273), so the prediction names the
//     candidates and flags it.
package ambient
