package collector

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

// TestRegistryRevisions: through a fake clientset, every istiod revision
// of a cluster, its revision tags and each revision's ConfigMap reach the
// snapshot, whatever --revision says; a sidecar's injected revision too.
func TestRegistryRevisions(t *testing.T) {
	istiod := func(name, rev string) *corev1.Pod {
		p := meshtest.Pod("istio-system", name, "10.44.0.20", "", false)
		p.Labels = map[string]string{"app": "istiod", model.LabelRev: rev}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		return p
	}
	sidecar := meshtest.Pod("sample", "sleep-1", "10.44.0.30", "", false)
	sidecar.Labels = map[string]string{"app": "sleep", model.LabelRev: "canary"}
	sidecar.Spec.Containers = append(sidecar.Spec.Containers, corev1.Container{Name: "istio-proxy", Image: "proxyv2:1.31.0", Args: []string{"proxy", "sidecar"}})
	cm := func(name, mesh string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "istio-system"}, Data: map[string]string{"mesh": mesh}}
	}
	objs := append(meshtest.LabCluster("network1", "192.168.60.113", "hello-1", "10.44.0.13"),
		istiod("istiod-1", "default"), istiod("istiod-canary-1", "canary"), sidecar,
		cm("istio", "trustDomain: cluster.local\n"),
		cm("istio-canary", "serviceSettings:\n- hosts: ['*.sample.svc.cluster.local']\n  settings: {clusterLocal: true}\n"),
		&admissionv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "istio-revision-tag-prod",
			Labels: map[string]string{model.LabelTag: "prod", model.LabelRev: "canary"}}},
		&admissionv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "istio-sidecar-injector"}},
		// A tag declared as a Service (newer istioctl), and one that
		// redefines the webhook's tag: the Service wins.
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "istiod-stable", Namespace: "istio-system",
			Labels: map[string]string{model.LabelTag: "stable", model.LabelRev: "default"}}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "istiod-prod", Namespace: "istio-system",
			Labels: map[string]string{model.LabelTag: "prod", model.LabelRev: "default"}}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "not-a-tag", Namespace: "sample",
			Labels: map[string]string{model.LabelTag: "elsewhere", model.LabelRev: "canary"}}},
	)
	f := newFakeWorld(t)
	opts := fastOptions(f, Source{Name: "cluster1", Server: "https://c1.example:6443", Client: fake.NewSimpleClientset(objs...)})
	opts.Revision = "canary"
	r := startRegistry(t, opts)
	s := settled(context.Background(), t, r)
	c := s.ClusterByID("cluster1")
	if got := c.Revisions(); len(got) != 2 || got[0] != "canary" || got[1] != "default" {
		t.Errorf("revisions %v, want [canary default]", got)
	}
	if want := []model.RevisionTag{{Tag: "prod", Revision: "default"}, {Tag: "stable", Revision: "default"}}; !slices.Equal(c.RevisionTags, want) {
		t.Errorf("tags %+v, want %+v", c.RevisionTags, want)
	}
	// Predicted for the canary (--revision), the default revision is a
	// control plane of its own, with its own ConfigMap.
	if len(s.RevisionPlanes) != 1 || s.RevisionPlanes[0].ControlPlane() != "cluster1@default" || s.RevisionPlanes[0].MeshConfig.Source != "configmap istio-system/istio" {
		t.Errorf("revision planes %+v", s.RevisionPlanes)
	}
	if mc := s.MeshConfigFor("cluster1"); mc.Source != "configmap istio-system/istio-canary" {
		t.Errorf("cluster1's mesh config from %s", mc.Source)
	}
	if len(c.RevisionConfigs) != 2 {
		t.Fatalf("revision configs %+v", c.RevisionConfigs)
	}
	canary, def := c.RevisionConfigs[0], c.RevisionConfigs[1]
	if canary.ConfigMap != "istio-system/istio-canary" || !canary.Found || len(canary.ServiceSettings) != 1 || !canary.ServiceSettings[0].Settings.ClusterLocal {
		t.Errorf("canary config %+v", canary)
	}
	if def.ConfigMap != "istio-system/istio" || !def.Found || len(def.ServiceSettings) != 0 {
		t.Errorf("default config %+v", def)
	}
	var rev string
	for _, p := range s.Proxies {
		if p.Name == "sleep-1" && p.Injected != nil {
			rev = p.Injected.Revision
		}
	}
	if rev != "canary" {
		t.Errorf("sleep-1's injected revision %q, want canary", rev)
	}
}

