package watch

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshscope/meshscope/collector/build"
	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

func TestParseWorkloadEntryRules(t *testing.T) {
	we := parseWorkloadEntry("c1", meshtest.IstioObject(t, `apiVersion: networking.istio.io/v1
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
	dr := parseDestinationRule("c1", meshtest.IstioObject(t, `apiVersion: networking.istio.io/v1
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
