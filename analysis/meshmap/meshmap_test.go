package meshmap

import (
	"strings"
	"testing"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

// mesh: cluster1 (network1, istiod, reads its remote secrets), cluster2
// (network2, through a secret in cluster1, with a gateway), cluster3
// (network2, a context).
func mesh() *model.Snapshot {
	return &model.Snapshot{
		Clusters: []model.Cluster{
			{ID: "cluster1", Network: "network1", State: model.StateSynced, Source: model.SourceRef{Kind: model.SourceContext, Name: "c1"},
				Istiods: []model.IstiodPod{{Name: "istiod-0", ClusterID: "cluster1", Ready: true}}, SecretsRead: true},
			{ID: "cluster2", Network: "network2", State: model.StateSynced,
				Source: model.SourceRef{Kind: model.SourceSecret, Name: "istio-system/istio-remote-secret-cluster2", In: "cluster1", Key: "cluster2"}},
			{ID: "cluster3", Network: "network2", State: model.StateSynced, Source: model.SourceRef{Kind: model.SourceContext, Name: "c3"}},
		},
		Networks: []model.Network{{Name: "network1", Clusters: []string{"cluster1"}}, {Name: "network2", Clusters: []string{"cluster2", "cluster3"}, Gateways: 1}},
		Gateways: []model.Gateway{{Network: "network2", Cluster: "cluster2", Address: "192.168.60.9", Port: 15443, From: model.GatewayFromService, Service: "istio-system/istio-eastwestgateway"}},
		Proxies: []model.ProxyPod{
			{Cluster: "cluster1", Namespace: "a", Name: "p", Kind: model.ProxySidecar},
			{Cluster: "cluster2", Namespace: "a", Name: "q", Kind: model.ProxyAmbient},
			{Cluster: "cluster2", Namespace: "a", Name: "r", Kind: model.ProxySidecar},
			{Cluster: "cluster3", Namespace: "istio-system", Name: "ztunnel-x", Kind: model.ProxyZtunnel},
			{Cluster: "cluster3", Namespace: "a", Name: "s", Kind: model.ProxyAmbient},
		},
	}
}

func TestBuild(t *testing.T) {
	gwHost := "istio-eastwestgateway.istio-system.svc.cluster.local"
	for _, tc := range []struct {
		name     string
		change   func(*model.Snapshot)
		views    []model.IstiodView
		problems []model.Problem
		// want is the map in a few words (see describe).
		want string
	}{
		{name: "healthy", want: "network1[cluster1*:synced:sidecar] network2[cluster2:synced:mixed cluster3:synced:ambient gw 192.168.60.9:15443 ok] cp cluster1(secrets): ->cluster2 -x>cluster3(no remote secret)"},
		{name: "a second secret: every arrow whole",
			change: func(s *model.Snapshot) {
				s.Clusters[2].Sources = []model.SourceRef{s.Clusters[2].Source, {Kind: model.SourceSecret, Name: "istio-system/istio-remote-secret-cluster3", In: "cluster1"}}
			},
			want: "network1[cluster1*:synced:sidecar] network2[cluster2:synced:mixed cluster3:synced:ambient gw 192.168.60.9:15443 ok] cp cluster1(secrets): ->cluster2 ->cluster3"},
		{name: "a failing secret: broken arrow, its problem on it",
			change: func(s *model.Snapshot) {
				s.Clusters[1].State, s.Clusters[1].Reason = model.StateError, "x509: certificate signed by unknown authority"
			},
			problems: []model.Problem{{Severity: model.SeverityError, Kind: "remote-secret", Cluster: "cluster2", Sentence: "cluster cluster2 (secret): x509"}},
			want:     "network1[cluster1*:synced:sidecar] network2[cluster2:error:mixed cluster3:synced:ambient gw 192.168.60.9:15443 ok] cp cluster1(secrets): -x>cluster2(secret fails: error){remote-secret} -x>cluster3(no remote secret)"},
		{name: "a refused secret: broken, not missing",
			change: func(s *model.Snapshot) {
				s.Clusters[1].State, s.Clusters[1].ErrorKind = model.StateError, model.ErrRefusedConfig
			},
			want: "network1[cluster1*:synced:sidecar] network2[cluster2:error:mixed cluster3:synced:ambient gw 192.168.60.9:15443 ok] cp cluster1(secrets): -x>cluster2(secret refused) -x>cluster3(no remote secret)"},
		{name: "a missing cluster's problem on its arrow, not cluster30's",
			change: func(s *model.Snapshot) {
				s.Clusters = append(s.Clusters, model.Cluster{ID: "cluster30", Network: "network2", State: model.StateSynced,
					Source: model.SourceRef{Kind: model.SourceSecret, Name: "istio-system/istio-remote-secret-cluster30", In: "cluster1"}})
			},
			problems: []model.Problem{{Severity: model.SeverityError, Kind: "control-plane-missing-cluster", Cluster: "cluster1", Sentence: "istiod cluster1 does not read cluster cluster3: no secret"}},
			want:     "network1[cluster1*:synced:sidecar] network2[cluster2:synced:mixed cluster3:synced:ambient cluster30:synced gw 192.168.60.9:15443 ok] cp cluster1(secrets): ->cluster2 -x>cluster3(no remote secret){control-plane-missing-cluster} ->cluster30"},
		{name: "gateway problems on the gateway, cluster problems on the box, the rest off the map",
			problems: []model.Problem{
				{Severity: model.SeverityError, Kind: "gateway-not-ready", Cluster: "cluster2", Service: gwHost, Sentence: "no ready pod"},
				{Severity: model.SeverityWarning, Kind: "cluster-warning", Cluster: "cluster3", Sentence: "forbidden"},
				{Severity: model.SeverityError, Kind: "leak", Service: "h.s.svc.cluster.local", Sentence: "leak"},
			},
			want: "network1[cluster1*:synced:sidecar] network2[cluster2:synced:mixed cluster3:synced:ambient{cluster-warning} gw 192.168.60.9:15443 gateway-not-ready{gateway-not-ready}] cp cluster1(secrets): ->cluster2 -x>cluster3(no remote secret) off{leak}"},
		{name: "a gateway Service without an address: its problem on the network",
			change: func(s *model.Snapshot) { s.Gateways = nil },
			problems: []model.Problem{
				{Severity: model.SeverityError, Kind: "gateway-no-address", Cluster: "cluster2", Service: gwHost, Sentence: "no address"},
			},
			want: "network1[cluster1*:synced:sidecar] network2[cluster2:synced:mixed cluster3:synced:ambient]{gateway-no-address} cp cluster1(secrets): ->cluster2 -x>cluster3(no remote secret)"},
		{name: "secrets not read, clusterz known",
			change: func(s *model.Snapshot) { s.Clusters[0].SecretsRead = false; s.Clusters[1].Source.In = "" },
			views:  []model.IstiodView{{ControlPlane: "cluster1", Clusters: []model.IstiodCluster{{ID: "cluster1"}, {ID: "cluster2"}, {ID: "cluster3"}}}},
			want:   "network1[cluster1*:synced:sidecar] network2[cluster2:synced:mixed cluster3:synced:ambient gw 192.168.60.9:15443 ok] cp cluster1(clusterz): ->cluster2 ->cluster3"},
		{name: "reads unknown: no arrows",
			change: func(s *model.Snapshot) { s.Clusters[0].SecretsRead = false; s.Clusters[1].Source.In = "" },
			want:   "network1[cluster1*:synced:sidecar] network2[cluster2:synced:mixed cluster3:synced:ambient gw 192.168.60.9:15443 ok] cp cluster1(unknown):"},
		{name: "removed clusters and a cluster without a network",
			change: func(s *model.Snapshot) {
				s.Clusters[2].State = model.StateRemoved
				s.Clusters = append(s.Clusters, model.Cluster{ID: "cluster4", State: model.StateTimeout,
					Source: model.SourceRef{Kind: model.SourceSecret, Name: "istio-system/istio-remote-secret-cluster4", In: "cluster1"}})
			},
			want: "network1[cluster1*:synced:sidecar] network2[cluster2:synced:mixed gw 192.168.60.9:15443 ok] [cluster4:timeout] cp cluster1(secrets): ->cluster2 -x>cluster4(secret fails: timeout)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mesh()
			if tc.change != nil {
				tc.change(s)
			}
			if got := describe(Build(plane.NewSet(s, tc.views), tc.problems)); got != tc.want {
				t.Errorf("\ngot  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// describe is a map in one line: network[cluster*:state:mode ... gw addr
// health]{problems} cp id(from): ->to -x>to(why){problems} off{problems}.
func describe(m Map) string {
	kinds := func(ps []model.Problem) string {
		if len(ps) == 0 {
			return ""
		}
		var ks []string
		for _, p := range ps {
			ks = append(ks, string(p.Kind))
		}
		return "{" + strings.Join(ks, ",") + "}"
	}
	var parts []string
	for _, n := range m.Networks {
		var in []string
		for _, c := range n.Clusters {
			s := c.ID
			if c.Primary {
				s += "*"
			}
			s += ":" + string(c.State)
			if c.Mode != "" {
				s += ":" + c.Mode
			}
			in = append(in, s+kinds(c.Problems))
		}
		for _, g := range n.Gateways {
			in = append(in, "gw "+g.Address+" "+g.Health+kinds(g.Problems))
		}
		parts = append(parts, n.Name+"["+strings.Join(in, " ")+"]"+kinds(n.Problems))
	}
	for _, cp := range m.ControlPlanes {
		from := cp.From
		if !cp.Known {
			from = "unknown"
		}
		s := "cp " + cp.ID + "(" + from + "):" + kinds(cp.Problems)
		for _, a := range cp.Arrows {
			if a.Broken {
				s += " -x>" + a.To + "(" + a.Why + ")"
			} else {
				s += " ->" + a.To
			}
			s += kinds(a.Problems)
		}
		parts = append(parts, s)
	}
	if len(m.Problems) > 0 {
		parts = append(parts, "off"+kinds(m.Problems))
	}
	return strings.Join(parts, " ")
}

func TestDot(t *testing.T) {
	s := mesh()
	s.Clusters[1].State = model.StateError
	var b strings.Builder
	if err := Dot(&b, Build(plane.NewSet(s, nil), []model.Problem{{Severity: model.SeverityError, Kind: "remote-secret", Cluster: "cluster2", Sentence: `a "quoted" \ sentence`}})); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		`subgraph "cluster_net0" {`, `label="network network1";`,
		`"cluster:cluster1" [label="cluster1\nsynced · sidecar\nistiod"];`,
		`"gateway:network2:0" [label="gateway 192.168.60.9:15443\nok", shape=cds];`,
		`"istiod:cluster1" -> "cluster:cluster2" [style=dashed, color=red, arrowhead=tee, label="✗ secret fails: error\nerror remote-secret"];`,
		`"istiod:cluster1" -> "cluster:cluster3" [style=dashed, color=red, arrowhead=tee, label="✗ no remote secret"];`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dot lacks %s:\n%s", want, out)
		}
	}
	if strings.Count(out, "{") != strings.Count(out, "}") {
		t.Errorf("unbalanced braces:\n%s", out)
	}
}

// TestGatewayServesNothing: a gateway whose second hop breaks for every
// request (no Gateway selects its pods) is marked; one that breaks for
// one service only is not.
func TestGatewayServesNothing(t *testing.T) {
	s := meshtest.Lab()
	s.IstioGateways = nil
	m := Build(plane.NewSet(s, nil), explain.Diagnose(s, explain.Inputs{}))
	var got []string
	for _, n := range m.Networks {
		for _, g := range n.Gateways {
			if g.ServesNothing {
				got = append(got, n.Name+" "+g.Address+" "+g.Health)
			}
		}
	}
	if strings.Join(got, ";") != "network1 192.168.60.113:15443 serves nothing;network2 192.168.60.9:15443 serves nothing" {
		t.Errorf("serves nothing: %v", got)
	}
	s = meshtest.Lab()
	for _, sic := range s.Service(meshtest.Hello).Clusters {
		sic.ExportTo = []string{"."}
	}
	m = Build(plane.NewSet(s, nil), explain.Diagnose(s, explain.Inputs{}))
	for _, n := range m.Networks {
		for _, g := range n.Gateways {
			if g.ServesNothing || g.Healthy || g.Health != "second-hop-no-sni" {
				t.Errorf("one service hidden: %s %+v", n.Name, g)
			}
		}
	}
}
