// Package tui is meshscope's terminal UI, a Bubble Tea v2 program.
//
// It reads everything it shows from a Feed (collector snapshots, xDS
// events, the actual EDS per viewpoint, stream states) through commands that
// wait on the feed's channels and re-arm after each message, so Update never
// blocks and the UI never calls client-go or gRPC. Work proportional to the
// mesh (problems, per-service verdicts, counts) is done once per snapshot in
// a background command (buildIndex); View draws only the visible rows.
//
// Views, one file each: clusters (first screen, with networks and
// gateways), services (:svc), service (enter on a service: one column per
// viewpoint), problems (:problems), events (:events) and compare
// (:compare A B). Selection is by key (hostname, cluster ID, event), so live
// updates never move the cursor. Keys follow k9s: ":" command mode with
// completion, "/" fuzzy filter, enter, esc, "?" help, tab, q.
package tui
