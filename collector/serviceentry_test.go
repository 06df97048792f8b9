package collector

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

const vmServiceEntry = `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: vm, namespace: sample, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  hosts: [vm.sample.svc.cluster.local]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [{number: 8080, name: http, protocol: HTTP, targetPort: 9090}]
  workloadSelector: {labels: {app: vm}}
`

func workloadEntry(name, addr, network, sa string, labels string) string {
	return `apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata: {name: ` + name + `, namespace: sample, labels: {app: vm}}
spec: {address: "` + addr + `", network: "` + network + `", serviceAccount: "` + sa + `", labels: ` + labels + `}
`
}

// TestServiceEntryWorkloads: a ServiceEntry in the config cluster with a
// workloadSelector gets WorkloadEntries (with istiod's tlsMode rule, their
// own network, weight and ports) and the ready pods of every cluster that
// match, and the hostname shows which source declares it.
func TestServiceEntryWorkloads(t *testing.T) {
	w := newFakeWorld(t)
	vmPod := meshtest.Pod("sample", "vm-pod", "10.144.0.80", "network2", true)
	vmPod.Labels = map[string]string{"app": "vm", model.LabelTLSMode: "istio", model.LabelNetwork: "network2"}
	vmPod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	vmPod.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 7070}}
	notReady := meshtest.Pod("sample", "vm-pod-2", "10.144.0.81", "network2", true)
	notReady.Labels = vmPod.Labels
	c1 := fake.NewClientset(append(meshtest.LabCluster("network1", "192.168.60.113", "helloworld-v1-abc", "10.44.0.13"),
		remoteSecret("istio-remote-secret-cluster2", map[string][]byte{"cluster2": kubeconfigFor("https://127.0.0.1:6444", tokenCluster2)}))...)
	c2 := fake.NewClientset(append(meshtest.LabCluster("network2", "192.168.60.9", "helloworld-v2-def", "10.144.0.15"), vmPod, notReady)...)
	w.clients["https://127.0.0.1:6444"] = c2
	dyn := meshtest.FakeIstio(
		meshtest.IstioObject(t, vmServiceEntry),
		meshtest.IstioObject(t, workloadEntry("vm-1", "10.44.0.80", "network1", "vm", `{version: v1}`)),
		meshtest.IstioObject(t, workloadEntry("vm-2", "10.144.0.90", "network2", "", `{version: v2}`)),
		// metadata labels win over spec labels: not selected
		meshtest.IstioObject(t, `apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata: {name: other, namespace: sample, labels: {app: other}}
spec: {address: 10.44.0.99, labels: {app: vm}}
`),
		meshtest.IstioObject(t, `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: ext, namespace: sample}
spec:
  hosts: [api.example.com, helloworld.sample.svc.cluster.local]
  resolution: DNS
  ports: [{number: 443, name: https}]
  endpoints: [{address: api.example.com, weight: 3}]
`),
	)
	r := startRegistry(t, fastOptions(w, Source{Name: "cluster1", Server: "https://127.0.0.1:6443", Client: c1, Dynamic: dyn}))
	s := waitFor(t, r, 10*time.Second, "the VM service", func(s *model.Snapshot) bool {
		svc := s.Service("vm.sample.svc.cluster.local")
		return s.Settled() && svc != nil && len(svc.ServiceEntries) == 1 && len(svc.ServiceEntries[0].Endpoints) == 3
	})
	vm := s.Service("vm.sample.svc.cluster.local")
	if vm.Source != model.SourceServiceEntry || vm.Namespace != "sample" || vm.Name != "vm" || len(vm.Ports) != 1 || vm.Ports[0].Port != 8080 {
		t.Fatalf("vm service = %+v", vm)
	}
	got := map[string]model.Endpoint{}
	for _, e := range vm.ServiceEntries[0].Endpoints {
		got[e.Address] = e
	}
	if e := got["10.44.0.80"]; e.Cluster != "cluster1" || e.Network != "network1" || e.NetworkFrom != model.NetworkFromWorkloadEntry ||
		e.TLSMode != "istio" || e.Workload != "WorkloadEntry/vm-1" || e.Ports[0].Port != 9090 {
		t.Errorf("vm-1 (serviceAccount: tlsMode istio; SE targetPort) = %+v", e)
	}
	if e := got["10.144.0.90"]; e.TLSMode != "disabled" || e.Network != "network2" {
		t.Errorf("vm-2 (no serviceAccount, no label: tlsMode disabled) = %+v", e)
	}
	if e := got["10.144.0.80"]; e.Cluster != "cluster2" || e.Pod != "vm-pod" || e.Network != "network2" || e.Ports[0].Port != 7070 {
		t.Errorf("pod of cluster2 picked by the selector (its named container port) = %+v", e)
	}
	if len(s.WorkloadEntries) != 3 || len(s.ServiceEntries) != 2 {
		t.Errorf("snapshot holds %d WorkloadEntries, %d ServiceEntries", len(s.WorkloadEntries), len(s.ServiceEntries))
	}
	// A ServiceEntry host that is also a Kubernetes Service: both.
	hw := s.Service("helloworld.sample.svc.cluster.local")
	if hw.Source != model.SourceBoth || len(hw.Clusters) != 2 || len(hw.ServiceEntries) != 1 || hw.ServiceEntries[0].Resolution != "DNS" {
		t.Errorf("helloworld = %+v", hw)
	}
	if len(hw.Ports) != 2 {
		t.Errorf("helloworld ports should be the union of the Service's and the ServiceEntry's: %+v", hw.Ports)
	}
	ext := s.Service("api.example.com")
	if ext == nil || ext.ServiceEntries[0].Endpoints[0].Weight != 3 || ext.ServiceEntries[0].Endpoints[0].Workload != "ServiceEntry/ext[0]" {
		t.Errorf("inline endpoint = %+v", ext)
	}

	// The pod becomes unready: the selector no longer picks it.
	vmPod.Status.Conditions[0].Status = corev1.ConditionFalse
	if _, err := c2.CoreV1().Pods("sample").UpdateStatus(context.Background(), vmPod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, r, 10*time.Second, "the pod to leave the VM service", func(s *model.Snapshot) bool {
		svc := s.Service("vm.sample.svc.cluster.local")
		return svc != nil && len(svc.ServiceEntries[0].Endpoints) == 2
	})
}
