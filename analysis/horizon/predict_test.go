package horizon

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

const hello = meshtest.Hello

// ep is a helloworld endpoint in the test mesh.
type ep struct {
	cluster, network, ip, pod, locality string
	noMTLS, notReady, terminating       bool
}

func gw(network, cluster, addr string, port uint32) model.Gateway {
	return model.Gateway{Network: network, Cluster: cluster, Address: addr, Port: port, From: model.GatewayFromService}
}

// seedGateways are the lab's east-west gateways.
var seedGateways = meshtest.LabGateways()

var seedEndpoints = []ep{
	{cluster: "cluster1", network: "network1", ip: "10.44.0.13", pod: "helloworld-v1"},
	{cluster: "cluster2", network: "network2", ip: "10.144.0.15", pod: "helloworld-v2"},
}

func mesh(gws []model.Gateway, eps []ep) *model.Snapshot {
	svc := &model.Service{Hostname: hello, Namespace: "sample", Name: "helloworld",
		Ports: []model.ServicePort{{Name: "http", Port: 5000}}, Clusters: map[string]*model.ServiceInCluster{}}
	for _, e := range eps {
		sic := svc.Clusters[e.cluster]
		if sic == nil {
			sic = &model.ServiceInCluster{Cluster: e.cluster, Ports: svc.Ports}
			svc.Clusters[e.cluster] = sic
		}
		tls := "istio"
		if e.noMTLS {
			tls = ""
		}
		sic.Endpoints = append(sic.Endpoints, model.Endpoint{
			Cluster: e.cluster, Network: e.network, Address: e.ip, Pod: e.pod, Locality: e.locality,
			Ports: []model.EndpointPort{{Name: "http", Port: 5000}}, TLSMode: tls,
			Ready: !e.notReady, Serving: !e.notReady, Terminating: e.terminating,
		})
	}
	return &model.Snapshot{Gateways: gws, Services: []*model.Service{svc}}
}

// render is "address:port kind weight health" per endpoint, sorted, and
// "drop address reason" per dropped one.
func render(p Prediction) []string {
	var out []string
	for _, e := range p.Endpoints {
		out = append(out, fmt.Sprintf("%s:%d %s w=%d %s", e.Address, e.Port, e.Kind, e.Weight, e.Health))
	}
	for _, d := range p.Dropped {
		out = append(out, fmt.Sprintf("drop %s %s", d.Address, d.Reason))
	}
	sort.Strings(out)
	return out
}

