package istiod

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/meshscope/meshscope/model"
)

// DefaultNamespace is where istiod runs unless told otherwise.
const DefaultNamespace = "istio-system"

// FindPod picks the istiod Pod to port-forward to, as istioctl does: a
// Pod labelled app=istiod in the system namespace, Running and Ready
// (newest first). revision, when set, narrows by istio.io/rev — a revision
// tag of that name (istio-revision-tag-*) stands for its revision — where
// such pods exist; otherwise, as when it is not set, a pod of the default
// revision (label istio.io/rev absent or "default") wins over a newer one
// of another revision. The caller predicts the same way
// (model.Cluster.EffectiveRevision): the revision asked where it runs,
// else the default. It only lists Pods and webhook configurations
// (read-only).
func FindPod(ctx context.Context, cs kubernetes.Interface, namespace, revision string) (*corev1.Pod, error) {
	if namespace == "" {
		namespace = DefaultNamespace
	}
	sel := "app=istiod"
	list, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("listing istiod pods in %s: %w", namespace, err)
	}
	if revision != "" {
		if of := podsOfRevision(list.Items, revision); len(of) > 0 {
			list.Items, sel = of, sel+",istio.io/rev="+revision
		} else if rev := tagRevision(ctx, cs, revision); rev != "" && len(podsOfRevision(list.Items, rev)) > 0 {
			list.Items, sel = podsOfRevision(list.Items, rev), sel+",istio.io/rev="+rev
		} else {
			revision = "" // not running here: the default revision's
		}
	}
	var ready []corev1.Pod
	var seen []string
	for _, p := range list.Items {
		seen = append(seen, p.Name+" ("+string(p.Status.Phase)+")")
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil && podReady(&p) {
			ready = append(ready, p)
		}
	}
	if len(ready) == 0 {
		if len(seen) == 0 {
			return nil, fmt.Errorf("no istiod pod (label %s) in namespace %s: is Istio installed there? or give --xds-address", sel, namespace)
		}
		return nil, fmt.Errorf("no istiod pod is running and ready in %s: %s", namespace, strings.Join(seen, ", "))
	}
	slices.SortFunc(ready, func(a, b corev1.Pod) int {
		if revision == "" {
			if da, db := isDefaultRevision(&a), isDefaultRevision(&b); da != db {
				if da {
					return -1
				}
				return 1
			}
		}
		return b.CreationTimestamp.Compare(a.CreationTimestamp.Time)
	})
	return &ready[0], nil
}

func podsOfRevision(pods []corev1.Pod, rev string) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		if p.Labels[model.LabelRev] == rev || rev == model.RevisionDefault && p.Labels[model.LabelRev] == "" {
			out = append(out, p)
		}
	}
	return out
}

// tagRevision is the revision the revision tag name points to, "" when
// there is none or it cannot be read.
func tagRevision(ctx context.Context, cs kubernetes.Interface, name string) string {
	l, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{LabelSelector: model.LabelTag + "=" + name})
	if err != nil {
		return ""
	}
	for _, m := range l.Items {
		if m.Labels[model.LabelTag] == name && m.Labels[model.LabelRev] != "" {
			return m.Labels[model.LabelRev]
		}
	}
	return ""
}

func isDefaultRevision(p *corev1.Pod) bool {
	r := p.Labels[model.LabelRev]
	return r == "" || r == model.RevisionDefault
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
