package collector

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/horizon"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/analysis/whatif"
	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// smallMesh is the lab's two clusters on fake API servers, with a second
// helloworld pod in cluster2 and sidecar clients in sample and other
// (cluster1) and, with clients2, in sample (cluster2); cluster1 reads cluster2 through its
// remote secret and holds the Istio config.
type smallMesh struct {
	r      *Registry
	c1, c2 *fake.Clientset
	dyn    *dynamicfake.FakeDynamicClient
}

func newSmallMesh(t *testing.T, clients2, multiPrimary bool) *smallMesh {
	t.Helper()
	client := func(ns, name string) *corev1.Pod {
		p := meshtest.Pod(ns, name, "", "", false)
		p.Labels = map[string]string{"app": "client"}
		p.Spec.Containers = []corev1.Container{{Name: xdsclient.ProxyContainerName, Image: "example.invalid/proxyv2:1.31.0", Args: []string{"proxy", "sidecar"}}}
		return p
	}
	ready := func(objs ...runtime.Object) []runtime.Object {
		for _, o := range objs {
			if p, ok := o.(*corev1.Pod); ok {
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			}
		}
		return objs
	}
	objs1 := append(meshtest.LabCluster("network1", "192.168.60.113", "helloworld-v1-abc", "10.44.0.13"),
		meshtest.Namespace("other", ""), client("sample", "sleep-1"), client("other", "sleep-2"),
		remoteSecret("istio-remote-secret-cluster2", map[string][]byte{"cluster2": kubeconfigFor("https://127.0.0.1:6444", tokenCluster2)}))
	objs2 := []runtime.Object{
		meshtest.Namespace("istio-system", "network2"), meshtest.Namespace("sample", ""),
		meshtest.EastWestGateway("network2", "192.168.60.9"), meshtest.Service("sample", "helloworld", 5000),
		meshtest.Pod("sample", "helloworld-v2-def", "10.144.0.15", "network2", true),
		meshtest.Pod("sample", "helloworld-v2-ghi", "10.144.0.16", "network2", true),
		meshtest.EndpointSlice("sample", "helloworld", "helloworld-network2", 5000, map[string]string{"helloworld-v2-def": "10.144.0.15", "helloworld-v2-ghi": "10.144.0.16"}),
		meshtest.Node("node1", "region1", "zone-network2"),
	}
	proxies := 2
	if clients2 {
		objs2, proxies = append(objs2, client("sample", "sleep-3")), 3
	}
	if multiPrimary {
		objs2 = append(objs2, remoteSecret("istio-remote-secret-cluster1", map[string][]byte{"cluster1": kubeconfigFor("https://127.0.0.1:6443", "token-for-cluster1")}))
	}
	m := &smallMesh{c1: fake.NewClientset(ready(objs1...)...), c2: fake.NewClientset(ready(objs2...)...), dyn: meshtest.FakeIstio()}
	w := newFakeWorld(t)
	w.clients["https://127.0.0.1:6444"] = m.c2
	w.clients["https://127.0.0.1:6443"] = m.c1
	srcs := []Source{{Name: "cluster1", Server: "https://127.0.0.1:6443", Client: m.c1, Dynamic: m.dyn}}
	if multiPrimary {
		// cluster2 a primary too, with Istio config of its own (none).
		srcs = append(srcs, Source{Name: "cluster2", Server: "https://127.0.0.1:6444", Client: m.c2, Dynamic: meshtest.FakeIstio()})
	}
	m.r = startRegistry(t, fastOptions(w, srcs...))
	waitFor(t, m.r, 10*time.Second, "both clusters synced, the clients seen", func(s *model.Snapshot) bool {
		c2 := s.ClusterByID("cluster2")
		return s.Settled() && c2 != nil && c2.State == model.StateSynced && len(s.Proxies) == proxies && len(s.Service(helloHost).Clusters) == 2
	})
	return m
}

const helloHost = "helloworld.sample.svc.cluster.local"