func TestPredict(t *testing.T) {
	net1 := Proxy{Cluster: "cluster1", Network: "network1"}
	net2 := Proxy{Cluster: "cluster2", Network: "network2"}
	none := Proxy{Cluster: "cluster1"}
	three := append(append([]ep{}, seedEndpoints...),
		ep{cluster: "cluster2", network: "network2", ip: "10.144.0.20", pod: "helloworld-v2-b"},
		ep{cluster: "cluster2", network: "network2", ip: "10.144.0.21", pod: "helloworld-v2-c"})
	cases := []struct {
		name   string
		istiod string // the istiod behaviour mirrored
		gws    []model.Gateway
		eps    []ep
		proxy  Proxy
		want   []string
	}{
		{
			name: "seed from network1", istiod: "EndpointsByNetworkFilter: same network direct, other network via its gateway",
			gws: seedGateways, eps: seedEndpoints, proxy: net1,
			want: []string{"10.44.0.13:5000 local w=1 HEALTHY", "192.168.60.9:15443 gateway w=1 UNKNOWN"},
		},
		{
			name: "seed from network2", istiod: "EndpointsByNetworkFilter",
			gws: seedGateways, eps: seedEndpoints, proxy: net2,
			want: []string{"10.144.0.15:5000 local w=1 HEALTHY", "192.168.60.113:15443 gateway w=1 UNKNOWN"},
		},
		{
			name: "proxy without NETWORK", istiod: "forceGateway: b.network == \"\" && epNetwork != \"\" && len(gateways) > 0",
			gws: seedGateways, eps: seedEndpoints, proxy: none,
			want: []string{"192.168.60.113:15443 forced w=1 UNKNOWN", "192.168.60.9:15443 forced w=1 UNKNOWN"},
		},
		{
			name: "three pods behind one gateway", istiod: "splitWeightAmongGateways: gateway weight = sum of the endpoints' weights",
			gws: seedGateways, eps: three, proxy: net1,
			want: []string{"10.44.0.13:5000 local w=1 HEALTHY", "192.168.60.9:15443 gateway w=3 UNKNOWN"},
		},
		{
			name: "no gateway for network2 leaks", istiod: "len(gateways) == 0: endpoint sent directly",
			gws: seedGateways[:1], eps: seedEndpoints, proxy: net1,
			want: []string{"10.144.0.15:5000 leaked w=1 HEALTHY", "10.44.0.13:5000 local w=1 HEALTHY"},
		},
		{
			name: "no gateways at all", istiod: "!IsMultiNetworkEnabled(): endpoints returned unchanged",
			gws: nil, eps: seedEndpoints, proxy: net1,
			want: []string{"10.144.0.15:5000 local w=1 HEALTHY", "10.44.0.13:5000 local w=1 HEALTHY"},
		},
		{
			name: "cross-network pod without tlsMode is dropped", istiod: "!isMtlsEnabled(lbEp): continue",
			gws: seedGateways, eps: []ep{seedEndpoints[0], {cluster: "cluster2", network: "network2", ip: "10.144.0.15", noMTLS: true}}, proxy: net1,
			want: []string{"10.44.0.13:5000 local w=1 HEALTHY", "drop 10.144.0.15 no-mtls"},
		},
		{
			name: "same-network pod without tlsMode is kept", istiod: "mTLS is only checked on the gateway path",
			gws: seedGateways, eps: []ep{seedEndpoints[0], {cluster: "cluster2", network: "network2", ip: "10.144.0.15", noMTLS: true}}, proxy: net2,
			want: []string{"10.144.0.15:5000 local w=1 HEALTHY", "192.168.60.113:15443 gateway w=1 UNKNOWN"},
		},
		{
			name: "unhealthy endpoints are sent and counted", istiod: "PILOT_AUTO_SEND_UNHEALTHY_ENDPOINTS=true; the network filter ignores health",
			gws: seedGateways, eps: append(three[:3:3], ep{cluster: "cluster1", network: "network1", ip: "10.44.0.20", notReady: true}), proxy: net1,
			want: []string{"10.44.0.13:5000 local w=1 HEALTHY", "10.44.0.20:5000 local w=1 UNHEALTHY", "192.168.60.9:15443 gateway w=2 UNKNOWN"},
		},
		{
			name: "terminating endpoints are dropped", istiod: "filterIstioEndpoint: HealthStatus == Terminating",
			gws: seedGateways, eps: append(seedEndpoints[:2:2], ep{cluster: "cluster2", network: "network2", ip: "10.144.0.20", notReady: true, terminating: true}), proxy: net1,
			want: []string{"10.44.0.13:5000 local w=1 HEALTHY", "192.168.60.9:15443 gateway w=1 UNKNOWN", "drop 10.144.0.20 not-ready"},
		},
		{
			name: "two gateways: LCM scale and even split", istiod: "GetLBWeightScaleFactor (LCM of gateway counts), splitWeightAmongGateways",
			gws: append(seedGateways[:2:2], gw("network2", "cluster2", "192.168.60.10", 15443)), eps: seedEndpoints, proxy: net1,
			want: []string{"10.44.0.13:5000 local w=2 HEALTHY", "192.168.60.10:15443 gateway w=1 UNKNOWN", "192.168.60.9:15443 gateway w=1 UNKNOWN"},
		},
		{
			name: "own cluster's gateway preferred", istiod: "selectNetworkGateways: network+cluster first, then network",
			gws: append(seedGateways[:2:2], gw("network2", "cluster3", "192.168.60.30", 15443)),
			eps: append(seedEndpoints[:2:2], ep{cluster: "cluster3", network: "network2", ip: "10.145.0.7"}), proxy: net1,
			// LCM: network2 has 2 gateways -> scale 2; each endpoint goes to its own cluster's gateway.
			want: []string{"10.44.0.13:5000 local w=2 HEALTHY", "192.168.60.30:15443 gateway w=2 UNKNOWN", "192.168.60.9:15443 gateway w=2 UNKNOWN"},
		},
		{
			name: "gateway without mTLS port is useless to a sidecar", istiod: "selectNetworkGateways for sidecars skips gw.Port == 0",
			gws: []model.Gateway{seedGateways[0], gw("network2", "cluster2", "192.168.60.9", 0)}, eps: seedEndpoints, proxy: net1,
			want: []string{"10.144.0.15:5000 leaked w=1 HEALTHY", "10.44.0.13:5000 local w=1 HEALTHY"},
		},
		{
			name: "hostname gateway is not used", istiod: "only IP gateways are used (hostnames resolved by DNS or dropped)",
			gws: []model.Gateway{seedGateways[0], {Network: "network2", Cluster: "cluster2", Address: "a1.elb.example.com", Port: 15443, Hostname: true}},
			eps: seedEndpoints, proxy: net1,
			want: []string{"10.144.0.15:5000 leaked w=1 HEALTHY", "10.44.0.13:5000 local w=1 HEALTHY"},
		},
		{
			name: "IPv6 proxy with IPv4 gateways", istiod: "filterGatewaysByIPFamily: no reachable gateway, endpoint skipped",
			gws: seedGateways, eps: seedEndpoints, proxy: Proxy{Cluster: "cluster1", Network: "network1", IP: "fd00::10"},
			want: []string{"10.44.0.13:5000 local w=1 HEALTHY", "drop 10.144.0.15 ip-family"},
		},
		{
			name: "requested network view", istiod: "proxyView.IsVisible: REQUESTED_NETWORK_VIEW",
			gws: seedGateways, eps: seedEndpoints, proxy: Proxy{Cluster: "cluster1", Network: "network1", NetworkView: []string{"network1"}},
			want: []string{"10.44.0.13:5000 local w=1 HEALTHY", "drop 10.144.0.15 network-view"},
		},
		{
			name: "endpoint without network", istiod: "InNetwork: either side \"\" counts as the same network",
			gws: seedGateways, eps: []ep{seedEndpoints[0], {cluster: "cluster2", network: "", ip: "10.144.0.15"}}, proxy: net1,
			want: []string{"10.144.0.15:5000 local w=1 HEALTHY", "10.44.0.13:5000 local w=1 HEALTHY"},
		},
		{
			name: "a resolved DNS name: one gateway entry per address", istiod: "resolveHostnameGateways: every A/AAAA record a NetworkGateway; LCM of gateway counts scales weights",
			gws: []model.Gateway{seedGateways[0],
				{Network: "network2", Cluster: "cluster2", Address: "192.168.60.21", Name: "gw2.example.test", Port: 15443},
				{Network: "network2", Cluster: "cluster2", Address: "192.168.60.22", Name: "gw2.example.test", Port: 15443}},
			eps: seedEndpoints, proxy: net1,
			want: []string{"10.44.0.13:5000 local w=2 HEALTHY", "192.168.60.21:15443 gateway w=1 UNKNOWN", "192.168.60.22:15443 gateway w=1 UNKNOWN"},
		},
		{
			name: "a DNS name with A and AAAA records, an IPv4 proxy", istiod: "filterGatewaysByIPFamily: a single-stack proxy uses the resolved addresses of its family only",
			gws: []model.Gateway{seedGateways[0],
				{Network: "network2", Cluster: "cluster2", Address: "192.168.60.21", Name: "gw2.example.test", Port: 15443},
				{Network: "network2", Cluster: "cluster2", Address: "fd00::21", Name: "gw2.example.test", Port: 15443}},
			eps: seedEndpoints, proxy: Proxy{Cluster: "cluster1", Network: "network1", IP: "10.44.0.99"},
			want: []string{"10.44.0.13:5000 local w=2 HEALTHY", "192.168.60.21:15443 gateway w=2 UNKNOWN"},
		},
		{
			name: "a resolved DNS name, istiod with RESOLVE_HOSTNAME_GATEWAYS=false", istiod: "resolveHostnameGateways drops non-IP gateways when the feature is off",
			gws: []model.Gateway{seedGateways[0],
				{Network: "network2", Cluster: "cluster2", Address: "192.168.60.21", Name: "gw2.example.test", Port: 15443, NotResolvedBy: []string{"cluster1"}}},
			eps: seedEndpoints, proxy: Proxy{Cluster: "cluster1", Network: "network1", ConfigCluster: "cluster1"},
			want: []string{"10.144.0.15:5000 leaked w=1 HEALTHY", "10.44.0.13:5000 local w=1 HEALTHY"},
		},
		{
			name: "locality groups keep their own gateway entry", istiod: "the rewrite happens per LocalityLbEndpoints",
			gws:   seedGateways,
			eps:   []ep{seedEndpoints[0], {cluster: "cluster2", network: "network2", ip: "10.144.0.15", locality: "r/z1"}, {cluster: "cluster2", network: "network2", ip: "10.144.0.16", locality: "r/z2"}},
			proxy: net1,
			want:  []string{"10.44.0.13:5000 local w=1 HEALTHY", "192.168.60.9:15443 gateway w=1 UNKNOWN", "192.168.60.9:15443 gateway w=1 UNKNOWN"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Predict(mesh(c.gws, c.eps), hello, 5000, c.proxy)
			if !p.Found {
				t.Fatal("service not found")
			}
			got := render(p)
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("istiod behaviour: %s\n got: %q\nwant: %q", c.istiod, got, c.want)
			}
			for _, e := range p.Endpoints {
				if e.Why == "" || len(e.StandsFor) == 0 {
					t.Errorf("%s:%d has no reason or stands for nothing", e.Address, e.Port)
				}
			}
			for _, d := range p.Dropped {
				if d.Why == "" {
					t.Errorf("dropped %s has no reason", d.Address)
				}
			}
		})
	}
}

