package kubesim

import (
	"context"
	"fmt"
	"net/netip"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/meshscope/meshscope/model"
)

// AmbientServiceScopes is the mesh config of istio's ambient profile for
// multi-network: services labelled istio.io/global=true are global (its
// serviceScopeConfigs).
const AmbientServiceScopes = `serviceScopeConfigs:
- servicesSelector:
    matchExpressions:
    - key: istio.io/global
      operator: In
      values: ["true"]
  scope: GLOBAL
`

// gatewayGVR is Gateway API's Gateway resource.
var gatewayGVR = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}

// AmbientEastWestGateway creates the east-west Gateway of ambient
// multi-network for a network, as istio's gen-eastwest-gateway.sh --ambient
// writes it (class istio-east-west, listener "mesh" on 15008 HBONE, TLS
// terminated with ISTIO_MUTUAL, labelled topology.istio.io/network), and
// writes its status addresses as a gateway controller and load balancer
// would (none: no address yet).
func AmbientEastWestGateway(ctx context.Context, dyn dynamic.Interface, namespace, name, network string, ips ...string) error {
	gw := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1",
		"kind":       "Gateway",
		"metadata": map[string]any{
			"name": name, "namespace": namespace,
			"labels": map[string]any{model.LabelNetwork: network},
		},
		"spec": map[string]any{
			"gatewayClassName": "istio-east-west",
			"listeners": []any{map[string]any{
				"name": "mesh", "port": int64(15008), "protocol": "HBONE",
				"tls": map[string]any{"mode": "Terminate", "options": map[string]any{"gateway.istio.io/tls-terminate-mode": "ISTIO_MUTUAL"}},
			}},
		},
	}}
	if _, err := dyn.Resource(gatewayGVR).Namespace(namespace).Create(ctx, gw, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("east-west Gateway: %w", err)
	}
	return SetGatewayAddresses(ctx, dyn, namespace, name, ips...)
}

// SetGatewayAddresses replaces a Gateway's status.addresses (none: the
// gateway lost its address), as a gateway controller does once its load
// balancer has them: an IP as type IPAddress, anything else as type
// Hostname (an AWS NLB's DNS name).
func SetGatewayAddresses(ctx context.Context, dyn dynamic.Interface, namespace, name string, addrs ...string) error {
	api := dyn.Resource(gatewayGVR).Namespace(namespace)
	gw, err := api.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	status := make([]any, 0, len(addrs))
	for _, a := range addrs {
		typ := model.AddressTypeIP
		if _, err := netip.ParseAddr(a); err != nil {
			typ = model.AddressTypeHostname
		}
		status = append(status, map[string]any{"type": typ, "value": a})
	}
	if err := unstructured.SetNestedSlice(gw.Object, status, "status", "addresses"); err != nil {
		return err
	}
	if _, err := api.UpdateStatus(ctx, gw, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("east-west Gateway %s status: %w", name, err)
	}
	return nil
}
