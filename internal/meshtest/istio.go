package meshtest

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"sigs.k8s.io/yaml"
)

// IstioObject is an object written as YAML (Istio config, a Gateway), as
// the dynamic client hands it over.
func IstioObject(t testing.TB, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// CrossNetworkGateway is istio's samples/multicluster/expose-services.yaml
// Gateway: an AUTO_PASSTHROUGH server on 15443 for "*.local", selecting
// istio=eastwestgateway (IstioObject reads it).
const CrossNetworkGateway = `apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: cross-network-gateway, namespace: istio-system}
spec:
  selector: {istio: eastwestgateway}
  servers:
  - port: {number: 15443, name: tls, protocol: TLS}
    tls: {mode: AUTO_PASSTHROUGH}
    hosts: ["*.local"]
`

// GatewaysGVR is the resource of Gateway API Gateways, for a test that
// changes them in a FakeIstio.
var GatewaysGVR = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}

// FakeIstio is a dynamic client holding Istio config objects and Gateways
// (the kinds of list a fake cannot guess are given).
func FakeIstio(objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
	istio := func(group, resource string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: group, Version: "v1", Resource: resource}
	}
	kinds := map[schema.GroupVersionResource]string{
		istio("networking.istio.io", "destinationrules"): "DestinationRuleList", istio("security.istio.io", "peerauthentications"): "PeerAuthenticationList",
		istio("networking.istio.io", "serviceentries"): "ServiceEntryList", istio("networking.istio.io", "workloadentries"): "WorkloadEntryList", GatewaysGVR: "GatewayList",
		istio("networking.istio.io", "sidecars"): "SidecarList", istio("networking.istio.io", "virtualservices"): "VirtualServiceList",
		istio("networking.istio.io", "gateways"): "GatewayList",
	}
	// The objects go in through the tracker under the resource of kinds:
	// the fake's own seeding guesses a kind's plural and files a Gateway
	// under "gatewaies", where no list finds it.
	c := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), kinds)
	for _, o := range objs {
		gvk := o.GetObjectKind().GroupVersionKind()
		gvr, _ := meta.UnsafeGuessKindToResource(gvk)
		for r, list := range kinds {
			if r.GroupVersion() == gvk.GroupVersion() && list == gvk.Kind+"List" {
				gvr = r
			}
		}
		ns := ""
		if m, err := meta.Accessor(o); err == nil {
			ns = m.GetNamespace()
		}
		if err := c.Tracker().Create(gvr, o, ns); err != nil {
			panic(fmt.Sprintf("meshtest.FakeIstio: %s: %v", gvk, err))
		}
	}
	return c
}
