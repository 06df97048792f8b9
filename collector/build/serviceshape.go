package build

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshscope/meshscope/model"
)

// serviceShape copies what tells two clusters' copies of one Service apart
// beyond ports (istioctl analyze's IST0170 idea: selector, headless or not)
// and whether its load balancer is still being provisioned.
func serviceShape(sc *model.ServiceInCluster, svc *corev1.Service) {
	sc.Selector = svc.Spec.Selector
	sc.Headless = svc.Spec.ClusterIP == corev1.ClusterIPNone
	sc.Created = svc.CreationTimestamp.Time
	sc.LBPending = svc.Spec.Type == corev1.ServiceTypeLoadBalancer && len(svc.Status.LoadBalancer.Ingress) == 0
}

// trafficDistribution mirrors model.GetTrafficDistribution: the Service's
// spec.trafficDistribution, else its annotation, else its namespace's
// annotation (nsAnnotation); PreferClose reads as PreferSameZone, and an
// unknown annotation value as no preference.
func trafficDistribution(svc *corev1.Service, nsAnnotation string) string {
	norm := func(v string) string {
		switch strings.ToLower(v) {
		case "preferclose", "prefersamezone":
			return "PreferSameZone"
		case "prefersamenode":
			return "PreferSameNode"
		}
		return ""
	}
	if v := svc.Spec.TrafficDistribution; v != nil {
		// An unknown spec value falls through to the annotations.
		if d := norm(*v); d != "" && (*v == corev1.ServiceTrafficDistributionPreferClose || *v == corev1.ServiceTrafficDistributionPreferSameZone || *v == corev1.ServiceTrafficDistributionPreferSameNode) {
			return d
		}
	}
	if v := svc.Annotations[model.AnnotationTrafficDistribution]; v != "" {
		return norm(v)
	}
	return norm(nsAnnotation)
}