// TestRegistryConfigInRevision: Istio config labelled istio.io/rev is read
// only by that revision's istiod (pkg/config LabelsInRevision): without
// --revision meshscope predicts for REVISION=default, with it for REV.
func TestRegistryConfigInRevision(t *testing.T) {
	dr := func(name, rev string) string {
		labels := ""
		if rev != "" {
			labels = `, labels: {istio.io/rev: ` + rev + `}`
		}
		return `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: ` + name + `, namespace: sample` + labels + `}
spec: {host: helloworld.sample.svc.cluster.local}
`
	}
	for _, tc := range []struct {
		revision string
		want     string
	}{
		{"", "everyone,for-default"},
		{"canary", "everyone,for-canary"},
	} {
		w := newFakeWorld(t)
		dyn := meshtest.FakeIstio(meshtest.IstioObject(t, dr("everyone", "")), meshtest.IstioObject(t, dr("for-default", "default")), meshtest.IstioObject(t, dr("for-canary", "canary")))
		opts := fastOptions(w, Source{Name: "cluster1", Server: "https://c1.example:6443",
			Client: fake.NewSimpleClientset(meshtest.LabCluster("network1", "192.168.60.113", "hello-1", "10.44.0.13")...), Dynamic: dyn})
		opts.Revision = tc.revision
		r := startRegistry(t, opts)
		s := waitFor(t, r, 10*time.Second, "the DestinationRules", func(s *model.Snapshot) bool { return s.Settled() && len(s.DestinationRules) > 0 })
		var names []string
		for _, d := range s.DestinationRules {
			names = append(names, d.Name)
		}
		if got := strings.Join(names, ","); got != tc.want {
			t.Errorf("--revision %q: DestinationRules %s, want %s", tc.revision, got, tc.want)
		}
		// What is left out is said, by revision.
		c := s.ClusterByID("cluster1")
		other := "for-canary"
		if tc.revision == "canary" {
			other = "for-default"
		}
		if len(c.OtherRevisionsConfig) != 1 || c.PredictedRevision != orDefault(tc.revision) {
			t.Errorf("--revision %q: other revisions' config %v (predicted %q)", tc.revision, c.OtherRevisionsConfig, c.PredictedRevision)
		}
		for _, l := range c.OtherRevisionsConfig {
			if len(l) != 1 || l[0] != "DestinationRule sample/"+other {
				t.Errorf("--revision %q: other revisions' config %v", tc.revision, l)
			}
		}
	}
}

func orDefault(rev string) string {
	if rev == "" {
		return model.RevisionDefault
	}
	return rev
}

// TestRegistryRevisionedOnly: an install with revisions only (istiod-1-28,
// no revision-less istiod) is predicted from ConfigMap istio-1-28 and the
// config of revision 1-28, as its istiod reads them, without --revision.
func TestRegistryRevisionedOnly(t *testing.T) {
	p := meshtest.Pod("istio-system", "istiod-1-28-abc", "10.44.0.20", "", false)
	p.Labels = map[string]string{"app": "istiod", model.LabelRev: "1-28"}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	objs := append(meshtest.LabCluster("network1", "192.168.60.113", "hello-1", "10.44.0.13"), p,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "istio-1-28", Namespace: "istio-system"},
			Data: map[string]string{"mesh": "serviceSettings:\n- hosts: ['*.sample.svc.cluster.local']\n  settings: {clusterLocal: true}\n"}})
	w := newFakeWorld(t)
	r := startRegistry(t, fastOptions(w, Source{Name: "cluster1", Server: "https://c1.example:6443", Client: fake.NewSimpleClientset(objs...)}))
	s := waitFor(t, r, 10*time.Second, "the 1-28 mesh config", func(s *model.Snapshot) bool {
		return s.Settled() && s.MeshConfigFor("cluster1").Source == "configmap istio-system/istio-1-28"
	})
	if mc := s.MeshConfigFor("cluster1"); !mc.ClusterLocal("helloworld.sample.svc.cluster.local") {
		t.Errorf("mesh config %+v", mc)
	}
	if got := s.ClusterByID("cluster1").PredictedRevision; got != "1-28" {
		t.Errorf("predicted revision %q, want 1-28", got)
	}
}
