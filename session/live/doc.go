// Package live runs meshscope's live session against a mesh: the collector
// on the kube contexts (or the demo mesh), the control planes to
// impersonate proxies against, and the streams to them.
//
//   - Open starts a Session: a running collector.Registry, the control
//     planes given (--xds-address) or, without any, port-forwards to the
//     istiod pod of the first context, one per istiod port, shared, healing,
//     and tried again after a retry delay when they fail.
//   - Session.ControlPlaneFor picks the istiod serving a viewpoint;
//     Session.IstiodViews reads istiod's own debug view; Session.Settle
//     waits for the clusters to sync; Session.FetchEDS asks once for a few
//     EDS names from a few viewpoints (explain); Session.FetchWDS asks each
//     control plane once for the workload API as a ztunnel (ambient mode);
//     Session.ControlPlaneIDs names the control planes meshscope can ask.
//   - Session.Feed supervises the streams a live reader needs — one sidecar
//     per network and control plane, started as networks appear, retried
//     when they fail to start, sharing one gRPC connection per control
//     plane — plus, when the mesh uses ambient mode, one ztunnel per control
//     plane (WDS) — and polls istiod's debug view. It serves what the terminal
//     UI's Feed asks for (snapshots, events, actual EDS, stream status,
//     proxy config, istiod's view) without this package knowing the UI.
//   - Watch runs streams for the watch command: given viewpoints (and
//     ztunnels) on given control planes (or through a port-forward), until
//     cancelled.
//
// The package speaks xDS through xdsclient and reaches istiod through
// session/istiod; it holds no flags and prints nothing.
//
// Typical use:
//
//	s, err := live.Open(ctx, live.Options{Collector: collector.Options{Contexts: []string{"cluster1"}}})
//	defer s.Close()
//	snap, err := s.Settle(ctx)
//	feed := s.Feed(ctx, xdsclient.ModeDelta)
//	defer feed.Close()
//	for snap := range feed.Snapshots() { ... feed.Status() ... }
package live
