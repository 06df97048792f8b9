package watch

import (
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/meshscope/meshscope/model"
)

// istiodPodLabel is the label selector of istiod pods (istioctl's too).
const istiodPodLabel = "app=istiod"

// resIstiodPods names the informer in sentences.
const resIstiodPods = "istiod pods"

// cachedIstiod is what the cache keeps of an istiod Pod.
type cachedIstiod struct {
	name, namespace, resourceVersion string
	pod                              model.IstiodPod // zero for a pod that is no istiod
}

func (c *cachedIstiod) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (c *cachedIstiod) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: c.name, Namespace: c.namespace, ResourceVersion: c.resourceVersion}
}

func (c *cachedIstiod) DeepCopyObject() runtime.Object {
	out := *c
	return &out
}

func transformIstiodPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	c := &cachedIstiod{name: p.Name, namespace: p.Namespace, resourceVersion: p.ResourceVersion,
		pod: model.IstiodPod{Name: p.Name, Revision: p.Labels[model.LabelRev]}}
	if p.Labels["app"] != "istiod" {
		// Only a fake clientset, which ignores label selectors, gets here:
		// keep the key, drop the pod.
		c.pod = model.IstiodPod{}
		return c, nil
	}
	// The discovery container's CLUSTER_ID (or --clusterID flag) wins
	// over any other container's.
	for _, ctr := range p.Spec.Containers {
		env := map[string]string{}
		for _, e := range ctr.Env {
			if e.ValueFrom == nil {
				env[e.Name] = e.Value
			}
		}
		if v := istiodClusterID(env, ctr.Args); v != "" && (c.pod.ClusterID == "" || ctr.Name == "discovery") {
			c.pod.ClusterID = v
		}
		if v := imageVersion(ctr.Image); v != "" && (c.pod.Version == "" || ctr.Name == "discovery") {
			c.pod.Version = v
		}
		if v, ok := env[model.EnvInsecureKubeconfigOptions]; ok && (c.pod.KubeconfigOptions == "" || ctr.Name == "discovery") {
			c.pod.KubeconfigOptions = v
		}
		if c.pod.Env == nil || ctr.Name == "discovery" {
			for _, k := range model.SettingKeys {
				if v, ok := env[k]; ok {
					if c.pod.Env == nil {
						c.pod.Env = map[string]string{}
					}
					c.pod.Env[k] = v
				}
			}
		}
	}
	if p.Status.StartTime != nil {
		c.pod.StartedAt = p.Status.StartTime.Time
	}
	if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady {
				c.pod.Ready = cond.Status == corev1.ConditionTrue
			}
		}
	}
	return c, nil
}

// addControlPlaneInformers watches, in the system namespace, what tells
// whether an istiod runs in this cluster and which root it publishes: the
// istiod Pods and ConfigMap istio-ca-root-cert. Both are optional (a
// missing permission is a warning).
func (w *Watcher) addControlPlaneInformers(client kubernetes.Interface, ns string) {
	core := client.CoreV1()
	w.istiods = addInformer[*corev1.PodList](w, resIstiodPods, false, &corev1.Pod{}, transformIstiodPod,
		scope{namespace: ns, selector: istiodPodLabel}, core.Pods)
	w.rootCerts = addInformer[*corev1.ConfigMapList](w, resRootCert, false, &corev1.ConfigMap{}, transformRootCert,
		scope{namespace: ns, name: model.RootCertConfigMap}, core.ConfigMaps)
	w.rootCerts.unchanged = unchangedRootCert
	w.addRevisionTagInformer(client)
}

// ControlPlaneFacts fills what the control-plane informers know into c:
// its istiods, root certificates, revision tags and configs, and what it
// may not read, which the diagnosis reports per cluster.
func (w *Watcher) ControlPlaneFacts(c *model.Cluster, ns string) {
	c.RootCerts, c.RootCertError = w.rootCertsOf(ns)
	w.mu.Lock()
	if w.secrets != nil {
		c.SecretsRead = w.secrets.inf.HasSynced() && w.secrets.lastErr.Kind == ""
	}
	for _, h := range w.infs {
		if h.lastErr.Kind == model.ErrForbidden && !slices.Contains(c.Forbidden, h.name) {
			c.Forbidden = append(c.Forbidden, h.name)
		}
	}
	w.mu.Unlock()
	if w.istiods == nil {
		return
	}
	for p := range objectsOf[*cachedIstiod](w.istiods.store()) {
		// Fakes ignore label selectors: keep only what the selector means.
		if p.namespace == ns && p.pod.Name != "" {
			c.Istiods = append(c.Istiods, p.pod)
		}
	}
	sort.Slice(c.Istiods, func(i, j int) bool { return c.Istiods[i].Name < c.Istiods[j].Name })
	c.RevisionTags = w.revisionTags()
	c.RevisionConfigs = w.revisionConfigs(ns, c.Revisions())
}

// istiodClusterID reads the cluster ID an istiod container runs with: its
// --clusterID flag, else its CLUSTER_ID environment variable (pilot-discovery
// defines the flag with the variable as its default).
func istiodClusterID(env map[string]string, args []string) string {
	for i, a := range args {
		for _, flag := range []string{"--clusterID", "-clusterID"} {
			if v, ok := strings.CutPrefix(a, flag+"="); ok {
				return v
			}
			if a == flag && i+1 < len(args) {
				return args[i+1]
			}
		}
	}
	return env["CLUSTER_ID"]
}
