package ambient

import (
	"slices"
	"strings"
	"testing"

	"github.com/meshscope/meshscope/model"
)

func kinds(ps []model.Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, string(p.Severity)+" "+string(p.Kind)+" "+p.ControlPlane+" "+p.Network)
	}
	slices.Sort(out)
	return out
}

func TestProblems(t *testing.T) {
	two := [][2]string{{"cluster1", "network1"}, {"cluster2", "network2"}}
	cases := []struct {
		name  string
		build func(m *testMesh)
		want  []string
	}{
		{"the lab: nothing wrong", func(m *testMesh) {
			m.service("cluster1", "10.96.0.10", true, testPod{name: "hw-1", ip: "10.44.0.30"})
			m.service("cluster2", "10.97.0.10", true, testPod{name: "hw-2", ip: "10.144.0.30"})
			m.gateway("cluster1", "istio-eastwestgateway", model.ClassEastWest, "network1", 15008, "Terminate", "192.168.60.114")
			m.gateway("cluster2", "istio-eastwestgateway", model.ClassEastWest, "network2", 15008, "Terminate", "192.168.60.10")
		}, nil},
		{"a gateway without address: its network is unreachable, the Gateway ignored", func(m *testMesh) {
			m.service("cluster1", "10.96.0.10", true, testPod{name: "hw-1", ip: "10.44.0.30"})
			m.service("cluster2", "10.97.0.10", true, testPod{name: "hw-2", ip: "10.144.0.30"})
			m.gateway("cluster1", "istio-eastwestgateway", model.ClassEastWest, "network1", 15008, "Terminate", "192.168.60.114")
			m.gateway("cluster2", "istio-eastwestgateway", model.ClassEastWest, "network2", 15008, "Terminate")
		}, []string{"error ambient-no-gateway cluster1 network2", "warning ambient-gateway-ignored cluster1 network2"}},
		{"several gateways; a global service not global in one cluster", func(m *testMesh) {
			m.service("cluster1", "10.96.0.10", true, testPod{name: "hw-1", ip: "10.44.0.30"})
			m.service("cluster2", "10.97.0.10", false, testPod{name: "hw-2", ip: "10.144.0.30"})
			m.gateway("cluster1", "istio-eastwestgateway", model.ClassEastWest, "network1", 15008, "Terminate", "192.168.60.114")
			m.gateway("cluster2", "istio-eastwestgateway", model.ClassEastWest, "network2", 15008, "Terminate", "192.168.60.10", "192.168.60.11")
		}, []string{"warning ambient-scope-mismatch cluster1 network2", "warning ambient-scope-mismatch cluster2 network1", "warning ambient-several-gateways cluster1 network2"}},
		{"a service local everywhere is meant to be", func(m *testMesh) {
			m.service("cluster1", "10.96.0.10", false, testPod{name: "hw-1", ip: "10.44.0.30"})
			m.service("cluster2", "10.97.0.10", false, testPod{name: "hw-2", ip: "10.144.0.30"})
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestMesh(t, two...)
			tc.build(m)
			ps := Problems(m.s, func(cp string) *View { return testView(m.s, cp) })
			if got := kinds(ps); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			for _, p := range ps {
				if p.Sentence == "" || !strings.Contains(p.Sentence, p.ControlPlane) {
					t.Errorf("sentence %q", p.Sentence)
				}
			}
		})
	}
}

func TestProblemsQuietWithoutAmbient(t *testing.T) {
	m := newTestMesh(t, [2]string{"cluster1", "network1"}, [2]string{"cluster2", "network2"})
	m.service("cluster1", "10.96.0.10", true, testPod{name: "hw-1", ip: "10.44.0.30", notRedirect: true})
	m.service("cluster2", "10.97.0.10", true, testPod{name: "hw-2", ip: "10.144.0.30", notRedirect: true})
	for i := range m.s.Ambient {
		delete(m.s.Ambient[i].Namespaces, "ambient")
	}
	if ps := Problems(m.s, func(cp string) *View { return testView(m.s, cp) }); len(ps) != 0 {
		t.Errorf("a sidecar mesh gets ambient problems: %v", ps)
	}
}

func TestDataplaneMode(t *testing.T) {
	m := newTestMesh(t, [2]string{"cluster1", "network1"}, [2]string{"cluster2", "network2"})
	if got := DataplaneMode(m.s, hello); got != ModeNone {
		t.Errorf("no service: %s", got)
	}
	m.service("cluster1", "10.96.0.10", true, testPod{name: "a", ip: "10.44.0.1"})
	if got := DataplaneMode(m.s, hello); got != ModeAmbient {
		t.Errorf("one enrolled pod: %s", got)
	}
	m.service("cluster2", "10.97.0.10", true, testPod{name: "b", ip: "10.144.0.1", notRedirect: true})
	m.s.Service(hello).Clusters["cluster2"].Endpoints[0].TLSMode = "istio"
	if got := DataplaneMode(m.s, hello); got != ModeMixed {
		t.Errorf("ambient and sidecar: %s", got)
	}
	m.s.Service(hello).Clusters["cluster1"] = m.s.Service(hello).Clusters["cluster2"]
	delete(m.s.Service(hello).Clusters, "cluster2")
	if got := DataplaneMode(m.s, hello); got != ModeSidecar {
		t.Errorf("sidecar only: %s", got)
	}
}
