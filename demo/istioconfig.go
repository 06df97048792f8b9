package demo

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"sigs.k8s.io/yaml"
)

// The Istio config of cluster1, the demo's config cluster (its istiod reads
// Istio config there only): a VM service — a ServiceEntry whose
// workloadSelector picks a WorkloadEntry on each network, so network1 gets
// its own VM and network2's gateway —, and a DestinationRule with a subset
// per version of bookinfo's reviews (v1 in cluster1, v2 in cluster2, v3 in
// cluster3), and istio's cross-network-gateway (expose-services.yaml): the
// AUTO_PASSTHROUGH server that makes the east-west gateways route by SNI.
var istioConfig = []string{`
apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: cross-network-gateway, namespace: istio-system, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  selector: {istio: eastwestgateway}
  servers:
  - port: {number: 15443, name: tls, protocol: TLS}
    tls: {mode: AUTO_PASSTHROUGH}
    hosts: ["*.local"]
`, `
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
		// Added under its resource: the tracker's own guess makes a
		// Gateway "gatewaies", which no informer lists.
		gvr := u.GroupVersionKind().GroupVersion().WithResource(resourceOf(u.GetKind()))
		if err := dyn.Tracker().Create(gvr, u, u.GetNamespace()); err != nil {
			return err
		}
	}
	return nil
}

// resourceOf is a kind's resource as the API server names it: lower case,
// plural ("y" after a consonant becomes "ies": ServiceEntry, serviceentries;
// Gateway, gateways).
func resourceOf(kind string) string {
	r := strings.ToLower(kind)
	if n := len(r); n > 1 && r[n-1] == 'y' && !strings.ContainsRune("aeiou", rune(r[n-2])) {
		return r[:n-1] + "ies"
	}
	return r + "s"
}
