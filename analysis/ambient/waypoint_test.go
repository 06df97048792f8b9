package ambient

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshscope/meshscope/model"
)

// waypoint adds a waypoint Gateway (class istio-waypoint, HBONE on 15008)
// to a cluster, in namespace ambient, with these status addresses.
func (m *testMesh) waypoint(cluster, name string, l model.GatewayListener, addrs ...string) {
	m.gateway(cluster, name, "istio-waypoint", "", 15008, "", addrs...)
	g := m.last(cluster)
	g.Namespace = "ambient"
	l.Name, l.Port, l.Protocol = "mesh", 15008, "HBONE"
	g.Listeners = []model.GatewayListener{l}
}

// last is the Gateway added last to a cluster.
func (m *testMesh) last(cluster string) *model.K8sGateway {
	gws := m.s.AmbientFor(cluster).Gateways
	return &gws[len(gws)-1]
}

func (m *testMesh) label(cluster string, kv ...string) {
	l := m.s.AmbientFor(cluster).ServiceLabels[hello]
	for i := 0; i+1 < len(kv); i += 2 {
		l[kv[i]] = kv[i+1]
	}
}

func TestWaypointResolution(t *testing.T) {
	two := [][2]string{{"cluster1", "network1"}, {"cluster2", "network2"}}
	use := []string{model.LabelUseWaypoint, "waypoint"}
	cases := []struct {
		name  string
		build func(m *testMesh)
		// want is the waypoint each istiod sends ("" none), then the
		// problems.
		want1, want2 string
		problems     []string
		// remoteOnly: helloworld exists in cluster2 only.
		remoteOnly bool
	}{
		{"the service in cluster2 only: cluster1's istiod sends cluster2's waypoint, on network2", func(m *testMesh) {
			m.label("cluster2", use...)
			m.waypoint("cluster2", "waypoint", model.GatewayListener{}, "10.144.0.90")
		}, "network2/10.144.0.90:15008", "network2/10.144.0.90:15008", []string{"warning waypoint-cross-network cluster1 network2"}, true},
		{"the waypoint in one cluster only: the other network's ztunnels bypass it", func(m *testMesh) {
			m.label("cluster1", use...)
			m.label("cluster2", use...)
			m.waypoint("cluster2", "waypoint", model.GatewayListener{}, "10.144.0.90")
		}, "", "network2/10.144.0.90:15008", []string{"error waypoint-cross-network cluster1 network2"}, false},
		{"a waypoint in each cluster: each network uses its own", func(m *testMesh) {
			m.label("cluster1", use...)
			m.label("cluster2", use...)
			m.waypoint("cluster1", "waypoint", model.GatewayListener{}, "host:waypoint.ambient.svc.cluster.local")
			m.waypoint("cluster2", "waypoint", model.GatewayListener{}, "10.144.0.90")
		}, "ambient/waypoint.ambient.svc.cluster.local:15008", "network2/10.144.0.90:15008", nil, false},
		{"labelled in cluster2 only", func(m *testMesh) {
			m.label("cluster2", use...)
			m.waypoint("cluster1", "waypoint", model.GatewayListener{}, "10.44.0.90")
			m.waypoint("cluster2", "waypoint", model.GatewayListener{}, "10.144.0.90")
		}, "", "network2/10.144.0.90:15008", []string{"error waypoint-cross-network cluster1 network2"}, false},
		{"the namespace names it; a Gateway without a status address is not ready", func(m *testMesh) {
			m.s.AmbientFor("cluster1").Namespaces["ambient"][model.LabelUseWaypoint] = "waypoint"
			m.waypoint("cluster1", "waypoint", model.GatewayListener{})
		}, "", "", []string{"warning waypoint-unresolved cluster1 network1"}, false},
		{"none opts out; another namespace needs allowedRoutes", func(m *testMesh) {
			m.s.AmbientFor("cluster1").Namespaces["ambient"][model.LabelUseWaypoint] = "waypoint"
			m.label("cluster1", model.LabelUseWaypoint, "none")
			m.label("cluster2", model.LabelUseWaypoint, "shared", model.LabelUseWaypointNamespace, "istio-system")
			m.waypoint("cluster2", "shared", model.GatewayListener{AllowedFrom: "Selector",
				AllowedSelector: &metav1.LabelSelector{MatchLabels: map[string]string{model.LabelDataplaneMode: "ambient"}}}, "10.144.0.91")
			m.last("cluster2").Namespace = "istio-system"
		}, "", "network2/10.144.0.91:15008", []string{"error waypoint-cross-network cluster1 network2"}, false},
		{"same namespace only by default; a waypoint for workloads is not a service's", func(m *testMesh) {
			m.label("cluster1", model.LabelUseWaypoint, "shared", model.LabelUseWaypointNamespace, "istio-system")
			m.label("cluster2", use...)
			m.waypoint("cluster1", "shared", model.GatewayListener{}, "10.44.0.91")
			m.last("cluster1").Namespace = "istio-system"
			m.waypoint("cluster2", "waypoint", model.GatewayListener{}, "10.144.0.90")
			m.last("cluster2").WaypointFor = "workload"
		}, "", "", []string{"warning waypoint-unresolved cluster1 network1", "warning waypoint-unresolved cluster2 network2"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestMesh(t, two...)
			m.service("cluster1", "10.96.0.10", true, testPod{name: "hw-1", ip: "10.44.0.30"})
			if tc.remoteOnly {
				delete(m.s.Service(hello).Clusters, "cluster1")
			}
			m.service("cluster2", "10.97.0.10", true, testPod{name: "hw-2", ip: "10.144.0.30"})
			m.gateway("cluster1", "istio-eastwestgateway", model.ClassEastWest, "network1", 15008, "Terminate", "192.168.60.114")
			m.gateway("cluster2", "istio-eastwestgateway", model.ClassEastWest, "network2", 15008, "Terminate", "192.168.60.10")
			tc.build(m)
			for cp, want := range map[string]string{"cluster1": tc.want1, "cluster2": tc.want2} {
				v := testView(m.s, cp)
				p := v.Predict(hello)
				got := p.Waypoint.AddressString()
				if p.Waypoint != nil && p.Waypoint.Address != nil && p.Waypoint.Address.Network != "" {
					got = p.Waypoint.Address.Network + "/" + got
				}
				if got != want {
					t.Errorf("%s sends waypoint %q, want %q (%+v)", cp, got, want, p.WaypointUses)
				}
				// The resource served carries it, and Compare holds it.
				res := v.Resources()
				actual := ServiceView(res, p.Service)
				if c := Compare(p, actual); c.Verdict != Match {
					t.Errorf("%s: own resources differ: %v", cp, c.Differences)
				}
				if actual.Service.Waypoint.String() != p.Waypoint.AddressString() {
					t.Errorf("%s: resource waypoint %v", cp, actual.Service.Waypoint)
				}
				if p.Waypoint != nil {
					actual.Service.Waypoint = nil
					if c := Compare(p, actual); c.Verdict != Mismatch || !strings.Contains(c.Differences[0].Why, "waypoint none") {
						t.Errorf("%s: a missing waypoint is not a difference: %v", cp, c)
					}
				}
			}
			ps := Problems(m.s, func(cp string) *View { return testView(m.s, cp) })
			if got := kinds(ps); !slices.Equal(got, tc.problems) {
				t.Errorf("problems %v, want %v", got, tc.problems)
			}
			for _, p := range ps {
				t.Log(p.Sentence)
			}
		})
	}
}