// endpointOf is the endpoint at addr of helloworld in cluster, if any.
func endpointOf(s *model.Snapshot, cluster, addr string) *model.Endpoint {
	if svc := s.Service(helloHost); svc != nil && svc.Clusters[cluster] != nil {
		for i, e := range svc.Clusters[cluster].Endpoints {
			if e.Address == addr {
				return &svc.Clusters[cluster].Endpoints[i]
			}
		}
	}
	return nil
}

// whatIfCase is one single-object change: as a what-if sees it, and made
// for real through the fake API servers.
type whatIfCase struct {
	name    string
	cluster string
	object  func(t *testing.T, m *smallMesh) runtime.Object // typed (kube) or unstructured (Istio config)
	seen    func(s *model.Snapshot) bool
}

func whatIfCases() []whatIfCase {
	exportLocal := func(cluster string) whatIfCase {
		return whatIfCase{name: "helloworld exportTo . in " + cluster, cluster: cluster,
			object: func(t *testing.T, m *smallMesh) runtime.Object {
				svc := m.get(t, cluster, "Service").(*corev1.Service)
				svc.Annotations = map[string]string{model.AnnotationExportTo: "."}
				return svc
			},
			seen: func(s *model.Snapshot) bool {
				sic := s.Service(helloHost).Clusters[cluster]
				return sic != nil && slices.Equal(sic.ExportTo, []string{"."})
			}}
	}
	return []whatIfCase{
		{name: "an endpoint of cluster2 not ready by its EndpointSlice", cluster: "cluster2",
			object: func(t *testing.T, m *smallMesh) runtime.Object {
				sl := m.get(t, "cluster2", "EndpointSlice").(*discoveryv1.EndpointSlice)
				for i := range sl.Endpoints {
					if sl.Endpoints[i].Addresses[0] == "10.144.0.15" {
						f := false
						sl.Endpoints[i].Conditions.Ready = &f
					}
				}
				return sl
			},
			seen: func(s *model.Snapshot) bool {
				e := endpointOf(s, "cluster2", "10.144.0.15")
				return e != nil && !e.Ready
			}},
		{name: "a remote endpoint moved to a second locality", cluster: "cluster2",
			object: func(t *testing.T, m *smallMesh) runtime.Object {
				p := m.get(t, "cluster2", "Pod").(*corev1.Pod)
				p.Labels[model.LabelLocality] = "region1.zone-b"
				return p
			},
			seen: func(s *model.Snapshot) bool {
				e := endpointOf(s, "cluster2", "10.144.0.16")
				return e != nil && e.Locality == "region1/zone-b"
			}},
		// (cluster2's alone changes nothing: istiod takes a service's
		// exportTo from its first registry's Service.)
		exportLocal("cluster1"),
		{name: "a DestinationRule of sample exported to sample only, TLS off", cluster: "cluster1",
			object: func(t *testing.T, _ *smallMesh) runtime.Object {
				return meshtest.IstioObject(t, `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: plaintext, namespace: sample}
spec: {host: helloworld.sample.svc.cluster.local, exportTo: ["."], trafficPolicy: {tls: {mode: DISABLE}}}
`)
			},
			seen: func(s *model.Snapshot) bool { return len(s.DestinationRules) == 1 }},
		{name: "a Sidecar of other that imports its own namespace only", cluster: "cluster1",
			object: func(t *testing.T, _ *smallMesh) runtime.Object {
				return meshtest.IstioObject(t, `apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: own, namespace: other}
spec: {egress: [{hosts: ["./*", "istio-system/*"]}]}
`)
			},
			seen: func(s *model.Snapshot) bool { return len(s.Sidecars) == 1 }},
		{name: "a pod of cluster2 loses its mTLS label", cluster: "cluster2",
			object: func(t *testing.T, m *smallMesh) runtime.Object {
				p := m.get(t, "cluster2", "Pod").(*corev1.Pod)
				delete(p.Labels, model.LabelTLSMode)
				return p
			},
			seen: func(s *model.Snapshot) bool {
				e := endpointOf(s, "cluster2", "10.144.0.16")
				return e != nil && e.Labels[model.LabelTLSMode] == ""
			}},
	}
}

