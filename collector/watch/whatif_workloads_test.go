package watch

import (
	"maps"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshscope/meshscope/collector/build"
	"github.com/meshscope/meshscope/model"
)

func workloadOf(t *testing.T, kind, name string, spec map[string]any) workload {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": "sample"}, "spec": spec}}
	wl, err := readWorkload(u)
	if err != nil {
		t.Fatal(err)
	}
	return wl
}

func livePod(name, controller string, l map[string]string) *build.Pod {
	return &build.Pod{Name: name, Namespace: "sample", PodTemplate: &build.PodTemplate{Labels: l, Controller: controller}}
}

var appHello = map[string]any{"matchLabels": map[string]any{"app": "helloworld"}}

// Which pods a controller owns, and what it does to each.
func TestWorkloadOwnsAndFate(t *testing.T) {
	hashed := map[string]string{"app": "helloworld", "pod-template-hash": "5f8"}
	for _, c := range []struct {
		name string
		wl   workload
		pod  *build.Pod
		del  bool
		owns bool
		fate fate
	}{
		{"a Deployment owns its ReplicaSet's pod", workloadOf(t, "Deployment", "helloworld", map[string]any{"selector": appHello}),
			livePod("helloworld-5f8-x", "ReplicaSet/helloworld-5f8", hashed), false, true, remade},
		{"… not another ReplicaSet's", workloadOf(t, "Deployment", "helloworld", map[string]any{"selector": appHello}),
			livePod("helloworld-9z-x", "ReplicaSet/helloworld-9z", hashed), false, false, remade},
		{"… nor a pod without a controller", workloadOf(t, "Deployment", "helloworld", map[string]any{"selector": appHello}),
			livePod("helloworld", "", hashed), false, false, remade},
		{"… nor one its selector does not select", workloadOf(t, "Deployment", "helloworld", map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "other"}}}),
			livePod("helloworld-5f8-x", "ReplicaSet/helloworld-5f8", hashed), false, false, remade},
		{"a deleted Deployment's pod goes", workloadOf(t, "Deployment", "helloworld", map[string]any{"selector": appHello}),
			livePod("helloworld-5f8-x", "ReplicaSet/helloworld-5f8", hashed), true, true, gone},
		{"scaled to zero", workloadOf(t, "ReplicaSet", "helloworld-5f8", map[string]any{"selector": appHello, "replicas": int64(0)}),
			livePod("helloworld-5f8-x", "ReplicaSet/helloworld-5f8", hashed), false, true, gone},
		{"a StatefulSet scaled to 2 loses ordinal 2", workloadOf(t, "StatefulSet", "db", map[string]any{"selector": appHello, "replicas": int64(2)}),
			livePod("db-2", "StatefulSet/db", map[string]string{"app": "helloworld"}), false, true, gone},
		{"… and re-makes ordinal 1", workloadOf(t, "StatefulSet", "db", map[string]any{"selector": appHello, "replicas": int64(2)}),
			livePod("db-1", "StatefulSet/db", map[string]string{"app": "helloworld"}), false, true, remade},
		{"a partition keeps the lower ordinals", workloadOf(t, "StatefulSet", "db", map[string]any{"selector": appHello,
			"updateStrategy": map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"partition": int64(2)}}}),
			livePod("db-1", "StatefulSet/db", map[string]string{"app": "helloworld", "apps.kubernetes.io/pod-index": "1"}), false, true, kept},
		{"a paused Deployment rolls nothing out", workloadOf(t, "Deployment", "helloworld", map[string]any{"selector": appHello, "paused": true}),
			livePod("helloworld-5f8-x", "ReplicaSet/helloworld-5f8", hashed), false, true, kept},
		{"… but scales", workloadOf(t, "Deployment", "helloworld", map[string]any{"selector": appHello, "paused": true, "replicas": int64(0)}),
			livePod("helloworld-5f8-x", "ReplicaSet/helloworld-5f8", hashed), false, true, gone},
		{"a DaemonSet owns its pods", workloadOf(t, "DaemonSet", "agent", map[string]any{"selector": appHello}),
			livePod("agent-q2x", "DaemonSet/agent", map[string]string{"app": "helloworld"}), false, true, remade},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.wl.owns(c.pod); got != c.owns {
				t.Errorf("owns %v, want %v", got, c.owns)
			}
			if c.owns {
				if got := c.wl.fate(c.pod, c.del); got != c.fate {
					t.Errorf("fate %v, want %v", got, c.fate)
				}
			}
		})
	}
}

