package model

import "strings"

// Labels and defaults istiod uses for network gateways
// (pilot/pkg/serviceregistry/kube/controller/network.go).
const (
	LabelNetwork            = "topology.istio.io/network"
	LabelGatewayPort        = "networking.istio.io/gatewayPort"
	LabelTLSMode            = "security.istio.io/tlsMode"
	DefaultGatewayPort      = 15443
	DefaultGatewayHBONEPort = 15008
)

// AnnotationNodeSelector marks a NodePort Service as a gateway reached on
// the nodes matching the JSON label map it holds.
const AnnotationNodeSelector = "traffic.istio.io/nodeSelector"

// Labels istiod reads to place a pod in a locality.
const (
	// LabelLocality on a pod names its locality outright
	// ("region.zone.subzone": labels cannot hold slashes).
	LabelLocality = "topology.istio.io/locality"
	// LabelLocalityLegacy is the older pod label with the same meaning.
	LabelLocalityLegacy = "istio-locality"
	// LabelSubzone on a node is the third part of its locality.
	LabelSubzone = "topology.istio.io/subzone"

	// LabelRegion and LabelZone are Kubernetes' topology labels (nodes';
	// istiod adds them to workloads' labels for selectors).
	LabelRegion     = "topology.kubernetes.io/region"
	LabelZone       = "topology.kubernetes.io/zone"
	LabelRegionBeta = "failure-domain.beta.kubernetes.io/region"
	LabelZoneBeta   = "failure-domain.beta.kubernetes.io/zone"
)

// PodLabelLocality is the locality a pod names in its own labels, as istiod
// reads it (pkg/model GetLocalityLabel, then SanitizeLocalityLabel):
// topology.istio.io/locality wins over istio-locality even when empty, and
// a value without a slash has its dots turned into slashes. "" means the
// node decides.
func PodLabelLocality(labels map[string]string) string {
	v, ok := labels[LabelLocality]
	if !ok {
		v = labels[LabelLocalityLegacy]
	}
	if v == "" || strings.Contains(v, "/") {
		return v
	}
	return strings.ReplaceAll(v, ".", "/")
}

// NodeLocality is the locality istiod gives the pods of a node with these
// labels (getPodLocality in pilot/pkg/serviceregistry/kube/controller): the
// GA topology labels, else the deprecated failure-domain ones, and the
// subzone label, always joined as "region/zone/subzone" — so a node
// without a subzone gives "region/zone/", with the trailing slash. istiod
// groups endpoints by this exact string, and a pod labelled "region.zone"
// ("region/zone") lands in another group than its neighbour on a node.
func NodeLocality(labels map[string]string) string {
	region := labelOr(labels, LabelRegion, LabelRegionBeta)
	zone := labelOr(labels, LabelZone, LabelZoneBeta)
	subzone := labels[LabelSubzone]
	if region == "" && zone == "" && subzone == "" {
		return ""
	}
	return region + "/" + zone + "/" + subzone
}

func labelOr(labels map[string]string, key, fallback string) string {
	if v := labels[key]; v != "" {
		return v
	}
	return labels[fallback]
}

// AnnotationTrafficDistribution is the Service (or namespace) annotation
// that istiod reads when spec.trafficDistribution is unset.
const AnnotationTrafficDistribution = "networking.istio.io/traffic-distribution"

// Remote secrets: Secrets labelled istio/multiCluster=true in the system
// namespace. Every data key is a cluster ID and its value a kubeconfig
// (istio pkg/kube/multicluster/secretcontroller.go).
const (
	MultiClusterSecretLabel = "istio/multiCluster"
)

// OptionListenerMode is the listener tls option that makes a listener
// auto-passthrough (constants.ListenerModeOption).
const (
	OptionListenerMode      = "gateway.istio.io/listener-protocol"
	ListenerAutoPassthrough = "auto-passthrough"
)

// Labels and annotations of Istio's own objects and of Services.
const (
	// LabelRev names the control-plane revision of an istiod pod (and, on
	// a namespace, the revision that injects it; on an injected pod, the
	// revision that did).
	LabelRev = "istio.io/rev"
	// AnnotationExportTo on a Service lists the namespaces it is
	// visible to.
	AnnotationExportTo = "networking.istio.io/exportTo"
)

// Labels of revision selection (model/revisions.go).
const (
	// LabelInjection on a namespace: "enabled" injects the default
	// revision (it wins over istio.io/rev), "disabled" none.
	LabelInjection = "istio-injection"
	// LabelTag on a tag's MutatingWebhookConfiguration names the tag.
	LabelTag = "istio.io/tag"
)

// Labels and annotations of ambient mode.
const (
	// LabelDataplaneMode on a namespace or pod: "ambient" enrolls it,
	// "none" keeps a pod out of an ambient namespace.
	LabelDataplaneMode = "istio.io/dataplane-mode"
	// AnnotationRedirection is written by istio-cni's node agent on a pod
	// whose traffic it redirects to ztunnel ("enabled"); istiod then sends
	// the pod's workload with tunnel protocol HBONE.
	AnnotationRedirection = "ambient.istio.io/redirection"
	// LabelTunnel "http" says a pod terminates HBONE itself (a sidecar
	// with HBONE, a waypoint).
	LabelTunnel = "networking.istio.io/tunnel"
	// AnnotationGatewayServiceAccount overrides a Gateway's service account.
	AnnotationGatewayServiceAccount = "gateway.istio.io/service-account"
	// LabelUseWaypoint on a Service, namespace or pod names the waypoint
	// (a Gateway) its traffic goes through; "none" opts out.
	LabelUseWaypoint = "istio.io/use-waypoint"
	// LabelUseWaypointNamespace names the waypoint's namespace when it is
	// not the object's own.
	LabelUseWaypointNamespace = "istio.io/use-waypoint-namespace"
	// LabelWaypointFor on a Gateway (or its GatewayClass) says which
	// traffic it is a waypoint for: service (the default), workload, all,
	// none.
	LabelWaypointFor = "istio.io/waypoint-for"
	// LabelGatewayManaged marks the Services istiod deploys for its own
	// gateways; waypoints and east-west gateways get no waypoint.
	LabelGatewayManaged = "gateway.istio.io/managed"
)

// Labels istiod reads off workloads for selectors and telemetry names.
const (
	// labelCluster is the label istiod adds to every workload's labels
	// for selectors: the workload's cluster ID.
	labelCluster = "topology.istio.io/cluster"
	// LabelHostname is Kubernetes' node name label (istiod adds it to a
	// workload's labels: its node).
	LabelHostname = "kubernetes.io/hostname"
	// LabelCanonicalName and LabelCanonicalRevision name a workload's
	// service and version (else app.kubernetes.io/name, app; version).
	LabelCanonicalName     = "service.istio.io/canonical-name"
	LabelCanonicalRevision = "service.istio.io/canonical-revision"
	// AnnotationHealthChecks on a WorkloadEntry turns on its health
	// checks: istiod then sends it only with a Healthy=True condition.
	AnnotationHealthChecks = "proxy.istio.io/health-checks-enabled"
)
