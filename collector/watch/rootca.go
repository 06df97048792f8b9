package watch

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/meshscope/meshscope/model"
)

// resRootCert names the informer in sentences ("cannot read configmap
// istio-ca-root-cert: forbidden").
const resRootCert = "configmap " + model.RootCertConfigMap

// cachedRootCert is all the cache keeps of the ConfigMap: the parsed
// certificates (or why they do not parse), not the PEM text.
type cachedRootCert struct {
	name, namespace, resourceVersion string
	certs                            []model.RootCert
	err                              string
}

func (c *cachedRootCert) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (c *cachedRootCert) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: c.name, Namespace: c.namespace, ResourceVersion: c.resourceVersion}
}

func (c *cachedRootCert) DeepCopyObject() runtime.Object {
	out := *c
	out.certs = append([]model.RootCert(nil), c.certs...)
	return &out
}

func transformRootCert(obj any) (any, error) {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return obj, nil
	}
	c := &cachedRootCert{name: cm.Name, namespace: cm.Namespace, resourceVersion: cm.ResourceVersion}
	pemText, found := cm.Data[model.RootCertKey]
	if !found {
		c.err = fmt.Sprintf("ConfigMap %s has no key %s", model.RootCertConfigMap, model.RootCertKey)
		return c, nil
	}
	c.certs, c.err = model.ParseRootCerts([]byte(pemText))
	return c, nil
}

// rootCerts reads the cached bundle of the system namespace (fakes ignore
// field selectors, so it is looked up by name).
func (w *Watcher) rootCertsOf(ns string) ([]model.RootCert, string) {
	if w.rootCerts == nil {
		return nil, ""
	}
	c, ok := getOf[*cachedRootCert](w.rootCerts.store(), cache.NewObjectName(ns, model.RootCertConfigMap).String())
	if !ok || c == nil {
		return nil, ""
	}
	return c.certs, c.err
}
