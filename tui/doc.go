// Package tui is meshscope's terminal UI, a Bubble Tea v2 program.
//
// It reads everything it shows from a Feed (collector snapshots, xDS
// events, the actual EDS per viewpoint, stream states) through commands that
// wait on the feed's channels and re-arm after each message, so Update never
// blocks and the UI never calls client-go or gRPC. Work proportional to the
// mesh (problems, per-service verdicts, counts, and the kube changes since
// the previous snapshot) is done once per snapshot in a background command
// (deriveCmd); View draws only the visible rows.
//
// The root Model owns the shared state, the stack of views, the command
// line and the chrome. Views, one file each: clusters (first screen, with
// networks and gateways), services (:svc; in a mesh that uses ambient mode
// with each service's data-plane mode), service (enter on a service: one
// column per viewpoint; for a service in ambient mode, w switches to one
// column per control plane with what its ztunnels get over WDS,
// view_ambient.go), problems (:problems), events (:events, the
// timeline of xDS events and kube changes), compare (:compare A B), diff
// (:diff A B), proxy config (:pc A [B]), the mesh's real proxies
// (:proxies, view_proxies.go) and the map (:map, view_map.go). The
// proxies and the map are built off the update loop too, in fleetCmd
// (fleet.go), from the index and the feed's polls of istiod's syncz. A
// what-if (:whatif FILE, whatif.go) is answered off the update loop too,
// through Options.WhatIf, and laid over the services, service
// (view_service_whatif.go) and problems views until dropped. A view reads the program only
// through a viewContext (index, styles, keys, feed, clock, stream states,
// size), never calls another view, and asks the root to move by returning a
// navigation message (nav.go). The root tells every view what changed in
// one loop (refreshAll). Lists share a listState: selection is by key
// (hostname, cluster ID, timeline entry), so live updates never move the
// cursor.
//
// Keys follow k9s: ":" command mode (one table, commands.go, gives the
// completion, the help and the errors), "/" filter (fuzzy, best match
// first, for services), enter, esc, "?" help, tab, q.
package tui
