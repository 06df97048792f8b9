package kubesim

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

// NewFakeDynamic is a fake dynamic client that lists the kinds the
// collector reads through one: Gateway API Gateways and Istio config (the
// demo's clusters, the benchmarks' meshes).
func NewFakeDynamic() *dynamicfake.FakeDynamicClient {
	gvr := func(group, res string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: group, Version: "v1", Resource: res}
	}
	kinds := map[schema.GroupVersionResource]string{
		gvr("networking.istio.io", "destinationrules"):  "DestinationRuleList",
		gvr("security.istio.io", "peerauthentications"): "PeerAuthenticationList",
		gvr("networking.istio.io", "serviceentries"):    "ServiceEntryList",
		gvr("networking.istio.io", "workloadentries"):   "WorkloadEntryList",
		gvr("networking.istio.io", "sidecars"):          "SidecarList",
		gvr("networking.istio.io", "virtualservices"):   "VirtualServiceList",
		gvr("networking.istio.io", "gateways"):          "GatewayList",
		gatewayGVR:                                      "GatewayList",
	}
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), kinds)
}
