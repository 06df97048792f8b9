// Package lab runs the real test bed of meshscope on loopback: one etcd, one
// kube-apiserver per lab cluster and a real istiod (pilot-discovery), all
// built from Go modules (see shared/docs/real-lab.md). It seeds the fixture of
// the seed article through client-go and offers the mutations the e2e tests
// need. It is a test bed: nothing in the meshscope binary imports it.
package lab
