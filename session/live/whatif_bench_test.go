package live

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/analysis/whatif"
	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

// benchMesh runs a registry over the bench mesh: 3 clusters on 3
// networks, each with an east-west gateway, 2,000 services in every
// cluster and 5 endpoints of each per cluster (30,000 endpoints), every
// pod ready with mTLS; cluster1 is the primary, reading the other two
// through remote secrets. It returns once every cluster has synced.
func benchMesh(b *testing.B) *collector.Registry { return benchMeshWith(b, 2000, nil) }

// benchPlant changes cluster c's objects (core, and Istio config for the
// dynamic client) before the registry reads them.
type benchPlant func(c int, objs, istio []runtime.Object) ([]runtime.Object, []runtime.Object)

// benchMeshWith is benchMesh with n services per cluster and objects
// planted.
func benchMeshWith(b testing.TB, n int, plant benchPlant) *collector.Registry {
	var sources []collector.Source
	for c := 1; c <= 3; c++ {
		objs := benchObjects(c, n)
		var istio []runtime.Object
		if plant != nil {
			objs, istio = plant(c, objs, istio)
		}
		sources = append(sources, collector.Source{Name: fmt.Sprintf("cluster%d", c), Server: fmt.Sprintf("https://c%d", c), Client: fake.NewClientset(objs...), Dynamic: meshtest.FakeIstio(istio...)})
	}
	r, err := collector.NewRegistry(collector.Options{Sources: sources, Logger: slog.New(slog.DiscardHandler), SyncTimeout: 5 * time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	go func() { _ = r.Run(ctx) }()
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Minute)
	defer wcancel()
	s, err := r.WaitSettled(wctx)
	if err != nil {
		b.Fatal(err)
	}
	eps := 0
	for _, c := range s.Clusters {
		eps += c.Counts.Endpoints
	}
	if plant == nil && (eps != 15*n || len(s.Gateways) != 3) {
		b.Fatalf("bench mesh: %d endpoints, %d gateways", eps, len(s.Gateways))
	}
	return r
}

// benchObjects are cluster c's objects in the bench mesh (n services).
func benchObjects(c, n int) []runtime.Object {
	net := fmt.Sprintf("network%d", c)
	objs := []runtime.Object{meshtest.Namespace("istio-system", net), meshtest.EastWestGateway(net, fmt.Sprintf("192.168.60.%d", c)), meshtest.Node("node1", "r", "z")}
	if c == 1 {
		for _, remote := range []int{2, 3} {
			objs = append(objs, remoteSecret(fmt.Sprintf("cluster%d", remote), fmt.Sprintf("https://c%d", remote)))
		}
	}
	for ns := 0; ns < 50; ns++ {
		objs = append(objs, meshtest.Namespace(fmt.Sprintf("ns%d", ns), ""))
	}
	for i := 0; i < n; i++ {
		ns, name := fmt.Sprintf("ns%d", i%50), fmt.Sprintf("svc%d", i)
		objs = append(objs, meshtest.Service(ns, name, 8080))
		pods := map[string]string{}
		for j := 0; j < 5; j++ {
			pod, ip := fmt.Sprintf("%s-%d", name, j), fmt.Sprintf("10.%d.%d.%d", c, i/250*8+j, i%250)
			p := meshtest.Pod(ns, pod, ip, net, true)
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			// Made by Deployment NAME through ReplicaSet NAME-abc.
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: name + "-abc", Controller: ptr.To(true)}}
			pods[pod] = ip
			objs = append(objs, p)
		}
		objs = append(objs, meshtest.EndpointSlice(ns, name, name+"-x", 8080, pods))
	}
	return objs
}

