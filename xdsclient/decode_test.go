package xdsclient

import (
	"reflect"
	"testing"
	"unsafe"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tcpproxy "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// TestFastEDSDecodeMatchesProto holds the hand-written EDS decoder to the
// generated protos on the shapes istiod sends and a few it might.
func TestFastEDSDecodeMatchesProto(t *testing.T) {
	lab := cla(helloEDS,
		ep{"10.44.0.13", 5000, 1, "helloworld-v1-abc;sample;helloworld;v1;cluster1"},
		ep{"192.168.60.9", 15443, 3, ";;;;cluster2"})
	noWeight := proto.Clone(lab).(*endpoint.ClusterLoadAssignment)
	noWeight.Endpoints[0].LbEndpoints[0].LoadBalancingWeight = nil
	noWeight.Endpoints[0].LbEndpoints[1].HealthStatus = core.HealthStatus_DRAINING
	zeroWeight := proto.Clone(lab).(*endpoint.ClusterLoadAssignment)
	zeroWeight.Endpoints[0].LbEndpoints[0].LoadBalancingWeight = wrapperspb.UInt32(0)
	twoLoc := proto.Clone(lab).(*endpoint.ClusterLoadAssignment)
	twoLoc.Endpoints = append(twoLoc.Endpoints, &endpoint.LocalityLbEndpoints{
		Locality: &core.Locality{Region: "r2", Zone: "z2", SubZone: "s2"}, Priority: 1, LoadBalancingWeight: wrapperspb.UInt32(7),
		LbEndpoints: cla("x", ep{"10.144.0.15", 5000, 2, "hw-v2;sample;helloworld;v2;cluster2"}).Endpoints[0].LbEndpoints,
	})
	list := proto.Clone(lab).(*endpoint.ClusterLoadAssignment)
	list.Endpoints[0].LbConfig = &endpoint.LocalityLbEndpoints_LoadBalancerEndpoints{
		//lint:ignore SA1019 the deprecated form must still decode
		LoadBalancerEndpoints: &endpoint.LocalityLbEndpoints_LbEndpointList{LbEndpoints: list.Endpoints[0].LbEndpoints}}
	list.Endpoints[0].LbEndpoints = nil
	noMeta := proto.Clone(lab).(*endpoint.ClusterLoadAssignment)
	for _, lb := range noMeta.Endpoints[0].LbEndpoints {
		lb.Metadata = nil
	}
	empty := &endpoint.ClusterLoadAssignment{ClusterName: helloEDS}

	for name, m := range map[string]*endpoint.ClusterLoadAssignment{
		"lab": lab, "no weight": noWeight, "zero weight": zeroWeight, "two localities": twoLoc,
		"endpoint list": list, "no metadata": noMeta, "empty": empty,
	} {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		fast, err := decodeCLAFast(b, nil)
		if err != nil {
			t.Errorf("%s: fast: %v", name, err)
			continue
		}
		slow, err := decodeLoadAssignment(m)
		if err != nil {
			t.Fatal(err)
		}
		if fast.Cluster != slow.Cluster || !reflect.DeepEqual(fast.Endpoints, slow.Endpoints) {
			t.Errorf("%s:\nfast %+v\nslow %+v", name, fast, slow)
		}
	}
	if la, _ := decodeCLAFast(mustMarshal(t, twoLoc), nil); len(la.Endpoints) != 3 || la.Endpoints[2].Locality.SubZone != "s2" || la.Endpoints[2].Priority != 1 ||
		la.Endpoints[2].LocalityWeight != 7 || la.Endpoints[0].LocalityWeight != 0 {
		t.Errorf("two localities: %+v", la.Endpoints)
	}
}

func mustMarshalB(b testing.TB, m proto.Message) []byte {
	out, err := proto.Marshal(m)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

func mustMarshal(t *testing.T, m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecodeErrors: what decodeResource rejects (and so NACKs).
func TestDecodeErrors(t *testing.T) {
	pipe := &endpoint.ClusterLoadAssignment{ClusterName: "c", Endpoints: []*endpoint.LocalityLbEndpoints{{LbEndpoints: []*endpoint.LbEndpoint{{
		HostIdentifier: &endpoint.LbEndpoint_Endpoint{Endpoint: &endpoint.Endpoint{Address: &core.Address{Address: &core.Address_Pipe{Pipe: &core.Pipe{Path: "/x"}}}}}}}}}}
	pa, _ := anypb.New(pipe)
	noName, _ := anypb.New(&endpoint.ClusterLoadAssignment{})
	wrongType, _ := anypb.New(edsCluster("x"))
	cases := map[string]struct {
		t Type
		a *anypb.Any
	}{
		"pipe address":      {EDS, pa},
		"no cluster name":   {EDS, noName},
		"wrong type":        {EDS, wrongType},
		"garbage cluster":   {CDS, garbage},
		"garbage endpoints": {EDS, &anypb.Any{TypeUrl: endpointTypeURL, Value: []byte{0x12, 0xff}}},
		"nil":               {CDS, nil},
	}
	for name, c := range cases {
		if _, err := decodeResource(c.t, c.a, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestFastEDSReuse: decoding against the previous state gives exactly what
// a fresh decode gives, whatever changed — weights, an endpoint inserted
// (shifting every position), locality, metadata — and reused endpoints
// point into the new buffer, not the old one.
func TestFastEDSReuse(t *testing.T) {
	base := []ep{
		{"10.44.0.13", 5000, 1, "hw-v1-a;sample;helloworld;v1;cluster1"},
		{"10.44.0.14", 5000, 1, "hw-v1-b;sample;helloworld;v1;cluster1"},
		{"192.168.60.9", 15443, 1, ";;;;cluster2"},
	}
	mk := func(eps []ep, zone string) []byte {
		m := cla(helloEDS, eps...)
		m.Endpoints[0].Locality.Zone = zone
		return mustMarshal(t, m)
	}
	prevRaw := mk(base, "z1")
	prev, err := decodeCLAFast(prevRaw, nil)
	if err != nil {
		t.Fatal(err)
	}
	weight := append([]ep(nil), base...)
	weight[2].weight = 3
	inserted := append([]ep{{"10.44.0.1", 5000, 1, "hw-v1-z;sample;helloworld;v1;cluster1"}}, base...)
	meta := append([]ep(nil), base...)
	meta[0].workload = "hw-v1-a;sample;helloworld;v2;cluster1"
	groupWeight := cla(helloEDS, base...)
	groupWeight.Endpoints[0].Locality.Zone = "z1"
	groupWeight.Endpoints[0].LoadBalancingWeight = wrapperspb.UInt32(5)
	cases := map[string][]byte{
		"group weight": mustMarshal(t, groupWeight),
		"same":         mk(base, "z1"),
		"weight":       mk(weight, "z1"),
		"inserted":     mk(inserted, "z1"),
		"locality":     mk(base, "z2"),
		"metadata":     mk(meta, "z1"),
		"fewer":        mk(base[:1], "z1"),
	}
	for name, raw := range cases {
		fresh, err := decodeCLAFast(raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		reused, err := decodeCLAFast(raw, func(string) *LoadAssignment { return &prev })
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fresh.Endpoints, reused.Endpoints) || !reflect.DeepEqual(fresh.spans, reused.spans) {
			t.Errorf("%s:\nfresh  %+v\nreused %+v", name, fresh.Endpoints, reused.Endpoints)
		}
		// Every string points into the new buffer (by address, not content),
		// so the previous buffer can be collected.
		lo := uintptr(unsafe.Pointer(unsafe.StringData(reused.raw)))
		hi := lo + uintptr(len(reused.raw))
		for _, e := range reused.Endpoints {
			for _, s := range []string{e.Address, e.TLSMode, e.Workload.Name, e.Workload.Cluster, e.Locality.Zone} {
				if p := uintptr(unsafe.Pointer(unsafe.StringData(s))); s != "" && (p < lo || p >= hi) {
					t.Errorf("%s: %q does not point into the new buffer", name, s)
				}
			}
		}
	}
}

// TestDecodeClusterLB: what decides how Envoy spreads requests over a
// cluster's endpoints — istiod's default and a DestinationRule's.
func TestDecodeClusterLB(t *testing.T) {
	istiodDefault := &cluster.Cluster{Name: helloEDS, LbPolicy: cluster.Cluster_LEAST_REQUEST,
		CommonLbConfig: &cluster.Cluster_CommonLbConfig{HealthyPanicThreshold: &typev3.Percent{Value: 0}}}
	if got := decodeCluster(istiodDefault); got.LBPolicy != "LEAST_REQUEST" || got.LocalityWeighted || got.PanicThreshold != 0 {
		t.Errorf("istiod default: %+v", got)
	}
	weighted := &cluster.Cluster{Name: helloEDS, CommonLbConfig: &cluster.Cluster_CommonLbConfig{
		LocalityConfigSpecifier: &cluster.Cluster_CommonLbConfig_LocalityWeightedLbConfig_{LocalityWeightedLbConfig: &cluster.Cluster_CommonLbConfig_LocalityWeightedLbConfig{}}}}
	if got := decodeCluster(weighted); got.LBPolicy != "ROUND_ROBIN" || !got.LocalityWeighted || got.PanicThreshold != 50 {
		t.Errorf("locality weighted, Envoy's defaults: %+v", got)
	}
	ext := &cluster.Cluster{Name: helloEDS, LbPolicy: cluster.Cluster_CLUSTER_PROVIDED, LoadBalancingPolicy: &cluster.LoadBalancingPolicy{
		Policies: []*cluster.LoadBalancingPolicy_Policy{{TypedExtensionConfig: &core.TypedExtensionConfig{Name: "x",
			TypedConfig: &anypb.Any{TypeUrl: "type.googleapis.com/envoy.extensions.load_balancing_policies.round_robin.v3.RoundRobin"}}}}}}
	if got := decodeCluster(ext); got.LBPolicy != "ROUND_ROBIN" {
		t.Errorf("load_balancing_policy: %+v", got)
	}
}

// TestDecodeSNIChains: a gateway's AUTO_PASSTHROUGH listener has one
// filter chain per SNI, each forwarding to the cluster of that name.
func TestDecodeSNIChains(t *testing.T) {
	sni := "outbound_.5000_._.helloworld.sample.svc.cluster.local"
	tp, _ := anypb.New(&tcpproxy.TcpProxy{StatPrefix: sni, ClusterSpecifier: &tcpproxy.TcpProxy_Cluster{Cluster: sni}})
	l := &listener.Listener{Name: "0.0.0.0_15443", FilterChains: []*listener.FilterChain{
		{FilterChainMatch: &listener.FilterChainMatch{ServerNames: []string{sni}, ApplicationProtocols: []string{"istio-peer-exchange", "istio"}},
			Filters: []*listener.Filter{{Name: "envoy.filters.network.tcp_proxy", ConfigType: &listener.Filter_TypedConfig{TypedConfig: tp}}}},
		{Filters: []*listener.Filter{}},
	}}
	a, _ := anypb.New(l)
	d, err := decodeResource(LDS, a, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := d.view.(Listener)
	if got.FilterChains != 2 || len(got.SNIChains) != 1 || got.SNIChains[0].ServerNames[0] != sni || got.SNIChains[0].Cluster != sni {
		t.Errorf("%+v", got)
	}
}
