package demo

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"sigs.k8s.io/yaml"
)

// The Istio config of cluster1, the demo's config cluster (its istiod reads
// Istio config there only): a VM service — a ServiceEntry whose
// workloadSelector picks a WorkloadEntry on each network, so network1 gets
// its own VM and network2's gateway —, and a DestinationRule with a subset
// per version of bookinfo's reviews (v1 in cluster1, v2 in cluster2, v3 in
// cluster3).
var istioConfig = []string{`
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: vm, namespace: sample, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  hosts: [vm.mesh.internal]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [{number: 8080, name: http, protocol: HTTP}]
  workloadSelector: {labels: {app: vm}}
`, `
apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata: {name: vm-net1, namespace: sample, labels: {app: vm}, creationTimestamp: "2026-01-01T00:00:00Z"}
spec: {address: 10.44.0.80, network: network1, serviceAccount: vm, locality: region1/zone-a}
`, `
apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata: {name: vm-net2, namespace: sample, labels: {app: vm}, creationTimestamp: "2026-01-01T00:00:00Z"}
spec: {address: 10.144.0.80, network: network2, serviceAccount: vm, locality: region2/zone-a}
`, `
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: reviews, namespace: bookinfo, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  host: reviews
  subsets:
  - {name: v1, labels: {version: v1}}
  - {name: v2, labels: {version: v2}}
  - {name: v3, labels: {version: v3}}
`}

// istioClient is a dynamic client holding istioConfig, for the resources
// the collector lists (Istio's and the Gateway API's).
func istioClient() (*dynamicfake.FakeDynamicClient, error) {
	kinds := map[schema.GroupVersionResource]string{
		{Group: "networking.istio.io", Version: "v1", Resource: "destinationrules"}:  "DestinationRuleList",
		{Group: "security.istio.io", Version: "v1", Resource: "peerauthentications"}: "PeerAuthenticationList",
		{Group: "networking.istio.io", Version: "v1", Resource: "serviceentries"}:    "ServiceEntryList",
		{Group: "networking.istio.io", Version: "v1", Resource: "workloadentries"}:   "WorkloadEntryList",
		{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}:    "GatewayList",
	}
	var objs []runtime.Object
	for _, doc := range istioConfig {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return nil, err
		}
		objs = append(objs, u)
	}
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), kinds, objs...), nil
}
