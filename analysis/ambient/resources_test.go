package ambient

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// TestResources: the WDS resources built from the prediction are istiod's
// shapes (they survive the wire), a ztunnel holding them matches the
// prediction, and each pod is one workload with every service it backs.
func TestResources(t *testing.T) {
	m := newTestMesh(t, [2]string{"cluster1", "network1"}, [2]string{"cluster2", "network2"})
	m.service("cluster1", "10.96.0.10", true, testPod{name: "hw-1", ip: "10.44.0.30", serviceAcc: "helloworld"})
	m.service("cluster2", "10.97.0.10", true, testPod{name: "hw-2a", ip: "10.144.0.30"}, testPod{name: "hw-2b", ip: "10.144.0.32", notReady: true})
	m.gateway("cluster1", "istio-eastwestgateway", model.ClassEastWest, "network1", 15008, "Terminate", "192.168.60.114")
	m.gateway("cluster2", "istio-eastwestgateway", model.ClassEastWest, "network2", 15008, "Terminate", "192.168.60.10")
	// A second service backed by the same pod in cluster1.
	other := *m.s.Service(hello)
	other.Hostname, other.Name = "hello-alias.ambient.svc.cluster.local", "hello-alias"
	other.Clusters = map[string]*model.ServiceInCluster{"cluster1": m.s.Service(hello).Clusters["cluster1"]}
	m.s.Services = append([]*model.Service{&other}, m.s.Services...) // by hostname

	v := testView(m.s, "cluster1")
	res := v.Resources()
	var names []string
	for _, a := range res {
		names = append(names, a.Name)
		b, err := xdsclient.EncodeWDSAddress(a)
		if err != nil {
			t.Fatalf("%s does not encode: %v", a.Name, err)
		}
		back, err := xdsclient.DecodeWDSAddress(a.Name, b)
		if err != nil || !reflect.DeepEqual(back, a) {
			t.Errorf("%s: round trip\n got %+v\nwant %+v (%v)", a.Name, back, a, err)
		}
	}
	want := []string{
		"NetworkGateway/network2/192.168.60.10/0",
		"ambient/hello-alias.ambient.svc.cluster.local",
		helloKey,
		"cluster1//Pod/ambient/hw-1",
		shNet2,
	}
	if !slices.Equal(names, want) {
		t.Fatalf("resources\n %s\nwant\n %s", strings.Join(names, "\n "), strings.Join(want, "\n "))
	}
	pod := res[3].Workload
	if len(pod.Services) != 2 || pod.Services[0].Service != "ambient/hello-alias.ambient.svc.cluster.local" || pod.ServiceAccount != "helloworld" ||
		pod.Name != "hw-1" || pod.ClusterID != "cluster1" || pod.TunnelProtocol != xdsclient.TunnelHBONE {
		t.Errorf("the pod's workload: %+v", pod)
	}
	if sh := res[4].Workload; sh.Capacity != 2 || sh.NetworkGateway.String() != "192.168.60.10:15008" || len(sh.Addresses) != 0 || sh.ClusterID != "cluster2" {
		t.Errorf("the split-horizon workload: %+v", sh)
	}
	for _, host := range []string{hello, other.Hostname} {
		actual := ServiceView(res, "ambient/"+host)
		e := Explain(v, host, &actual, "")
		if e.Verdict != Match {
			t.Errorf("%s: %+v", host, e.Differences)
		}
	}
	if e := Explain(v, hello, nil, ""); e.Verdict != Pending || e.Error == "" || len(e.Prediction.Workloads) != 2 {
		t.Errorf("without WDS: %+v", e)
	}
	if n := PerIstiodNote("cluster1", "network1"); !strings.Contains(n, "per istiod") || !strings.Contains(n, "network1") {
		t.Errorf("note %q", n)
	}
}
