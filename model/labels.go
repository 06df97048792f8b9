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
	// LabelRev names the control-plane revision of an istiod pod.
	LabelRev = "istio.io/rev"
	// AnnotationExportTo on a Service lists the namespaces it is
	// visible to.
	AnnotationExportTo = "networking.istio.io/exportTo"
)
