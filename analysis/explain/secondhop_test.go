package explain

import (
	"strings"
	"testing"

	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// TestExplainSecondHop: a view's gateway endpoint is followed into its
// gateway; a view sent as predicted is broken when the hop breaks.
func TestExplainSecondHop(t *testing.T) {
	vp := xdsclient.Viewpoint{Cluster: "cluster1", Network: "network1"}
	la := actualSeed()
	v := Explain(seed(), hello, 5000, vp, "cluster1", &la)
	if v.Verdict != Match || len(v.SecondHop) != 1 || !v.SecondHop[0].OK() {
		t.Fatalf("healthy: %s %+v", v.Verdict, v.SecondHop)
	}
	s := seed()
	s.IstioGateways = nil
	v = Explain(s, hello, 5000, vp, "cluster1", &la)
	if v.Verdict != Broken || len(v.SecondHop) != 1 || v.SecondHop[0].Kind != model.ProblemHopNoListener {
		t.Fatalf("no Gateway: %s %+v", v.Verdict, v.SecondHop)
	}
	// Not received yet: the hop is of the prediction, the verdict pending.
	if v = Explain(s, hello, 5000, vp, "cluster1", nil); v.Verdict != Pending || len(v.SecondHop) != 1 {
		t.Fatalf("pending: %s %+v", v.Verdict, v.SecondHop)
	}
}

// TestSecondHopProblems: doctor's second-hop check, each cause its kind;
// a healthy mesh has none.
func TestSecondHopProblems(t *testing.T) {
	gwSvc := func(s *model.Snapshot) *model.ServiceInCluster {
		return s.Service(model.Hostname("istio-eastwestgateway", "istio-system")).Clusters["cluster2"]
	}
	for _, tc := range []struct {
		name string
		edit func(*model.Snapshot)
		kind model.ProblemKind
		text string
	}{
		{"healthy", func(*model.Snapshot) {}, "", ""},
		{"no Gateway", func(s *model.Snapshot) { s.IstioGateways = nil }, model.ProblemHopNoListener, "no Gateway selects pod"},
		{"port", func(s *model.Snapshot) { s.IstioGateways[0].Servers[0].Port = 15444 }, model.ProblemHopPort, "reaches pod port 15443"},
		{"hidden service", func(s *model.Snapshot) {
			for _, sic := range s.Service(hello).Clusters {
				sic.ExportTo = []string{"."}
			}
		}, model.ProblemHopNoSNI, "not visible from the gateway's namespace"},
		{"view", func(s *model.Snapshot) { s.Proxies[1].Injected.NetworkView = "network1" }, model.ProblemHopNetwork, "REQUESTED_NETWORK_VIEW"},
		{"no view", func(s *model.Snapshot) { s.Proxies[1].Injected.NetworkView = "" }, model.ProblemHopNetwork, "without REQUESTED_NETWORK_VIEW=network2"},
		{"label", func(s *model.Snapshot) { delete(gwSvc(s).Endpoints[0].Labels, model.LabelNetwork) }, model.ProblemHopNetwork, "lacks the label topology.istio.io/network"},
		{"no pods", func(s *model.Snapshot) { gwSvc(s).Endpoints = nil }, model.ProblemHopPods, "no pods behind it"},
		{"invalid Gateway", func(s *model.Snapshot) {
			s.IstioGateways = append(s.IstioGateways, model.IstioGateway{Cluster: "cluster1", Namespace: "ns", Name: "bad", Error: "servers[0]: tls.mode \"X\""})
		}, model.ProblemIstioGatewayInvalid, "Gateway ns/bad in cluster1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := meshtest.Lab()
			tc.edit(s)
			ps := secondHopProblems(s, &Inputs{Planes: plane.NewSet(s, nil)})
			if tc.kind == "" {
				if len(ps) != 0 {
					t.Fatalf("healthy mesh: %+v", ps)
				}
				return
			}
			for _, p := range ps {
				if p.Kind == tc.kind && strings.Contains(p.Sentence, tc.text) {
					return
				}
			}
			t.Errorf("no %s with %q in %+v", tc.kind, tc.text, ps)
		})
	}
}

// TestTrustDomainProblems: two primaries with other trust domains reject
// each other's workloads, unless an alias accepts them.
func TestTrustDomainProblems(t *testing.T) {
	s := meshtest.LabMultiPrimary(testNow)
	if ps := trustDomainProblems(s); len(ps) != 0 {
		t.Fatalf("one trust domain: %+v", ps)
	}
	s.MeshConfigs[1].TrustDomain = "cluster2.example"
	ps := trustDomainProblems(s)
	if len(ps) != 2 || !strings.Contains(ps[0].Sentence, "accept the trust domains cluster.local, not cluster2.example") {
		t.Fatalf("%+v", ps)
	}
	s.MeshConfigs[0].TrustDomainAliases = []string{"cluster2.example"}
	s.MeshConfigs[1].TrustDomainAliases = []string{"cluster.local"}
	if ps := trustDomainProblems(s); len(ps) != 0 {
		t.Fatalf("aliases: %+v", ps)
	}
}
