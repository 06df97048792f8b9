// Package fix plans, for each problem doctor finds, the change that fixes
// it, and judges a change by what what-if predicts it does.
//
// It is pure, as every reader of a snapshot: Plan turns a problem and the
// snapshot it was found in into proposals — edits of live objects (a label
// on a Namespace, a Service or the pod template of the workload that owns
// a pod; a DestinationRule's TLS mode; a Service copied into the cluster
// that lacks it; an object deleted) or a command where the fix is not an
// object (istioctl create-remote-secret, a rollout restart) — each saying
// what it trades, or says why no fix is mechanical (plan.go, the table of
// every problem kind in kinds.go). The objects themselves are read by
// whoever can reach the clusters (session/live's Fixes, through
// collector.Registry.Get), edited here (edit.go), and run through what-if
// on the same mesh; Judge (judge.go) says whether the answer proves the
// fix: the problem gone from the after's diagnosis, no new error, no
// service that loses every endpoint where a client runs. Only a proven
// proposal is offered; the others say why not (result.go, text.go).
package fix
