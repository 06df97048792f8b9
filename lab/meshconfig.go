package lab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// MeshConfigMap is the ConfigMap istiod (revision default) reads its mesh
// config from, key "mesh", in its system namespace.
const MeshConfigMap = "istio"

// MeshConfig returns key "mesh" of ConfigMap istio in cluster's system
// namespace.
func (l *Lab) MeshConfig(ctx context.Context, cluster string) (string, error) {
	c, err := l.cluster(cluster)
	if err != nil {
		return "", err
	}
	cm, err := c.client.CoreV1().ConfigMaps(SystemNamespace).Get(ctx, MeshConfigMap, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return cm.Data["mesh"], nil
}

// SetMeshConfig replaces key "mesh" of ConfigMap istio in cluster's system
// namespace; the istiod of that cluster follows it (a full push within a
// second or two). Tests restore MeshConfigText when they are done.
func (l *Lab) SetMeshConfig(ctx context.Context, cluster, text string) error {
	c, err := l.cluster(cluster)
	if err != nil {
		return err
	}
	return writeMeshConfig(ctx, c.client, text)
}

// SetMeshNetworks replaces key "meshNetworks" of ConfigMap istio in
// cluster's system namespace ("" removes it) and, as the kubelet updates
// the ConfigMap volume of a real istiod, the --networksConfig file of
// cluster's istiod, which it watches. It returns the text it replaced.
func (l *Lab) SetMeshNetworks(ctx context.Context, cluster, text string) (old string, err error) {
	c, err := l.cluster(cluster)
	if err != nil {
		return "", err
	}
	old, err = writeConfigMapKey(ctx, c.client, "meshNetworks", text)
	if err != nil {
		return "", err
	}
	for _, is := range l.istiods {
		if is.Cluster != cluster {
			continue
		}
		is.meshNetworks = text
		file := filepath.Join(l.cfg.Dir, "istiod-"+is.Name(), "meshNetworks.yaml")
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			return old, err
		}
	}
	return old, nil
}

// writeConfigMapKey sets one key of ConfigMap istio ("" removes it) and
// returns its old value.
func writeConfigMapKey(ctx context.Context, cs kubernetes.Interface, key, text string) (string, error) {
	api := cs.CoreV1().ConfigMaps(SystemNamespace)
	cm, err := api.Get(ctx, MeshConfigMap, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("ConfigMap %s/%s: %w", SystemNamespace, MeshConfigMap, err)
	}
	old := cm.Data[key]
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	if text == "" {
		delete(cm.Data, key)
	} else {
		cm.Data[key] = text
	}
	_, err = api.Update(ctx, cm, metav1.UpdateOptions{})
	return old, err
}

// writeMeshConfig creates or updates ConfigMap istio with the mesh config.
func writeMeshConfig(ctx context.Context, cs kubernetes.Interface, text string) error {
	api := cs.CoreV1().ConfigMaps(SystemNamespace)
	cm, err := api.Get(ctx, MeshConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: MeshConfigMap, Namespace: SystemNamespace}, Data: map[string]string{"mesh": text}}
		_, err = api.Create(ctx, cm, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return fmt.Errorf("ConfigMap %s/%s: %w", SystemNamespace, MeshConfigMap, err)
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["mesh"] = text
	_, err = api.Update(ctx, cm, metav1.UpdateOptions{})
	return err
}
