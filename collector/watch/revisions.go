package watch

import (
	"maps"
	"sort"
	"sync"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/meshscope/meshscope/collector/internal/errs"
	"github.com/meshscope/meshscope/model"
)

// Revisions (model/revisions.go): every istiod pod's revision is kept
// with the pod (istiodpods.go); here are the revision tags, read from the
// MutatingWebhookConfigurations labelled istio.io/tag (cluster-scoped, a
// handful of objects; istiod's tag watcher reads the same), and the
// ConfigMap each running revision reads.

// resRevisionTags names the informer in sentences.
const resRevisionTags = "revision tags"

// addRevisionTagInformer watches the revision tags. Optional: without the
// permission, a namespace labelled for a tag cannot be told from one
// labelled for a revision no istiod runs.
func (w *Watcher) addRevisionTagInformer(client kubernetes.Interface) {
	w.tags = addInformer[*admissionv1.MutatingWebhookConfigurationList](w, resRevisionTags, false, &admissionv1.MutatingWebhookConfiguration{}, transformRevisionTag,
		scope{selector: model.LabelTag}, clusterScoped(client.AdmissionregistrationV1().MutatingWebhookConfigurations))
	// istiod patches its webhooks' CA bundles: only the labels matter.
	w.tags.unchanged = func(old, cur any) bool {
		o, ok1 := old.(*admissionv1.MutatingWebhookConfiguration)
		c, ok2 := cur.(*admissionv1.MutatingWebhookConfiguration)
		return ok1 && ok2 && o.Name == c.Name && maps.Equal(o.Labels, c.Labels)
	}
}

// transformRevisionTag keeps a tag webhook's name and its two labels: the
// webhooks themselves (CA bundles, rules) are large and not read.
func transformRevisionTag(obj any) (any, error) {
	m, ok := obj.(*admissionv1.MutatingWebhookConfiguration)
	if !ok {
		return obj, nil
	}
	return &admissionv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{
		Name: m.Name, ResourceVersion: m.ResourceVersion,
		Labels: map[string]string{model.LabelTag: m.Labels[model.LabelTag], model.LabelRev: m.Labels[model.LabelRev]},
	}}, nil
}

// revisionTags lists the cluster's tags, by tag name: the tag webhooks,
// and the Services of the system namespace labelled istio.io/tag, which
// newer istioctl writes instead and which win over a webhook of the same
// tag (pkg/revisions/tag_watcher.go GetMyTags, isTagService).
func (w *Watcher) revisionTags() []model.RevisionTag {
	byTag := map[string]string{}
	if w.tags != nil {
		for m := range objectsOf[*admissionv1.MutatingWebhookConfiguration](w.tags.store()) {
			// Fakes ignore label selectors: keep only what the selector means.
			if m.Labels[model.LabelTag] != "" {
				byTag[m.Labels[model.LabelTag]] = m.Labels[model.LabelRev]
			}
		}
	}
	if w.services != nil && w.opts != nil {
		for s := range objectsOf[*corev1.Service](w.services.store()) {
			if s.Namespace == w.opts.SystemNamespace && s.Labels[model.LabelTag] != "" && s.Labels[model.LabelRev] != "" {
				byTag[s.Labels[model.LabelTag]] = s.Labels[model.LabelRev]
			}
		}
	}
	out := make([]model.RevisionTag, 0, len(byTag))
	for tag, rev := range byTag {
		out = append(out, model.RevisionTag{Tag: tag, Revision: rev})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tag < out[j].Tag })
	if len(out) == 0 {
		return nil
	}
	return out
}

// revisionConfigs reads, for each revision, the ConfigMap its istiod reads
// (istio, or istio-REV). Parsed texts are cached by the watcher
// (parsedConfigs): the snapshot is rebuilt far more often than mesh config
// changes.
func (w *Watcher) revisionConfigs(ns string, revisions []string) []model.RevisionConfig {
	if w.configMaps == nil || len(revisions) == 0 {
		return nil
	}
	out := make([]model.RevisionConfig, 0, len(revisions))
	for _, rev := range revisions {
		name := model.MeshConfigMapName(rev)
		var mesh, networks string
		found := false
		if cm, ok := getOf[*corev1.ConfigMap](w.configMaps.store(), cache.NewObjectName(ns, name).String()); ok && cm != nil {
			found, mesh, networks = true, cm.Data[meshConfigKey], cm.Data[meshNetworksKey]
		}
		rc := w.parsed.get(mesh, networks)
		rc.Revision, rc.ConfigMap, rc.Found = rev, ns+"/"+name, found
		out = append(out, rc)
	}
	return out
}

// parsedConfigs holds one watcher's revision configs by their texts (a
// few revisions, each with a text that rarely changes: bounded). Safe for
// concurrent use.
type parsedConfigs struct {
	mu sync.Mutex
	m  map[string]model.RevisionConfig // mesh + "\x00" + networks
}

// maxParsedConfigs bounds a watcher's cache of parsed texts.
const maxParsedConfigs = 64

func (c *parsedConfigs) get(mesh, networks string) model.RevisionConfig {
	key := mesh + "\x00" + networks
	c.mu.Lock()
	defer c.mu.Unlock()
	if rc, ok := c.m[key]; ok {
		return rc
	}
	if c.m == nil || len(c.m) >= maxParsedConfigs {
		c.m = map[string]model.RevisionConfig{}
	}
	rc := parseRevisionConfig(mesh, networks)
	c.m[key] = rc
	return rc
}

// parseRevisionConfig reads what changes endpoints from a mesh config and
// a meshNetworks text.
func parseRevisionConfig(mesh, networks string) model.RevisionConfig {
	var rc model.RevisionConfig
	mc, err := model.ParseMeshConfig(mesh)
	if err != nil {
		rc.Error = errs.OneLine(err.Error())
	}
	rc.ServiceSettings, rc.DiscoverySelectors = mc.ServiceSettings, mc.DiscoverySelectors
	if mn, err := model.ParseMeshNetworks(networks); err != nil {
		rc.Error = errs.OneLine("meshNetworks: " + err.Error())
	} else if len(mn.Networks) > 0 {
		rc.MeshNetworks = mn
	}
	return rc
}

// ConfigOfOtherRevisions lists, by revision, the Istio config objects
// ("DestinationRule sample/x") labelled istio.io/rev for a revision other
// than rev: the istiod meshscope predicts for ignores them, as its real
// istiod does, and a reader must be able to see that they exist.
func (w *Watcher) ConfigOfOtherRevisions(rev string) map[string][]string {
	var out map[string][]string
	for _, src := range []struct {
		h    *informerHealth
		kind string
	}{
		{w.destinationRules, "DestinationRule"}, {w.peerAuthentications, "PeerAuthentication"},
		{w.sidecars, "Sidecar"}, {w.virtualServices, "VirtualService"},
		{w.serviceEntriesInf, "ServiceEntry"}, {w.workloadEntriesInf, "WorkloadEntry"},
		{w.istioGateways, "Gateway"},
	} {
		if src.h == nil {
			continue
		}
		for u := range objectsOf[*unstructured.Unstructured](src.h.store()) {
			if model.ConfigInRevision(u.GetLabels(), rev) {
				continue
			}
			if out == nil {
				out = map[string][]string{}
			}
			r := u.GetLabels()[model.LabelRev]
			out[r] = append(out[r], src.kind+" "+u.GetNamespace()+"/"+u.GetName())
		}
	}
	for _, l := range out {
		sort.Strings(l)
	}
	return out
}
