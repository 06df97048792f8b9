package demo

import (
	"context"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/meshscope/meshscope/model"
)

// ensureWorkload writes what the deployment and replica-set controllers
// would have, had a Deployment made the demo's pods: Deployment
// NAME-VERSION selecting the service's pods of that version, and its
// ReplicaSet NAME-VERSION-HASH (the owner createPod gives each pod). A
// fix reads them (a pod template's label), as on a real cluster; nothing
// in the demo acts on them. labels are a pod's: the template keeps those
// every pod of the version shares (not a pod's own locality), and one app
// container (the sidecar is the injector's, not the template's).
func (c *cluster) ensureWorkload(ctx context.Context, s svcDef, version, hash string, labels map[string]string) error {
	name := s.Name + "-" + version
	tmplLabels := maps.Clone(labels)
	delete(tmplLabels, model.LabelLocality)
	delete(tmplLabels, "pod-template-hash")
	sel := map[string]string{"app": s.Name, "version": version}
	tmpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: tmplLabels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.invalid/" + s.Name + ":" + version}}},
	}
	apps := c.client.AppsV1()
	d, err := apps.Deployments(s.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		d, err = apps.Deployments(s.Namespace).Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.Namespace, Labels: sel},
			Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(int32(s.Replicas[c.def.ID])), Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: tmpl},
		}, metav1.CreateOptions{})
	}
	if err != nil {
		return err
	}
	rsTmpl := *tmpl.DeepCopy()
	rsTmpl.Labels["pod-template-hash"] = hash
	rsSel := maps.Clone(sel)
	rsSel["pod-template-hash"] = hash
	_, err = apps.ReplicaSets(s.Namespace).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-" + hash, Namespace: s.Namespace, Labels: rsTmpl.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: rsSel}, Template: rsTmpl},
	}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