// remoteSecret declares cluster id at server (a context of the bench mesh
// too: one cluster, read by cluster1's istiod), with a CA as istioctl
// writes it (a placeholder: nothing is dialled).
func remoteSecret(id, server string) *corev1.Secret {
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %s, certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=}}]
users: [{name: u, user: {token: bench-token}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`, server)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "istio-remote-secret-" + id, Namespace: "istio-system", Labels: map[string]string{model.MultiClusterSecretLabel: "true"}},
		Data:       map[string][]byte{id: []byte(kubeconfig)},
	}
}

// predictWholeMesh is one whole-mesh prediction: every service port from
// every default viewpoint of every control plane, once.
func predictWholeMesh(snap *model.Snapshot) int {
	n := 0
	planes := plane.NewSet(snap, nil)
	for _, cp := range snap.ControlPlanes() {
		pv := planes.Of(cp)
		for _, vp := range horizon.Viewpoints(pv.Snap) {
			for _, svc := range pv.Snap.Services {
				for _, p := range svc.Ports {
					n += len(pv.Predict(svc.Hostname, "", p.Port, vp).Endpoints)
				}
			}
		}
	}
	return n
}

// BenchmarkWhatIfOneObject: one object changed in the bench mesh, the
// whole what-if — overlay, rebuild of that cluster's part, both snapshots,
// every service port from every viewpoint before and after, both
// diagnoses — reported with its ratio to one whole-mesh prediction
// measured in the same run (issue 22: under 500 ms). "pod": a pod of one
// service loses its mTLS label (only that service differs: narrow);
// "destination-rule": a DestinationRule in the primary (Istio config is
// shared: every service is compared, the worst case of one object);
// "deployment": a Deployment whose template lacks the mTLS label (its 5
// pods re-made, found among the cluster's 10,000).
func BenchmarkWhatIfOneObject(b *testing.B) {
	r := benchMesh(b)
	snap := r.Snapshot()
	// The baseline, measured here: the median of 5 whole-mesh predictions.
	var base []time.Duration
	for i := 0; i < 5; i++ {
		start := time.Now()
		if predictWholeMesh(snap) == 0 {
			b.Fatal("empty prediction")
		}
		base = append(base, time.Since(start))
	}
	sort.Slice(base, func(i, j int) bool { return base[i] < base[j] })
	pod := meshtest.Pod("ns7", "svc7-0", "10.2.0.7", "network2", false)
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
	if err != nil {
		b.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	dr, err := whatif.Decode("dr.yaml", []byte(`apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: svc9-plaintext, namespace: ns9}
spec:
  host: svc9.ns9.svc.cluster.local
  trafficPolicy: {tls: {mode: DISABLE}}
`))
	if err != nil {
		b.Fatal(err)
	}
	dr[0].Cluster = "cluster1"
	deploy, err := whatif.Decode("deploy.yaml", []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: svc8, namespace: ns8}
spec:
  selector: {matchLabels: {app: helloworld}}
  template:
    metadata: {labels: {app: helloworld, version: v1, topology.istio.io/network: network2}}
    spec: {containers: [{name: c, image: x}]}
`))
	if err != nil {
		b.Fatal(err)
	}
	deploy[0].Cluster = "cluster2"
	for _, c := range []struct {
		name string
		obj  whatif.Object
	}{
		{"pod", whatif.Object{Cluster: "cluster2", Object: u, File: "pod.yaml", Line: 1}},
		{"destination-rule", dr[0]},
		{"deployment", deploy[0]},
	} {
		b.Run(c.name, func(b *testing.B) {
			req := whatif.Request{Objects: []whatif.Object{c.obj}}
			var rep *whatif.Report
			for i := 0; i < b.N; i++ {
				rep, err = WhatIf(r, req)
				if err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if len(rep.Changes) == 0 {
				b.Fatalf("the change changes nothing: %+v", rep.Objects)
			}
			per := time.Duration(b.Elapsed().Nanoseconds() / int64(b.N))
			b.ReportMetric(float64(per.Milliseconds()), "ms/what-if")
			b.ReportMetric(float64(base[2].Milliseconds()), "ms/whole-mesh-prediction")
			b.ReportMetric(float64(per)/float64(base[2]), "x-whole-mesh-prediction")
		})
	}
}
