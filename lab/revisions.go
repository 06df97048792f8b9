package lab

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A canary upgrade in the lab: a second istiod in a cluster that already
// runs one, with REVISION=rev, its own ports and working directory, reading
// ConfigMap istio-REV (mesh config) and the same --networksConfig as the
// cluster's default istiod, and a stand-in pod labelled istio.io/rev=REV
// that the kubelet stand-in forwards to. It is added and removed while the
// lab runs, so that the other end-to-end tests, which share one lab, never
// see it.

// revisionPortStep moves a revision's ports away from its cluster's
// default istiod's (cluster2's istiod is +10; the first revision +30).
const revisionPortStep = 10

// AddRevision starts an istiod of revision rev in cluster, with mesh as
// key "mesh" of its ConfigMap istio-REV ("" is MeshConfigText), and waits
// until it is ready with every lab cluster synced. The kubelet stand-in is
// restarted with a forward to its pod.
func (l *Lab) AddRevision(ctx context.Context, cluster, rev, mesh string) (*Istiod, error) {
	if rev == "" || rev == "default" {
		return nil, fmt.Errorf("lab: revision %q: the default revision runs already", rev)
	}
	var base *Istiod
	extra := 0
	for _, is := range l.istiods {
		if is.Cluster != cluster {
			continue
		}
		if is.Revision == "" {
			base = is
		} else if is.Revision == rev {
			return nil, fmt.Errorf("lab: revision %s of %s runs already", rev, cluster)
		} else {
			extra++
		}
	}
	if base == nil {
		return nil, fmt.Errorf("lab: no istiod runs in %s", cluster)
	}
	c, err := l.cluster(cluster)
	if err != nil {
		return nil, err
	}
	if mesh == "" {
		mesh = MeshConfigText
	}
	if err := writeRevisionMeshConfig(ctx, c, rev, mesh); err != nil {
		return nil, err
	}
	step := revisionPortStep * (3 + extra)
	spec := base.IstiodSpec
	spec.Revision = rev
	spec.GRPC += step
	spec.SecureGRPC += step
	spec.HTTP += step
	spec.Monitoring += step
	spec.HTTPS += step
	spec.Ctrlz += step
	is := &Istiod{IstiodSpec: spec, meshNetworks: base.meshNetworks, env: slices.Clone(base.env)}
	l.istiods = append(l.istiods, is)
	if err := l.startIstiod(is); err != nil {
		return nil, err
	}
	if err := l.saveState(); err != nil {
		return nil, err
	}
	if err := l.waitIstiod(ctx, is); err != nil {
		return nil, err
	}
	if l.kubelet != nil {
		if err := registerIstiodPod(ctx, c, l.cfg.KubeletPort, spec, l.istiodSettings(is)); err != nil {
			return nil, fmt.Errorf("%s: istiod pod: %w", is.Name(), err)
		}
		if err := l.restartKubelet(ctx); err != nil {
			return nil, err
		}
	}
	return is, nil
}

// RemoveRevision stops the istiod of revision rev in cluster, deletes its
// stand-in pod and its ConfigMap istio-REV, and restarts the kubelet
// stand-in without its forward.
func (l *Lab) RemoveRevision(ctx context.Context, cluster, rev string) error {
	i := slices.IndexFunc(l.istiods, func(is *Istiod) bool { return is.Cluster == cluster && is.Revision == rev && rev != "" })
	if i < 0 {
		return fmt.Errorf("lab: no istiod of revision %q in %s", rev, cluster)
	}
	is := l.istiods[i]
	if err := is.proc.stop(); err != nil {
		return err
	}
	l.istiods = slices.Delete(l.istiods, i, i+1)
	if err := l.saveState(); err != nil {
		return err
	}
	c, err := l.cluster(cluster)
	if err != nil {
		return err
	}
	zero := int64(0)
	if err := c.client.CoreV1().Pods(SystemNamespace).Delete(ctx, IstiodPodOf(is.IstiodSpec), metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err := c.client.CoreV1().ConfigMaps(SystemNamespace).Delete(ctx, MeshConfigMap+"-"+rev, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if l.kubelet != nil {
		return l.restartKubelet(ctx)
	}
	return nil
}

// SetRevisionMeshConfig replaces key "mesh" of ConfigMap istio-REV in
// cluster (the revision's istiod follows it, as the default one follows
// ConfigMap istio).
func (l *Lab) SetRevisionMeshConfig(ctx context.Context, cluster, rev, mesh string) error {
	c, err := l.cluster(cluster)
	if err != nil {
		return err
	}
	return writeRevisionMeshConfig(ctx, c, rev, mesh)
}

func writeRevisionMeshConfig(ctx context.Context, c *Cluster, rev, mesh string) error {
	api := c.client.CoreV1().ConfigMaps(SystemNamespace)
	name := MeshConfigMap + "-" + rev
	cm, err := api.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: SystemNamespace}, Data: map[string]string{"mesh": mesh}}
		_, err = api.Create(ctx, cm, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return fmt.Errorf("ConfigMap %s/%s: %w", SystemNamespace, name, err)
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["mesh"] = mesh
	_, err = api.Update(ctx, cm, metav1.UpdateOptions{})
	return err
}

// restartKubelet restarts the kubelet stand-in with the forwards of the
// istiods running now (it takes them as flags).
func (l *Lab) restartKubelet(ctx context.Context) error {
	if err := l.kubelet.stop(); err != nil {
		return err
	}
	l.kubelet = nil
	return l.runKubelet(ctx)
}

// istiodPodIPSuffix is the last octet of an istiod stand-in pod's IP:
// .200 for the default revision, .201 and on for the others (the pod IPs
// are data; nothing connects to them).
func istiodPodIPSuffix(s IstiodSpec) string {
	if s.Revision == "" || s.Revision == "default" {
		return ".200"
	}
	return ".201"
}
