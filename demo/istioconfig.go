package demo

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// addIstioConfig adds istioConfig to the config cluster's dynamic client.
func addIstioConfig(dyn *dynamicfake.FakeDynamicClient) error {
	for _, doc := range istioConfig {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return err
		}
		if err := dyn.Tracker().Add(u); err != nil {
			return err
		}
	}
	return nil
}