func TestPredictClusterLocal(t *testing.T) {
	s := mesh(seedGateways, seedEndpoints)
	s.Services[0].Hostname = "dns.kube-system.svc.cluster.local"
	p := Predict(s, "dns.kube-system.svc.cluster.local", 5000, Proxy{Cluster: "cluster1", Network: "network1"})
	got := render(p)
	want := []string{"10.44.0.13:5000 local w=1 HEALTHY", "drop 10.144.0.15 cluster-local"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("cluster-local (istiod default cluster-local hosts): got %q, want %q", got, want)
	}
}

func TestPredictUnknownServiceOrPort(t *testing.T) {
	s := mesh(seedGateways, seedEndpoints)
	if p := Predict(s, "nope.sample.svc.cluster.local", 5000, Proxy{}); p.Found {
		t.Error("unknown service found")
	}
	if p := Predict(s, hello, 9999, Proxy{}); p.Found {
		t.Error("unknown port found")
	}
	if p := Predict(nil, hello, 5000, Proxy{}); p.Found {
		t.Error("nil snapshot found")
	}
}

func TestGatewayStandsFor(t *testing.T) {
	p := Predict(mesh(seedGateways, seedEndpoints), hello, 5000, Proxy{Cluster: "cluster1", Network: "network1"})
	for _, e := range p.Endpoints {
		if e.Kind == Gateway {
			if len(e.StandsFor) != 1 || e.StandsFor[0].Pod != "helloworld-v2" || e.StandsFor[0].Cluster != "cluster2" {
				t.Errorf("gateway stands for %+v, want helloworld-v2 in cluster2", e.StandsFor)
			}
			if e.Cluster != "cluster2" || e.Network != "network2" {
				t.Errorf("gateway endpoint attributed to %s/%s", e.Cluster, e.Network)
			}
		}
	}
}

