package whatif

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/meshscope/meshscope/model"
)

// The kinds a what-if takes: the objects meshscope reads (and models as
// istiod does), the ones istiod reads that meshscope does not model, and
// the rest, which istiod never reads.

const (
	groupIstioNetworking = "networking.istio.io"
	groupIstioSecurity   = "security.istio.io"
	groupIstioTelemetry  = "telemetry.istio.io"
	groupIstioExtensions = "extensions.istio.io"
	groupGatewayAPI      = "gateway.networking.k8s.io"
)

// modelled are the kinds the collector reads.
var modelled = map[schema.GroupKind]bool{
	{Kind: "Namespace"}: true, {Kind: "Service"}: true, {Kind: "Pod"}: true, {Kind: "Node"}: true,
	{Kind: "Secret"}: true, {Kind: "ConfigMap"}: true,
	{Group: "discovery.k8s.io", Kind: "EndpointSlice"}:      true,
	{Group: groupIstioNetworking, Kind: "DestinationRule"}:  true,
	{Group: groupIstioNetworking, Kind: "Sidecar"}:          true,
	{Group: groupIstioNetworking, Kind: "VirtualService"}:   true,
	{Group: groupIstioNetworking, Kind: "ServiceEntry"}:     true,
	{Group: groupIstioNetworking, Kind: "WorkloadEntry"}:    true,
	{Group: groupIstioNetworking, Kind: "Gateway"}:          true,
	{Group: groupIstioSecurity, Kind: "PeerAuthentication"}: true,
	{Group: groupGatewayAPI, Kind: "Gateway"}:               true,
}

// istiodReads are kinds istiod reads that meshscope does not model, with
// what they change (none of them the endpoints of a service).
var istiodReads = map[schema.GroupKind]string{
	{Group: groupIstioSecurity, Kind: "AuthorizationPolicy"}:   "who may call whom (RBAC filters), not which endpoints are sent",
	{Group: groupIstioSecurity, Kind: "RequestAuthentication"}: "JWT rules in the proxies' listeners, not which endpoints are sent",
	{Group: groupIstioTelemetry, Kind: "Telemetry"}:            "metrics, logs and traces",
	{Group: groupIstioNetworking, Kind: "EnvoyFilter"}:         "patches of the Envoy config istiod generates: meshscope cannot predict them",
	{Group: groupIstioExtensions, Kind: "WasmPlugin"}:          "Wasm filters in the proxies' listeners",
	{Group: groupIstioNetworking, Kind: "ProxyConfig"}:         "proxy bootstrap settings, applied at the proxy's start",
	{Group: groupIstioNetworking, Kind: "WorkloadGroup"}:       "a template istiod makes WorkloadEntries from when VMs register: write the WorkloadEntries instead",
	{Group: groupGatewayAPI, Kind: "HTTPRoute"}:                "routes (meshscope models the endpoints of the services they name)",
	{Group: groupGatewayAPI, Kind: "GRPCRoute"}:                "routes (meshscope models the endpoints of the services they name)",
	{Group: groupGatewayAPI, Kind: "TCPRoute"}:                 "routes (meshscope models the endpoints of the services they name)",
	{Group: groupGatewayAPI, Kind: "TLSRoute"}:                 "routes (meshscope models the endpoints of the services they name)",
	{Group: groupGatewayAPI, Kind: "ReferenceGrant"}:           "which routes may name services of another namespace",
}

// workloadControllers are the controllers whose pods a what-if re-makes from their
// template (collector/watch ApplyWorkload): istiod reads the pods, not
// them.
var workloadControllers = map[schema.GroupKind]bool{
	{Group: "apps", Kind: "Deployment"}: true, {Group: "apps", Kind: "StatefulSet"}: true,
	{Group: "apps", Kind: "DaemonSet"}: true, {Group: "apps", Kind: "ReplicaSet"}: true,
}

// jobs make pods that run to completion, which meshscope does not make
// from their template.
var jobs = map[string]bool{"Job": true, "CronJob": true}

// clusterScoped kinds have no namespace (kubectl puts the others in
// "default" when the object names none).
var clusterScoped = map[string]bool{"Namespace": true, "Node": true}

// unmodelled says why a kind changes nothing meshscope predicts ("" for
// the kinds it reads, and for workload controllers, which it expands into
// the pods they own), and whether istiod reads it.
func unmodelled(gk schema.GroupKind) (why string, istiodReadsIt bool) {
	if modelled[gk] {
		return "", true
	}
	if workloadControllers[gk] {
		return "", false
	}
	if w, ok := istiodReads[gk]; ok {
		return "istiod reads it, meshscope does not model it: it changes " + w, true
	}
	if jobs[gk.Kind] {
		return "istiod does not read " + gk.Kind + "s, only the Pods and EndpointSlices they make: write those to see the change (meshscope re-makes the pods of Deployments, StatefulSets, DaemonSets and ReplicaSets, not of Jobs)", false
	}
	return "istiod does not read it", false
}

// checkIstioGateway refuses a networking.istio.io Gateway whose server
// names a tls.mode istiod does not know: the API server's schema would
// refuse it, so a what-if must not pretend it applies.
func checkIstioGateway(u *unstructured.Unstructured) error {
	if u.GroupVersionKind().GroupKind() != (schema.GroupKind{Group: groupIstioNetworking, Kind: "Gateway"}) {
		return nil
	}
	servers, _, _ := unstructured.NestedSlice(u.Object, "spec", "servers")
	for i, s := range servers {
		m, _ := s.(map[string]any)
		mode, _, _ := unstructured.NestedString(m, "tls", "mode")
		if err := model.CheckServerTLSMode(mode); err != nil {
			return fmt.Errorf("spec.servers[%d]: %w", i, err)
		}
	}
	return nil
}