// get is the live object of kind the cases change in cluster.
func (m *smallMesh) get(t *testing.T, cluster, kind string) runtime.Object {
	t.Helper()
	c := m.c1
	if cluster == "cluster2" {
		c = m.c2
	}
	ctx := context.Background()
	var o runtime.Object
	var err error
	switch kind {
	case "Service":
		o, err = c.CoreV1().Services("sample").Get(ctx, "helloworld", metav1.GetOptions{})
	case "EndpointSlice":
		o, err = c.DiscoveryV1().EndpointSlices("sample").Get(ctx, "helloworld-network2", metav1.GetOptions{})
	case "Pod":
		o, err = c.CoreV1().Pods("sample").Get(ctx, "helloworld-v2-ghi", metav1.GetOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// apply makes the change for real, through the fake API server.
func (m *smallMesh) apply(t *testing.T, cluster string, o runtime.Object) {
	t.Helper()
	c, ctx := m.c1, context.Background()
	if cluster == "cluster2" {
		c = m.c2
	}
	var err error
	switch o := o.(type) {
	case *corev1.Service:
		_, err = c.CoreV1().Services(o.Namespace).Update(ctx, o, metav1.UpdateOptions{})
	case *corev1.Pod:
		_, err = c.CoreV1().Pods(o.Namespace).Update(ctx, o, metav1.UpdateOptions{})
	case *discoveryv1.EndpointSlice:
		_, err = c.DiscoveryV1().EndpointSlices(o.Namespace).Update(ctx, o, metav1.UpdateOptions{})
	case *unstructured.Unstructured:
		gvr := schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: map[string]string{"DestinationRule": "destinationrules", "Sidecar": "sidecars"}[o.GetKind()]}
		_, err = m.dyn.Resource(gvr).Namespace(o.GetNamespace()).Create(ctx, o, metav1.CreateOptions{})
	default:
		err = fmt.Errorf("no way to apply %T", o)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// asChange is the object as a what-if is given it.
func asChange(t *testing.T, cluster string, o runtime.Object) Change {
	t.Helper()
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		kinds := map[string][2]string{"*v1.Service": {"v1", "Service"}, "*v1.Pod": {"v1", "Pod"}, "*v1.EndpointSlice": {"discovery.k8s.io/v1", "EndpointSlice"}}
		k := kinds[fmt.Sprintf("%T", o)]
		u = toUnstructured(t, o, k[0], k[1])
	}
	return Change{Cluster: cluster, Object: u, Origin: "case.yaml:1"}
}

// TestWhatIfIsExplain: for small meshes and single-object changes (a fixed
// table, no random search), what-if's before of every viewpoint — every
// sidecar viewpoint of every control plane, from every namespace where
// clients run — is explain's prediction on the live snapshot, and its
// after is explain's prediction once the change is really made through
// the fake API servers. Where the what-if reports no change, explain sees
// none either.
func TestWhatIfIsExplain(t *testing.T) {
	for _, mesh := range []struct {
		name                   string
		clients2, multiPrimary bool
	}{{"clients on both networks", true, false}, {"no client on network2", false, false}, {"multi-primary", true, true}} {
		for _, tc := range whatIfCases() {
			t.Run(mesh.name+"/"+tc.name, func(t *testing.T) { whatIfIsExplain(t, newSmallMesh(t, mesh.clients2, mesh.multiPrimary), tc) })
		}
	}
}

func whatIfIsExplain(t *testing.T, m *smallMesh, tc whatIfCase) {
	{
		{
			live := m.r.Snapshot()
			obj := tc.object(t, m)
			w, err := m.r.WhatIf([]Change{asChange(t, tc.cluster, obj.DeepCopyObject())}, nil)
			if err != nil {
				t.Fatal(err)
			}
			changes := whatif.Endpoints(w.Before, w.After)
			if len(changes) == 0 {
				t.Fatalf("the what-if predicts no change")
			}
			m.apply(t, tc.cluster, obj)
			applied := waitFor(t, m.r, 10*time.Second, "the change made", tc.seen)
			checked := checkAgainstExplain(t, live, applied, changes)
			for _, c := range changes {
				t.Logf("%s from %s: %v → %v", c.Service, c.Where(), c.Before, c.After)
			}
			t.Logf("%d changes, %d (viewpoint, namespace, service port) views checked", len(changes), checked)
		}
	}
}

// checkAgainstExplain holds every sidecar view of live and applied to the
// what-if's changes; it returns how many views it checked.
func checkAgainstExplain(t *testing.T, live, applied *model.Snapshot, changes []whatif.ServiceChange) int {
	t.Helper()
	lp, ap := plane.NewSet(live, nil), plane.NewSet(applied, nil)
	checked := 0
	for _, cp := range plane.WithRevisions(live) {
		vps := append(horizon.SidecarViewpoints(live, cp), xdsclient.Viewpoint{Cluster: model.ControlPlaneCluster(cp), NoNetwork: true, NodeType: xdsclient.Sidecar, ControlPlane: cp})
		for _, vp := range vps {
			for _, ns := range clientsOf(live, vp) {
				vp.Namespace = ns
				for _, svc := range live.Services {
					if explain.IsGatewayService(svc) {
						continue
					}
					for _, port := range svc.Ports {
						b := whatif.EDSEndpoints(explain.ExplainWith(lp, svc.Hostname, port.Port, vp, cp, nil, explain.Extra{}).Predicted)
						a := whatif.EDSEndpoints(explain.ExplainWith(ap, svc.Hostname, port.Port, vp, cp, nil, explain.Extra{}).Predicted)
						checked++
						c := changeFor(changes, svc.Hostname, port.Port, vp, ns)
						switch {
						case c == nil && !reflect.DeepEqual(b, a):
							t.Errorf("%s from %s in %s: explain sees %v → %v, the what-if reports no change", svc.Hostname, vp, ns, b, a)
						case c != nil && !reflect.DeepEqual(c.Before, b):
							t.Errorf("%s from %s in %s: what-if's before %v, explain's prediction %v", svc.Hostname, vp, ns, c.Before, b)
						case c != nil && !reflect.DeepEqual(c.After, a):
							t.Errorf("%s from %s in %s: what-if's after %v, explain's prediction with the change made %v", svc.Hostname, vp, ns, c.After, a)
						}
					}
				}
			}
		}
	}
	return checked
}

// clientsOf are the namespaces where a sidecar runs on the viewpoint's
// network (in its cluster for a proxy without NETWORK); the probe's
// namespace when none does.
func clientsOf(s *model.Snapshot, vp xdsclient.Viewpoint) []string {
	var out []string
	for _, p := range s.Proxies {
		if p.Kind == model.ProxySidecar && !slices.Contains(out, p.Namespace) &&
			((vp.Network != "" && p.Network == vp.Network) || (vp.NoNetwork && p.Cluster == vp.Cluster)) {
			out = append(out, p.Namespace)
		}
	}
	if len(out) == 0 {
		return []string{xdsclient.DefaultNamespace}
	}
	return out
}

// changeFor is the change the what-if reports for a service port from a
// viewpoint in namespace ns: one for every namespace, or its class's.
func changeFor(changes []whatif.ServiceChange, host string, port int32, vp xdsclient.Viewpoint, ns string) *whatif.ServiceChange {
	name := vp
	name.Namespace = ""
	for i, c := range changes {
		if c.Proxy != "sidecar" || c.Service != host || c.Port != port || c.Viewpoint != name.String() {
			continue
		}
		if len(c.Namespaces) == 0 || slices.Contains(c.Namespaces, ns) {
			return &changes[i]
		}
	}
	return nil
}
