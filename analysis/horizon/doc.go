// Package horizon predicts the EDS that istiod sends a proxy for one service
// port: split horizon, with a reason for every endpoint. It is the one place
// the rules live (design: "one fact, one place"); the CLI, the TUI, the demo's
// xDS server and the tests all call Predict.
//
// The rules follow istiod's pilot/pkg/xds/endpoints (endpoint_builder.go
// filterIstioEndpoint, ep_filters.go EndpointsByNetworkFilter) and
// pilot/pkg/model/network.go (gateway index, LCM scale factor) of the
// istio.io/istio version the lab runs; each rule in predict.go names the
// istiod behaviour it mirrors.
package horizon
