package build

import (
	"reflect"
	"testing"

	"github.com/meshscope/meshscope/model"
)

func TestResolveGateways(t *testing.T) {
	name := func(n string, addrs ...string) model.GatewayName {
		return model.GatewayName{Name: n, Addresses: addrs, By: model.ResolvedByMeshscope}
	}
	svc := model.Gateway{Network: "network2", Cluster: "cluster2", Address: "gw2.example.test", Port: 15443, HBONEPort: 15008, Hostname: true,
		From: model.GatewayFromService, Service: "istio-system/istio-eastwestgateway"}
	ip := model.Gateway{Network: "network1", Cluster: "cluster1", Address: "192.0.2.9", Port: 15443, From: model.GatewayFromService, Service: "istio-system/istio-eastwestgateway"}
	resolved := func(addr string, notBy ...string) model.Gateway {
		g := svc
		g.Address, g.Name, g.Hostname, g.NotResolvedBy = addr, "gw2.example.test", false, notBy
		return g
	}
	for _, tc := range []struct {
		name      string
		gws       []model.Gateway
		names     []model.GatewayName
		noResolve []string
		want      []model.Gateway
	}{
		{"IP gateways stay as they are", []model.Gateway{ip}, nil, nil, []model.Gateway{ip}},
		{"every address a gateway with the same network, cluster and ports",
			[]model.Gateway{ip, svc}, []model.GatewayName{name("gw2.example.test", "192.0.2.21", "2001:db8::21")}, nil,
			[]model.Gateway{ip, resolved("192.0.2.21"), resolved("2001:db8::21")}},
		{"a name that resolves to nothing stays a hostname gateway (left out by predictions)",
			[]model.Gateway{svc}, []model.GatewayName{name("gw2.example.test")}, nil, []model.Gateway{svc}},
		{"a name not asked yet stays a hostname gateway", []model.Gateway{svc}, nil, nil, []model.Gateway{svc}},
		{"an istiod that does not resolve names does not use them",
			[]model.Gateway{svc}, []model.GatewayName{name("gw2.example.test", "192.0.2.21")}, []string{"cluster2"},
			[]model.Gateway{resolved("192.0.2.21", "cluster2")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := resolveGateways(tc.gws, tc.names, tc.noResolve)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestGatewayNames(t *testing.T) {
	mn, err := model.ParseMeshNetworks(`networks:
  network3:
    endpoints: [{fromRegistry: cluster3}]
    gateways: [{address: gw3.example.test, port: 15443}, {address: 192.0.2.3, port: 15443}]
`)
	if err != nil {
		t.Fatal(err)
	}
	in := Input{MeshNetworks: mn, Clusters: []Share{
		{Part: &Part{gateways: []model.Gateway{{Network: "network2", Address: "gw2.example.test", Hostname: true}, {Network: "network1", Address: "192.0.2.1"}}}},
		{Part: &Part{gateways: []model.Gateway{{Network: "network2", Address: "gw2.example.test", Hostname: true}}}},
		{}, // not watched
	}}
	if got, want := GatewayNames(in), []string{"gw2.example.test", "gw3.example.test"}; !reflect.DeepEqual(got, want) {
		t.Errorf("GatewayNames = %v, want %v", got, want)
	}
}

// TestAssembleResolvesPerControlPlane: RESOLVE_HOSTNAME_GATEWAYS=false
// for one control plane (--istiod-env) marks the resolved gateways as not
// used by it; the answers are in the snapshot.
func TestAssembleResolvesPerControlPlane(t *testing.T) {
	in := Input{
		Clusters: []Share{{Cluster: model.Cluster{ID: "cluster1", State: model.StateSynced, Source: model.SourceRef{Kind: model.SourceContext, Name: "cluster1"}},
			FromContext: true,
			Part:        &Part{Network: "network1", gateways: []model.Gateway{{Network: "network2", Cluster: "cluster2", Address: "gw2.example.test", Port: 15443, Hostname: true}}}}},
		MeshNetworks: &model.MeshNetworks{},
		IstiodEnv:    []model.IstiodEnv{{Cluster: "cluster1", Key: model.SettingResolveHostnameGateways, Value: "false"}},
		GatewayNames: []model.GatewayName{{Name: "gw2.example.test", Addresses: []string{"192.0.2.21"}, By: model.ResolvedByMeshscope}},
	}
	s := Assemble(in)
	if len(s.Gateways) != 1 || s.Gateways[0].Address != "192.0.2.21" || s.Gateways[0].Name != "gw2.example.test" {
		t.Fatalf("gateways %+v", s.Gateways)
	}
	if g := s.Gateways[0]; g.UsedBy("cluster1") || !g.UsedBy("cluster2") {
		t.Errorf("used by cluster1 %t, cluster2 %t: want false, true", g.UsedBy("cluster1"), g.UsedBy("cluster2"))
	}
	if n, ok := s.GatewayName("gw2.example.test"); !ok || n.Addresses[0] != "192.0.2.21" {
		t.Errorf("GatewayName = %+v, %t", n, ok)
	}
}
