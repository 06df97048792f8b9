package build

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

func TestDiscoveryNamespaces(t *testing.T) {
	mc, err := model.ParseMeshConfig("discoverySelectors: [{matchLabels: {istio-discovery: enabled}}]")
	if err != nil {
		t.Fatal(err)
	}
	mc.DiscoveryNamespaces = discoveryNamespaces(mc, map[string]map[string]map[string]string{
		"c1": {"sample": {"istio-discovery": "enabled"}, "other": nil},
	})
	if !mc.Discovered("c1", "sample") || mc.Discovered("c1", "other") || !mc.Discovered("c9", "other") {
		t.Errorf("discovery namespaces = %v", mc.DiscoveryNamespaces)
	}
	if strings.Join(mc.DiscoveryNamespaces["c1"], ",") != "sample" {
		t.Errorf("c1 = %v", mc.DiscoveryNamespaces["c1"])
	}
}

// A Kubernetes Service selects the WorkloadEntries of its cluster and
// namespace as istiod's kube registry does: by labels (augmented), healthy
// and with an IP (or no) address, each port to the numeric targetPort or
// the entry's port named by a named targetPort.
func TestServiceSelectsWorkloadEntries(t *testing.T) {
	svc := meshtest.Service("sample", "vm", 8080)
	svc.Spec.Selector = map[string]string{"app": "vm"}
	svc.Spec.Ports = []corev1.ServicePort{
		{Name: "http", Port: 8080, TargetPort: intstr.FromInt32(9080), Protocol: corev1.ProtocolTCP},
		{Name: "grpc", Port: 7070, TargetPort: intstr.FromString("grpc-web")},
	}
	we := func(name, addr string, mod func(*model.WorkloadEntry)) model.WorkloadEntry {
		w := model.WorkloadEntry{Cluster: "cluster1", Namespace: "sample", Name: name, Address: addr,
			Labels: map[string]string{"app": "vm"}, Network: "network2", ServiceAccount: "vm"}
		if mod != nil {
			mod(&w)
		}
		return w
	}
	wes := []model.WorkloadEntry{
		we("vm-a", "10.1.0.1", func(w *model.WorkloadEntry) { w.Ports = map[string]uint32{"grpc-web": 17070} }),
		we("vm-b", "10.1.0.2", nil), // no grpc-web port: http only
		we("vm-other-ns", "10.1.0.3", func(w *model.WorkloadEntry) { w.Namespace = "other" }),
		we("vm-other-app", "10.1.0.4", func(w *model.WorkloadEntry) { w.Labels = map[string]string{"app": "db"} }),
		we("vm-sick", "10.1.0.5", func(w *model.WorkloadEntry) { w.Unhealthy = true }),
		we("vm-dns", "vm.example.com", nil),
		we("vm-unix", "unix:///var/run/vm.sock", nil),
	}
	got := serviceWorkloadEntries(svc, wes)
	if len(got) != 2 {
		t.Fatalf("got %d endpoints, want vm-a and vm-b: %+v", len(got), got)
	}
	a, b := got[0], got[1]
	if a.Workload != "WorkloadEntry/vm-a" || a.Address != "10.1.0.1" || a.Network != "network2" || a.NetworkFrom != model.NetworkFromWorkloadEntry ||
		a.TLSMode != "istio" || !a.Ready || a.Cluster != "cluster1" {
		t.Fatalf("vm-a = %+v", a)
	}
	wantA := []model.EndpointPort{{Name: "http", Port: 9080, Protocol: "TCP"}, {Name: "grpc", Port: 17070}}
	if !reflect.DeepEqual(a.Ports, wantA) {
		t.Fatalf("vm-a ports = %+v, want %+v", a.Ports, wantA)
	}
	if len(b.Ports) != 1 || b.Ports[0].Name != "http" {
		t.Fatalf("vm-b ports = %+v, want http only", b.Ports)
	}
	// Services istiod does not give WorkloadEntries to.
	for name, mod := range map[string]func(*corev1.Service){
		"headless":     func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone },
		"externalName": func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeExternalName },
		"no selector":  func(s *corev1.Service) { s.Spec.Selector = nil },
	} {
		s := svc.DeepCopy()
		mod(s)
		if got := serviceWorkloadEntries(s, wes); len(got) != 0 {
			t.Errorf("%s Service selects %+v", name, got)
		}
	}
}
