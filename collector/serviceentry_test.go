package collector

import (
	"github.com/meshscope/meshscope/collector/build"
	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"

	"context"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"
)

func istioObj(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// fakeIstio is a dynamic client holding Istio config objects.
func fakeIstio(objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
	kinds := map[schema.GroupVersionResource]string{
		gvrDestinationRules: "DestinationRuleList", gvrPeerAuthentications: "PeerAuthenticationList",
		gvrServiceEntries: "ServiceEntryList", gvrWorkloadEntries: "WorkloadEntryList", gvrGateways: "GatewayList",
		gvrSidecars: "SidecarList", gvrVirtualServices: "VirtualServiceList",
	}
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), kinds, objs...)
}

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
	dyn := fakeIstio(
		istioObj(t, vmServiceEntry),
		istioObj(t, workloadEntry("vm-1", "10.44.0.80", "network1", "vm", `{version: v1}`)),
		istioObj(t, workloadEntry("vm-2", "10.144.0.90", "network2", "", `{version: v2}`)),
		// metadata labels win over spec labels: not selected
		istioObj(t, `apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata: {name: other, namespace: sample, labels: {app: other}}
spec: {address: 10.44.0.99, labels: {app: vm}}
`),
		istioObj(t, `apiVersion: networking.istio.io/v1
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

func TestParseWorkloadEntryRules(t *testing.T) {
	we := parseWorkloadEntry("c1", istioObj(t, `apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata:
  name: vm
  namespace: ns
  labels: {app: meta, istio-locality: r1.z1}
  annotations: {proxy.istio.io/health-checks-enabled: "true"}
spec: {address: 1.2.3.4, labels: {app: spec, security.istio.io/tlsMode: disabled}, serviceAccount: sa, weight: 5, ports: {http: 8081}}
status: {conditions: [{type: Healthy, status: "False"}]}
`))
	if we.Labels["app"] != "meta" || we.TLSModeOf() != "disabled" || we.LocalityOf() != "r1/z1" || we.Weight != 5 || we.Ports["http"] != 8081 || !we.Unhealthy {
		t.Errorf("workload entry = %+v (tlsMode %s, locality %s)", we, we.TLSModeOf(), we.LocalityOf())
	}
	dr := parseDestinationRule("c1", istioObj(t, `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: hw, namespace: sample}
spec:
  host: helloworld
  exportTo: ["."]
  trafficPolicy: {tls: {sni: x}}
  subsets:
  - name: v2
    labels: {version: v2}
    trafficPolicy: {portLevelSettings: [{port: {number: 5000}, tls: {mode: ISTIO_MUTUAL}}]}
`))
	if dr.TLSMode != "DISABLE" || !dr.TrafficPolicy || dr.ExportTo[0] != "." || len(dr.Subsets) != 1 || dr.Subsets[0].Labels["version"] != "v2" || dr.Subsets[0].PortTLS[5000] != "ISTIO_MUTUAL" {
		t.Errorf("destination rule (a tls without mode is DISABLE) = %+v", dr)
	}
}

func TestLabelValueAugmented(t *testing.T) {
	ep := model.Endpoint{Cluster: "cluster2", Network: "network2", Node: "n1", Locality: "r/z/s", Labels: map[string]string{"app": "a", "topology.kubernetes.io/zone": "mine"}}
	for k, want := range map[string]string{"app": "a", "topology.istio.io/cluster": "cluster2", "topology.istio.io/network": "network2",
		"topology.kubernetes.io/region": "r", "topology.kubernetes.io/zone": "z", "topology.istio.io/subzone": "s", "kubernetes.io/hostname": "n1"} {
		if v, _ := model.LabelValue(&ep, k); v != want {
			t.Errorf("%s = %q, want %q (istiod's AugmentLabels)", k, v, want)
		}
	}
	if !model.SelectsEndpoint(map[string]string{"topology.istio.io/cluster": "cluster2", "app": "a"}, &ep) || model.SelectsEndpoint(map[string]string{"app": "b"}, &ep) {
		t.Error("selector on augmented labels")
	}
}

// build.BuildPart gives a Service without pods the WorkloadEntries it selects,
// next to the pods of a Service that has both.
func TestBuildPartServiceWorkloadEntries(t *testing.T) {
	svc := meshtest.Service("sample", "helloworld", 5000)
	svc.Spec.Selector = map[string]string{"app": "helloworld"}
	vm := meshtest.Service("sample", "vm", 5000)
	vm.Spec.Selector = map[string]string{"app": "vm"}
	pod := meshtest.Pod("sample", "hw-1", "10.0.0.1", "", true)
	cp, _ := newInterner().transformPod(pod)
	v := build.Caches{
		Services: []*corev1.Service{svc, vm},
		Slices:   []*build.Slice{cacheSlice(meshtest.EndpointSlice("sample", "helloworld", "hw-abc", 5000, map[string]string{"hw-1": "10.0.0.1"}))},
		Pod:      func(string) *build.Pod { return cp.(*build.Pod) },
		WorkloadEntries: []model.WorkloadEntry{
			{Cluster: "c1", Namespace: "sample", Name: "vm-1", Address: "10.9.0.1", Labels: map[string]string{"app": "vm"}},
			{Cluster: "c1", Namespace: "sample", Name: "hw-vm", Address: "10.9.0.2", Labels: map[string]string{"app": "helloworld"}},
		},
	}
	p := build.BuildPart(v, "c1", nil)
	addrs := func(h string) (out []string) {
		for _, e := range p.Services[h].Endpoints {
			out = append(out, e.Address+" "+e.Workload+e.Pod)
		}
		return out
	}
	if got := addrs("vm.sample.svc.cluster.local"); !reflect.DeepEqual(got, []string{"10.9.0.1 WorkloadEntry/vm-1"}) {
		t.Fatalf("vm endpoints = %v", got)
	}
	if got := addrs("helloworld.sample.svc.cluster.local"); !reflect.DeepEqual(got, []string{"10.0.0.1 hw-1", "10.9.0.2 WorkloadEntry/hw-vm"}) {
		t.Fatalf("helloworld endpoints = %v", got)
	}
	if p.Counts.Endpoints != 3 {
		t.Fatalf("counted %d endpoints, want 3", p.Counts.Endpoints)
	}
}