// The pod a template makes in a live pod's place: the template's labels,
// the controller's kept, and the injector's work done again.
func TestWorkloadMadePod(t *testing.T) {
	sidecar := &model.InjectedIdentity{Kind: model.ProxySidecar, Network: "network2", ClusterID: "cluster2", Image: "docker.io/istio/proxyv2:1.28.0"}
	tmpl := func(l, a map[string]string) map[string]any {
		m := map[string]any{"selector": appHello, "template": map[string]any{
			"metadata": map[string]any{"labels": toAny(l), "annotations": toAny(a)},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": "x"}}},
		}}
		return m
	}
	live := func(injected *model.InjectedIdentity, redirected bool) *build.Pod {
		p := livePod("helloworld-5f8-x", "ReplicaSet/helloworld-5f8", map[string]string{"app": "helloworld", "pod-template-hash": "5f8", model.LabelTLSMode: "istio"})
		p.Injected, p.Redirected = injected, redirected
		return p
	}
	for _, c := range []struct {
		name       string
		tmpl       map[string]any
		live       *build.Pod
		labels     map[string]string
		proxy      bool
		env        []string
		redirected bool
	}{
		{"a pod without a sidecar: the template as written, the hash kept",
			tmpl(map[string]string{"app": "helloworld"}, nil), live(nil, false),
			map[string]string{"app": "helloworld", "pod-template-hash": "5f8"}, false, nil, false},
		{"an injected pod: injected again, with the injector's labels",
			tmpl(map[string]string{"app": "helloworld", "version": "v2"}, nil), live(sidecar, false),
			map[string]string{"app": "helloworld", "version": "v2", "pod-template-hash": "5f8", model.LabelTLSMode: "istio",
				"service.istio.io/canonical-name": "helloworld", "service.istio.io/canonical-revision": "v2", model.LabelNetwork: "network2"},
			true, []string{"ISTIO_META_NETWORK=network2", "ISTIO_META_CLUSTER_ID=cluster2"}, false},
		{"the template's own network and mTLS mode win",
			tmpl(map[string]string{"app": "helloworld", model.LabelNetwork: "network9", model.LabelTLSMode: "disabled"}, nil), live(sidecar, false),
			map[string]string{"app": "helloworld", "pod-template-hash": "5f8", model.LabelTLSMode: "disabled",
				"service.istio.io/canonical-name": "helloworld", "service.istio.io/canonical-revision": "latest", model.LabelNetwork: "network9"},
			true, []string{"ISTIO_META_NETWORK=network9", "ISTIO_META_CLUSTER_ID=cluster2"}, false},
		{"injection turned off by the template: no proxy, no injector labels",
			tmpl(map[string]string{"app": "helloworld"}, map[string]string{"sidecar.istio.io/inject": "false"}), live(sidecar, false),
			map[string]string{"app": "helloworld", "pod-template-hash": "5f8"}, false, nil, false},
		{"an ambient pod stays enrolled",
			tmpl(map[string]string{"app": "helloworld"}, nil), live(nil, true),
			map[string]string{"app": "helloworld", "pod-template-hash": "5f8"}, false, nil, true},
		{"… unless the template opts out",
			tmpl(map[string]string{"app": "helloworld", model.LabelDataplaneMode: "none"}, nil), live(nil, true),
			map[string]string{"app": "helloworld", "pod-template-hash": "5f8", model.LabelDataplaneMode: "none"}, false, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			wl := workloadOf(t, "Deployment", "helloworld", c.tmpl)
			p := wl.madePod(c.live)
			if p.Name != c.live.Name || p.Namespace != "sample" || p.Spec.ServiceAccountName != "default" {
				t.Errorf("pod %s/%s, service account %q", p.Namespace, p.Name, p.Spec.ServiceAccountName)
			}
			if !maps.Equal(p.Labels, c.labels) {
				t.Errorf("labels %v, want %v", p.Labels, c.labels)
			}
			if r := metav1.GetControllerOf(p); r == nil || r.Kind+"/"+r.Name != c.live.Controller {
				t.Errorf("controller %+v, want %s", r, c.live.Controller)
			}
			var env []string
			proxy := false
			for _, ct := range p.Spec.Containers {
				if ct.Name == "istio-proxy" {
					proxy = true
					for _, e := range ct.Env {
						env = append(env, e.Name+"="+e.Value)
					}
				}
			}
			if proxy != c.proxy || !slices.Equal(env, c.env) {
				t.Errorf("istio-proxy %v env %v, want %v %v", proxy, env, c.proxy, c.env)
			}
			if got := p.Annotations[model.AnnotationRedirection] == "enabled"; got != c.redirected {
				t.Errorf("redirected %v", got)
			}
			// The transform reads the same identity off the made pod.
			in := newInterner()
			cached, _ := in.transformPod(p)
			if id := cached.(*build.Pod).Injected; c.proxy && (id == nil || id.Image != sidecar.Image || id.Kind != model.ProxySidecar) || !c.proxy && id != nil {
				t.Errorf("injected %+v", id)
			}
		})
	}
}

func toAny(m map[string]string) map[string]any {
	if m == nil {
		return nil
	}
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}
