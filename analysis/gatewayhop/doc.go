// Package gatewayhop predicts the second hop of a cross-network request:
// the remote network's east-west gateway as istiod configures it for a
// router proxy. A sidecar in network1 sends a request for
// helloworld.sample:5000 to network2's gateway address with SNI
// outbound_.5000_._.helloworld.sample.svc.cluster.local and mTLS it does
// not terminate; the gateway's Envoy must have a listener on the port the
// traffic reaches (an AUTO_PASSTHROUGH server of a Gateway selecting its
// pods), a filter chain matching that SNI, an SNI-DNAT cluster of that name
// and healthy endpoints of its own network in it.
//
// The rules are istiod's (docs/istiod-rules.md, "The second hop"):
// which Gateways select a proxy and how their servers merge
// (pilot/pkg/model/push_context.go mergeGateways, model/gateway.go
// mergeGateways, resolvePorts, GetSNIHostsForServer, CheckDuplicates), the
// listener and its SNI filter chains (networking/core/gateway.go
// buildGatewayListeners, builtAutoPassthroughFilterChains), the SNI-DNAT
// clusters (networking/core/cluster.go buildOutboundSniDnatClusters,
// convertResolution, cluster_builder.go applyDestinationRule) over the
// gateway's own sidecar scope (model/sidecar.go
// DefaultSidecarScopeForGateway: the services and DestinationRules visible
// from its namespace, no Sidecar resource), and their endpoints: the
// split-horizon prediction of analysis/horizon with the gateway as the
// proxy and its REQUESTED_NETWORK_VIEW (model/proxy_view.go newProxyView,
// endpoint_builder.go filterIstioEndpoint). The package is pure: it reads a
// snapshot and, to compare, the decoded views of what istiod really sent.
package gatewayhop
