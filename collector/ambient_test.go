package collector

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

func eastWestGatewayObj(network string, addrs ...string) *unstructured.Unstructured {
	as := []any{}
	for _, a := range addrs {
		as = append(as, map[string]any{"type": "IPAddress", "value": a})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
		"metadata": map[string]any{"name": "istio-eastwestgateway", "namespace": "istio-system",
			"labels": map[string]any{model.LabelNetwork: network}},
		"spec": map[string]any{"gatewayClassName": model.ClassEastWest, "listeners": []any{
			map[string]any{"name": "mesh", "port": int64(15008), "protocol": "HBONE", "tls": map[string]any{"mode": "Terminate"}},
		}},
		"status": map[string]any{"addresses": as},
	}}
}

// TestAmbientFacts: the collector gathers what istiod's ambient index
// reads: every namespace's labels, Services' full labels, pods' service
// accounts and istio-cni's enrollment annotation, and Gateway API Gateways
// (followed as they change).
func TestAmbientFacts(t *testing.T) {
	w := newFakeWorld(t)
	ns := meshtest.Namespace("ambient", "")
	ns.Labels = map[string]string{model.LabelDataplaneMode: "ambient"}
	svc := meshtest.Service("ambient", "helloworld", 5000)
	svc.Labels = map[string]string{"istio.io/global": "true", "team": "a"}
	enrolled := meshtest.Pod("ambient", "hw-1", "10.44.0.30", "", false)
	enrolled.Annotations = map[string]string{model.AnnotationRedirection: "enabled"}
	enrolled.Spec.ServiceAccountName = "helloworld"
	plain := meshtest.Pod("ambient", "hw-2", "10.44.0.31", "", false)
	plain.Spec.ServiceAccountName = "default"
	objs := append(meshtest.LabCluster("network1", "192.168.60.113", "hw1", "10.44.0.13"), ns, svc, enrolled, plain)
	dyn := meshtest.FakeIstio()
	// (This fake lists created objects of a custom list kind, not the ones
	// given to its constructor.)
	if _, err := dyn.Resource(meshtest.GatewaysGVR).Namespace("istio-system").Create(context.Background(), eastWestGatewayObj("network1", "192.168.60.114"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := startRegistry(t, fastOptions(w, Source{Name: "cluster1", Server: "https://c1", Client: fake.NewClientset(objs...), Dynamic: dyn}))
	s := settled(context.Background(), t, r)
	a := s.AmbientFor("cluster1")
	if a == nil {
		t.Fatal("no ambient facts")
	}
	if a.NamespaceLabels("ambient")[model.LabelDataplaneMode] != "ambient" || a.NamespaceLabels("istio-system")[model.LabelNetwork] != "network1" {
		t.Errorf("namespaces: %v", a.Namespaces)
	}
	if l := a.ServiceLabels["helloworld.ambient.svc.cluster.local"]; l["team"] != "a" || l["istio.io/global"] != "true" {
		t.Errorf("service labels: %v", l)
	}
	if p := a.Pod("ambient", "hw-1"); p.ServiceAccount != "helloworld" || !p.Redirected {
		t.Errorf("enrolled pod: %+v", p)
	}
	if p := a.Pod("ambient", "hw-2"); p.ServiceAccount != "default" || p.Redirected {
		t.Errorf("plain pod: %+v", p)
	}
	if _, ok := a.Pods["ambient/hw-2"]; ok {
		t.Error("a pod with default facts should need no entry")
	}
	if !a.GatewayAPI || len(a.Gateways) != 1 {
		t.Fatalf("gateways: %+v (api %v)", a.Gateways, a.GatewayAPI)
	}
	g := a.Gateways[0]
	if g.Class != model.ClassEastWest || g.Network != "network1" || g.ServiceAccount != "istio-eastwestgateway" || g.Cluster != "cluster1" ||
		len(g.Listeners) != 1 || g.Listeners[0] != (model.GatewayListener{Name: "mesh", Port: 15008, Protocol: "HBONE", TLSMode: "Terminate", TLS: true}) ||
		len(g.Addresses) != 1 || g.Addresses[0] != (model.GatewayAddress{Type: "IPAddress", Value: "192.168.60.114"}) {
		t.Errorf("gateway: %+v", g)
	}
	// The gateway loses its address.
	if _, err := dyn.Resource(meshtest.GatewaysGVR).Namespace("istio-system").Update(context.Background(), eastWestGatewayObj("network1"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, r, 5*time.Second, "the gateway without its address", func(s *model.Snapshot) bool {
		a := s.AmbientFor("cluster1")
		return a != nil && len(a.Gateways) == 1 && len(a.Gateways[0].Addresses) == 0
	})
	if ws := s.ClusterByID("cluster1").Warnings; len(ws) != 0 {
		t.Errorf("warnings: %v", ws)
	}
}
