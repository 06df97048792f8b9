// Package lab runs the real test bed of meshscope on loopback: one etcd, one
// kube-apiserver per lab cluster and a real istiod (pilot-discovery), all
// built from their Go modules and cached in .lab/bin (README: "The lab"). It
// seeds a two-cluster, two-network fixture — helloworld and sleep in both
// clusters behind an east-west gateway each — through client-go and offers
// the mutations the e2e tests need. It is a test bed: nothing in the meshscope binary imports it.
package lab
