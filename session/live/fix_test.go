package live

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

// plantTen plants, in the bench mesh, causes that doctor reports as ten
// problems, each with a fix meshscope can prove:
//   - cluster3's gateway Service without its network label: network3's
//     endpoints leak to network1 and network2 proxies (2 rows);
//   - Deployment svc7 of cluster2 whose template (and so its pods) lacks
//     the mTLS label: dropped for network1 and network3 proxies (2 rows);
//   - a DestinationRule in cluster1 turning TLS off for service solo
//     (with pods in cluster2 only): dropped likewise (2 rows);
//   - namespaces ns5 and ns6 of cluster1 labelled for a revision that
//     does not run (cluster1 runs istiod of the default revision) (2 rows);
//   - the Services of svc10 and svc11 missing in cluster2, where their
//     namespaces' pods have sidecars (2 rows).
//
// Every gateway has a ready pod (else labelling cluster3's would bring a
// new error, gateway-not-ready, and fail the leak's proof — rightly).
func plantTen(tb testing.TB) benchPlant {
	return func(c int, objs, istio []runtime.Object) ([]runtime.Object, []runtime.Object) {
		var out []runtime.Object
		for _, o := range objs {
			switch x := o.(type) {
			case *corev1.Service:
				if c == 3 && x.Name == "istio-eastwestgateway" {
					delete(x.Labels, model.LabelNetwork)
				}
				if c == 2 && (x.Name == "svc10" || x.Name == "svc11") {
					continue
				}
			case *corev1.Namespace:
				if c == 1 && (x.Name == "ns5" || x.Name == "ns6") {
					x.Labels = map[string]string{model.LabelRev: "gone"}
				}
			case *corev1.Pod:
				if c == 2 && strings.HasPrefix(x.Name, "svc7-") {
					delete(x.Labels, model.LabelTLSMode)
				}
			}
			out = append(out, o)
		}
		out = append(out, meshtest.Service("ns3", "solo", 8080), benchGatewayPod(c))
		net := fmt.Sprintf("network%d", c)
		out = append(out, meshtest.EndpointSlice("istio-system", "istio-eastwestgateway", "gw-x", 15443, map[string]string{"gw-" + net: fmt.Sprintf("10.%d.255.2", c)}))
		switch c {
		case 1:
			out = append(out, benchIstiod())
			istio = append(istio, meshtest.IstioObject(tb, meshtest.CrossNetworkGateway), meshtest.IstioObject(tb, `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: solo-plaintext, namespace: ns3}
spec:
  host: solo.ns3.svc.cluster.local
  trafficPolicy: {tls: {mode: DISABLE}}
`))
		case 2:
			out = append(out, benchDeployment("ns7", "svc7")...)
			pods := map[string]string{}
			for j := 0; j < 5; j++ {
				p := meshtest.Pod("ns3", fmt.Sprintf("solo-%d", j), fmt.Sprintf("10.2.250.%d", j), "network2", true)
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
				pods[p.Name] = p.Status.PodIP
				out = append(out, p)
			}
			out = append(out, meshtest.EndpointSlice("ns3", "solo", "solo-x", 8080, pods))
		}
		return out, istio
	}
}

// benchGatewayPod is cluster c's east-west gateway pod, ready: an
// istio-proxy started as a router with the east-west settings, as an
// Istio install leaves it (its second hop holds, else doctor reports
// second-hop problems on top of the planted ones).
func benchGatewayPod(c int) *corev1.Pod {
	net := fmt.Sprintf("network%d", c)
	p := meshtest.Pod("istio-system", "gw-"+net, fmt.Sprintf("10.%d.255.2", c), net, false)
	p.Labels = map[string]string{"istio": "eastwestgateway", model.LabelNetwork: net}
	p.Spec.Containers = []corev1.Container{{Name: "istio-proxy", Image: "docker.io/istio/proxyv2:1.29.1", Args: []string{"proxy", "router"},
		Env: []corev1.EnvVar{{Name: "ISTIO_META_NETWORK", Value: net}, {Name: "ISTIO_META_CLUSTER_ID", Value: fmt.Sprintf("cluster%d", c)},
			{Name: "ISTIO_META_ROUTER_MODE", Value: "sni-dnat"}, {Name: "ISTIO_META_REQUESTED_NETWORK_VIEW", Value: net}}}}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	return p
}

// benchIstiod is cluster1's istiod pod (default revision).
func benchIstiod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "istiod-1", Namespace: "istio-system", Labels: map[string]string{"app": "istiod"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "discovery", Image: "docker.io/istio/pilot:1.29.1",
			Env: []corev1.EnvVar{{Name: "CLUSTER_ID", Value: "cluster1"}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.1.255.1", Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
}

// benchDeployment is Deployment name and its ReplicaSet name-abc (the
// controller of the bench's pods of that service), its template without
// the mTLS label.
func benchDeployment(ns, name string) []runtime.Object {
	labels := map[string]string{"app": "helloworld", "version": "v1", model.LabelNetwork: "network2"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: "d-" + "uid"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(5)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "helloworld"}}, Template: tmpl}}
	rsTmpl := *tmpl.DeepCopy()
	rsTmpl.Labels["pod-template-hash"] = "abc"
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name + "-abc", Namespace: ns,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(5)), Selector: &metav1.LabelSelector{MatchLabels: rsTmpl.Labels}, Template: rsTmpl}}
	return []runtime.Object{d, rs}
}

// TestFixesProven: in a small bench mesh with the ten planted problems,
// doctor's diagnosis reports them, and every one gets a fix built from the
// fake API servers' objects and proven by what-if: the problem gone, no
// new error, no lost endpoints.
func TestFixesProven(t *testing.T) {
	r := benchMeshWith(t, 20, plantTen(t))
	snap := r.Snapshot()
	d := explain.Run(snap, explain.Inputs{Now: time.Now()})
	var kinds []string
	for _, p := range d.Problems {
		kinds = append(kinds, string(p.Kind))
	}
	slices.Sort(kinds)
	if got := strings.Join(kinds, ","); got != "drop,drop,drop,drop,leak,leak,missing-service,missing-service,namespace-revision-missing,namespace-revision-missing" {
		t.Fatalf("problems: %s\n%v", got, d.Problems)
	}
	for _, f := range Fixes(context.Background(), r, snap, d.Problems) {
		o := f.Best()
		if o == nil {
			var why []string
			for _, x := range f.Proposals {
				why = append(why, x.Title+": "+x.Why)
			}
			t.Errorf("%s: no proven fix (%s): %v", f.Problem.Kind, f.None, why)
			continue
		}
		if !o.Proof.Resolves || len(o.Proof.Fail) > 0 || len(o.Manifests) == 0 {
			t.Errorf("%s: %s: proof %+v", f.Problem.Kind, o.Title, o.Proof)
		}
		t.Logf("%s: %s — %s", f.Problem.Kind, o.Title, strings.Join(o.Proof.Lines(), "; "))
	}
	// The drop of svc7's pods is fixed on its Deployment, read whole.
	for _, f := range Fixes(context.Background(), r, snap, d.Problems[:1]) {
		if o := f.Best(); o != nil && f.Problem.Kind == model.ProblemDrop && len(o.Edits) > 0 && o.Edits[0].Template {
			if u := o.Manifests[0].Object; u.GetKind() != "Deployment" || u.GetName() != "svc7" || u.GetResourceVersion() != "" {
				t.Errorf("the template's manifest: %v", u.Object)
			}
		}
	}
}
