// Package demo is meshscope's built-in demo mesh: three clusters on two
// networks, simulated with client-go fake clientsets so the collector runs
// its real code path (sources, remote secrets, informers, states, networks,
// gateways), and an in-process xDS server (go-control-plane) that answers the
// real xdsclient with EDS computed by the same split-horizon rules
// (analysis/horizon), and with LDS and RDS shaped like istiod's for a
// sidecar, so the proxy-config view has listeners and routes. cluster1's
// Istio config (in its fake dynamic client) adds a VM service from a
// ServiceEntry and its WorkloadEntries, DestinationRule subsets, whose
// clusters the xDS server serves too, and istio's cross-network-gateway:
// its east-west gateway pods are routers, which the server sends their
// second hop (gateway.go: the AUTO_PASSTHROUGH listener, SNI chains and
// SNI-DNAT clusters analysis/gatewayhop predicts) — the VM's host, outside
// the Gateway's *.local, is the planted broken second hop. Namespace ambient runs in ambient
// mode: the same server sends ztunnels the workload API (WDS)
// analysis/ambient predicts, with Gateway API east-west Gateways in the
// fake dynamic clients. Its pods with sidecars run an istio-proxy
// container, and its control plane serves istiod's debug views on
// loopback (debug.go: /debug/syncz, clusterz, networkz) with planted proxy
// faults (fleet.go). A few problems are planted for explain and doctor to
// find, and live churn keeps the event stream moving. It is only used in
// demo mode.
package demo
