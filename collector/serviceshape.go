package collector

import corev1 "k8s.io/api/core/v1"

// serviceShape copies what tells two clusters' copies of one Service apart
// beyond ports (istioctl analyze's IST0170 idea: selector, headless or not)
// and whether its load balancer is still being provisioned.
func serviceShape(sc *ServiceInCluster, svc *corev1.Service) {
	sc.Selector = svc.Spec.Selector
	sc.Headless = svc.Spec.ClusterIP == corev1.ClusterIPNone
	sc.Created = svc.CreationTimestamp.Time
	sc.LBPending = svc.Spec.Type == corev1.ServiceTypeLoadBalancer && len(svc.Status.LoadBalancer.Ingress) == 0
}
