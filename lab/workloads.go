package lab

import (
	"context"
	"fmt"
	"maps"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/meshscope/meshscope/internal/kubesim"
)

// The lab runs no controller-manager: no Deployment makes a pod. AdoptPod
// writes what the deployment and replica-set controllers would have
// written had a Deployment made an existing pod, so that a what-if of the
// Deployment has a pod to re-make: nothing acts on them.

// AdoptPod makes Deployment deployment own pod in namespace, as if it had
// made it: a Deployment selecting the pod's app and version labels whose
// template holds the pod's labels and containers, a ReplicaSet
// deployment-HASH owned by it (HASH: the part of the pod's name after
// "deployment-", helloworld-v2-54df5f84b-9hxgw's 54df5f84b), and the pod
// owned by that ReplicaSet with label pod-template-hash=HASH.
func (l *Lab) AdoptPod(ctx context.Context, cluster, namespace, pod, deployment string) error {
	cs, p, err := l.podIn(ctx, cluster, namespace, pod)
	if err != nil {
		return err
	}
	hash, _, ok := strings.Cut(strings.TrimPrefix(pod, deployment+"-"), "-")
	if !ok || !strings.HasPrefix(pod, deployment+"-") {
		return fmt.Errorf("pod %s is not named %s-HASH-SUFFIX", pod, deployment)
	}
	sel := map[string]string{}
	for _, k := range []string{"app", "version"} {
		if v, ok := p.Labels[k]; ok {
			sel[k] = v
		}
	}
	tmpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(p.Labels), Annotations: maps.Clone(p.Annotations)},
		Spec:       corev1.PodSpec{ServiceAccountName: p.Spec.ServiceAccountName},
	}
	for _, ct := range p.Spec.Containers {
		// The containers as written, without what admission added (the
		// service account token's volume).
		tmpl.Spec.Containers = append(tmpl.Spec.Containers, corev1.Container{Name: ct.Name, Image: ct.Image, Args: ct.Args, Env: ct.Env, Ports: ct.Ports})
	}
	delete(tmpl.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	d, err := cs.AppsV1().Deployments(namespace).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: deployment, Namespace: namespace},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: tmpl},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	rsSel := maps.Clone(sel)
	rsSel[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	rsTmpl := *tmpl.DeepCopy()
	rsTmpl.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	rs, err := cs.AppsV1().ReplicaSets(namespace).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: deployment + "-" + hash, Namespace: namespace, Labels: rsTmpl.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: rsSel}, Template: rsTmpl},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}
	if _, err := cs.CoreV1().Pods(namespace).Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		return err
	}
	return kubesim.SyncNamespace(ctx, cs, namespace)
}

// ReleasePod undoes AdoptPod: the pod loses its owner and hash label, the
// ReplicaSets and the Deployment are deleted (no garbage collector runs:
// the pod stays).
func (l *Lab) ReleasePod(ctx context.Context, cluster, namespace, pod, deployment string) error {
	cs, p, err := l.podIn(ctx, cluster, namespace, pod)
	if err != nil {
		return err
	}
	hash := p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
	delete(p.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	p.OwnerReferences = nil
	if _, err := cs.CoreV1().Pods(namespace).Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		return err
	}
	if err := cs.AppsV1().ReplicaSets(namespace).Delete(ctx, deployment+"-"+hash, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err := cs.AppsV1().Deployments(namespace).Delete(ctx, deployment, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return kubesim.SyncNamespace(ctx, cs, namespace)
}

// podIn is cluster's client and one of its pods.
func (l *Lab) podIn(ctx context.Context, cluster, namespace, name string) (kubernetes.Interface, *corev1.Pod, error) {
	c, err := l.cluster(cluster)
	if err != nil {
		return nil, nil, err
	}
	p, err := c.client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	return c.client, p, err
}