// TestGatewayNameInWhy: a gateway entry whose address came from a DNS name
// says the name and the address in its reason ("gateway NAME (ADDR) of
// NETWORK"), for a proxy in another network and one without NETWORK; a
// gateway from an IP says what it always said.
func TestGatewayNameInWhy(t *testing.T) {
	gws := []model.Gateway{seedGateways[0],
		{Network: "network2", Cluster: "cluster2", Address: "192.168.60.21", Name: "gw2.example.test", Port: 15443},
		{Network: "network2", Cluster: "cluster2", Address: "192.168.60.22", Name: "gw2.example.test", Port: 15443}}
	whys := func(proxy Proxy) map[string]string {
		out := map[string]string{}
		for _, e := range Predict(mesh(gws, seedEndpoints), hello, 5000, proxy).Endpoints {
			out[e.Address] = e.Why
		}
		return out
	}
	w := whys(Proxy{Cluster: "cluster1", Network: "network1"})
	for _, a := range []string{"192.168.60.21", "192.168.60.22"} {
		if want := "1 endpoint(s) of network2 go through gateway gw2.example.test (" + a + ") of network2: network2 is not the proxy's network network1"; w[a] != want {
			t.Errorf("%s: %q, want %q", a, w[a], want)
		}
	}
	w = whys(Proxy{Cluster: "cluster1"})
	if want := "the proxy sends no NETWORK, so 1 endpoint(s) of network2 go through gateway gw2.example.test (192.168.60.22) of network2 (istiod forceGateway)"; w["192.168.60.22"] != want {
		t.Errorf("no NETWORK: %q, want %q", w["192.168.60.22"], want)
	}
	if want := "the proxy sends no NETWORK, so 1 endpoint(s) of network1 go through network1's east-west gateway (istiod forceGateway)"; w["192.168.60.113"] != want {
		t.Errorf("an IP gateway: %q, want %q", w["192.168.60.113"], want)
	}
}
