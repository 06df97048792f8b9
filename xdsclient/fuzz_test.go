package xdsclient

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// FuzzDecodeEDS holds the hand-written EDS decoder to the generated protos
// on any bytes, with three oracles:
//
//   - when decodeCLAFast accepts a resource, proto.Unmarshal accepts it too
//     and the generic path (decodeLoadAssignment) gives the same cluster and
//     the same endpoints: the fast path may hand a resource over
//     (errFastPath) but never decide differently;
//   - decodeResource, the fast path with its fallback, gives what
//     proto.Unmarshal + the generic path give, or both are errors (what
//     meshscope ACKs and NACKs is what the protos accept);
//   - decoding against a previous state (reusing unchanged endpoints)
//     gives exactly what a fresh decode gives.
//
// The seed corpus in testdata/fuzz/FuzzDecodeEDS holds real istiod pushes
// (captured from the lab by test/e2e TestCaptureFuzzSeeds), each paired
// with another push of the same cluster as the previous state.
func FuzzDecodeEDS(f *testing.F) {
	for _, pair := range edsSeeds(f) {
		f.Add(pair[0], pair[1])
	}
	f.Fuzz(checkEDSDecode)
}

// checkEDSDecode is FuzzDecodeEDS's oracle, shared with the regression
// tests of what the fuzzer (and reading proto's rules) found.
func checkEDSDecode(t *testing.T, prevRaw, raw []byte) {
	ref, refErr := genericEDS(raw)

	fast, fastErr := decodeCLAFast(raw, nil)
	if fastErr == nil {
		var cla endpoint.ClusterLoadAssignment
		if err := proto.Unmarshal(raw, &cla); err != nil {
			t.Fatalf("fast decoder accepted what proto.Unmarshal rejects (%v):\nfast %+v", err, fast.Endpoints)
		}
		slow, err := decodeLoadAssignment(&cla)
		if err != nil {
			t.Fatalf("fast decoder accepted what the generic path rejects (%v):\nfast %+v", err, fast.Endpoints)
		}
		if fast.Cluster != slow.Cluster || !reflect.DeepEqual(fast.Endpoints, slow.Endpoints) {
			t.Fatalf("fast and generic decoders differ:\nfast    %q %+v\ngeneric %q %+v", fast.Cluster, fast.Endpoints, slow.Cluster, slow.Endpoints)
		}
	}

	got, err := decodeResource(EDS, &anypb.Any{TypeUrl: endpointTypeURL, Value: raw}, nil)
	switch {
	case (err == nil) != (refErr == nil):
		t.Fatalf("decodeResource error %v, proto + generic path error %v", err, refErr)
	case err == nil:
		la := got.view.(LoadAssignment)
		if got.name != ref.Cluster || la.Cluster != ref.Cluster || !reflect.DeepEqual(la.Endpoints, ref.Endpoints) {
			t.Fatalf("decodeResource and proto + generic path differ:\ngot  %q %+v\nwant %q %+v", got.name, la.Endpoints, ref.Cluster, ref.Endpoints)
		}
	}

	if fastErr != nil {
		return
	}
	prev, err := decodeCLAFast(prevRaw, nil)
	if err != nil {
		return
	}
	reused, err := decodeCLAFast(raw, func(string) *LoadAssignment { return &prev })
	if err != nil {
		t.Fatalf("decoding against a previous state failed (%v) where a fresh decode succeeds", err)
	}
	if !reflect.DeepEqual(fast.Endpoints, reused.Endpoints) || !reflect.DeepEqual(fast.spans, reused.spans) {
		t.Fatalf("reuse differs from a fresh decode:\nfresh  %+v\nreused %+v", fast.Endpoints, reused.Endpoints)
	}
}

// genericEDS is what decodeResource must agree with: proto.Unmarshal, a
// cluster name, then the generic path.
func genericEDS(raw []byte) (LoadAssignment, error) {
	var cla endpoint.ClusterLoadAssignment
	if err := proto.Unmarshal(raw, &cla); err != nil {
		return LoadAssignment{}, err
	}
	if cla.GetClusterName() == "" {
		return LoadAssignment{}, errFastPath
	}
	return decodeLoadAssignment(&cla)
}

// edsSeeds are the in-process fixtures of the decoder tests as (previous,
// current) pairs: the shapes istiod sends, the shapes it might, and a few
// it must not.
func edsSeeds(tb testing.TB) [][2][]byte {
	lab := cla(helloEDS,
		ep{"10.44.0.13", 5000, 1, "helloworld-v1-abc;sample;helloworld;v1;cluster1"},
		ep{"192.168.60.9", 15443, 3, ";;;;cluster2"})
	labNet2 := cla(helloEDS,
		ep{"10.144.0.15", 5000, 1, "helloworld-v2-xyz;sample;helloworld;v2;cluster2"},
		ep{"192.168.60.113", 15443, 1, ";;;;cluster1"})
	twoLoc := proto.Clone(lab).(*endpoint.ClusterLoadAssignment)
	twoLoc.Endpoints = append(twoLoc.Endpoints, &endpoint.LocalityLbEndpoints{
		Locality: &core.Locality{Region: "r2", Zone: "z2", SubZone: "s2"}, Priority: 1,
		LoadBalancingWeight: wrapperspb.UInt32(7),
		LbEndpoints:         labNet2.Endpoints[0].LbEndpoints,
	})
	list := proto.Clone(lab).(*endpoint.ClusterLoadAssignment)
	list.Endpoints[0].LbConfig = &endpoint.LocalityLbEndpoints_LoadBalancerEndpoints{
		//lint:ignore SA1019 the deprecated form must still decode
		LoadBalancerEndpoints: &endpoint.LocalityLbEndpoints_LbEndpointList{LbEndpoints: list.Endpoints[0].LbEndpoints}}
	list.Endpoints[0].LbEndpoints = nil
	noMeta := proto.Clone(lab).(*endpoint.ClusterLoadAssignment)
	noMeta.Endpoints[0].LbEndpoints[0].Metadata = nil
	noMeta.Endpoints[0].LbEndpoints[1].LoadBalancingWeight = nil
	noMeta.Endpoints[0].LbEndpoints[1].HealthStatus = core.HealthStatus_DRAINING
	dual := proto.Clone(lab).(*endpoint.ClusterLoadAssignment)
	dual.Endpoints[0].LbEndpoints[0].GetEndpoint().AdditionalAddresses = []*endpoint.Endpoint_AdditionalAddress{{
		Address: &core.Address{Address: &core.Address_SocketAddress{SocketAddress: &core.SocketAddress{
			Address: "fd00::13", PortSpecifier: &core.SocketAddress_PortValue{PortValue: 5000}}}}}}
	extraMeta := proto.Clone(lab).(*endpoint.ClusterLoadAssignment)
	extraMeta.Endpoints[0].LbEndpoints[0].Metadata.FilterMetadata["istio"].Fields["alpn_override"] = structpb.NewStringValue("false")
	extraMeta.Endpoints[0].LbEndpoints[0].Metadata.FilterMetadata["envoy.lb"] = &structpb.Struct{Fields: map[string]*structpb.Value{"canary": structpb.NewBoolValue(true)}}
	pipe := &endpoint.ClusterLoadAssignment{ClusterName: "c", Endpoints: []*endpoint.LocalityLbEndpoints{{LbEndpoints: []*endpoint.LbEndpoint{{
		HostIdentifier: &endpoint.LbEndpoint_Endpoint{Endpoint: &endpoint.Endpoint{Address: &core.Address{Address: &core.Address_Pipe{Pipe: &core.Pipe{Path: "/x"}}}}}}}}}}
	internal := &endpoint.ClusterLoadAssignment{ClusterName: "c", Endpoints: []*endpoint.LocalityLbEndpoints{{LbEndpoints: []*endpoint.LbEndpoint{{
		HostIdentifier: &endpoint.LbEndpoint_Endpoint{Endpoint: &endpoint.Endpoint{Address: &core.Address{Address: &core.Address_EnvoyInternalAddress{
			EnvoyInternalAddress: &core.EnvoyInternalAddress{AddressNameSpecifier: &core.EnvoyInternalAddress_ServerListenerName{ServerListenerName: "connect_originate"}, EndpointId: "10.44.0.13:5000"}}}}}}}}}}

	m := func(msg proto.Message) []byte { return mustMarshalB(tb, msg) }
	return [][2][]byte{
		{m(lab), m(lab)},
		{m(lab), m(labNet2)},
		{m(labNet2), m(twoLoc)},
		{m(lab), m(list)},
		{m(lab), m(noMeta)},
		{m(lab), m(dual)},
		{m(lab), m(extraMeta)},
		{m(lab), m(&endpoint.ClusterLoadAssignment{ClusterName: helloEDS})},
		{m(lab), m(&endpoint.ClusterLoadAssignment{})},
		{m(lab), m(pipe)},
		{m(lab), m(internal)},
		{m(lab), {0x12, 0xff}},
		{nil, nil},
	}
}

// Wire-format builders for resources no marshaller writes.
func tag(b []byte, num protowire.Number, typ protowire.Type) []byte {
	return protowire.AppendTag(b, num, typ)
}

func msg(num protowire.Number, parts ...[]byte) []byte {
	var body []byte
	for _, p := range parts {
		body = append(body, p...)
	}
	return protowire.AppendBytes(tag(nil, num, protowire.BytesType), body)
}

func str(num protowire.Number, s string) []byte {
	return protowire.AppendString(tag(nil, num, protowire.BytesType), s)
}

func varint(num protowire.Number, x uint64) []byte {
	return protowire.AppendVarint(tag(nil, num, protowire.VarintType), x)
}

// TestFastEDSMatchesProtoOnOddEncodings: resources no marshaller writes
// but a byte stream can hold, on each of which the fast decoder once
// decided differently from proto.Unmarshal (accepting what it rejects,
// or reading other endpoints). Each must now agree or hand over.
func TestFastEDSMatchesProtoOnOddEncodings(t *testing.T) {
	sock := func(parts ...[]byte) []byte { return msg(1, parts...) } // Address.socket_address
	lbEP := func(addr []byte, rest ...[]byte) []byte {
		return msg(2, append([][]byte{msg(1, msg(1, addr))}, rest...)...) // LbEndpoint{endpoint{address}}
	}
	ok := sock(str(2, "10.44.0.13"), varint(3, 5000))
	entry := func(k string, v []byte) []byte { return msg(1, str(1, k), msg(2, v)) } // a map entry as field 1
	strVal := func(s string) []byte { return str(3, s) }
	one := func(lbs ...[]byte) []byte { // the cluster, one locality r1
		return append(str(1, helloEDS), msg(2, append([][]byte{msg(1, str(1, "r1"))}, lbs...)...)...)
	}
	cases := map[string][]byte{
		// found by FuzzDecodeEDS: a field the decoder skips (policy) that does not parse
		"garbage in a skipped field":  append(one(lbEP(ok)), str(4, "0000000000000010000")...),
		"invalid UTF-8 address":       one(lbEP(sock(str(2, "10.44.0.\xff"), varint(3, 5000)))),
		"invalid UTF-8 cluster name":  append(str(1, "bad\xfe"), one(lbEP(ok))...),
		"invalid UTF-8 locality":      append(str(1, helloEDS), msg(2, msg(1, str(2, "z\xc3")), lbEP(ok))...),
		"invalid UTF-8 metadata key":  one(lbEP(ok, msg(3, entry("ist\xffio", nil)))),
		"invalid UTF-8 skipped key":   one(lbEP(ok, msg(3, entry("istio", entry("work\xff", strVal("x")))))),
		"field number too large":      append(one(lbEP(ok)), varint(protowire.MaxValidNumber+1, 1)...),
		"socket then pipe address":    one(msg(2, msg(1, msg(1, ok, msg(2, str(1, "/pipe")))))),
		"port then named port":        one(lbEP(sock(str(2, "10.44.0.13"), varint(3, 5000), str(4, "http")))),
		"endpoint then endpoint_name": one(lbEP(ok, str(5, "named"))),
		"address in two parts":        one(msg(2, msg(1, msg(1, sock(str(2, "10.44.0.13"))), msg(1, sock(varint(3, 5000)))))),
		"endpoint in two parts":       one(msg(2, msg(1, msg(1, sock(str(2, "10.44.0.13")))), msg(1, msg(1, sock(varint(3, 5000)))))),
		"weight then empty weight":    one(lbEP(ok, msg(4, varint(1, 7)), msg(4))),
		"lb_endpoints and a list":     one(lbEP(ok), msg(7, msg(1, msg(1, msg(1, ok))))),
		"list then LEDS":              one(msg(7, msg(1, msg(1, msg(1, ok)))), msg(8, str(1, "leds"))),
		"istio twice, second empty":   one(lbEP(ok, msg(3, entry("istio", entry("workload", strVal("p;ns;w;v;c1"))), entry("istio", nil)))),
		"tlsMode twice":               one(lbEP(ok, msg(3, entry("envoy.transport_socket_match", entry("tlsMode", strVal("istio"))), entry("envoy.transport_socket_match", entry("other", strVal("x")))))),
		"string then number value":    one(lbEP(ok, msg(3, entry("istio", entry("workload", append(strVal("p;ns;w;v;c1"), protowire.AppendFixed64(tag(nil, 2, protowire.Fixed64Type), 0)...)))))),
		"map value twice":             one(lbEP(ok, msg(3, msg(1, str(1, "istio"), msg(2, entry("workload", strVal("a;b;c;d;e"))), msg(2))))),
		"map key of the wrong type":   one(lbEP(ok, msg(3, msg(1, str(1, "istio"), varint(1, 3), msg(2, entry("workload", strVal("a;b;c;d;e"))))))),
		"bad struct under other key":  one(lbEP(ok, msg(3, entry("envoy.lb", str(1, "\xff"))))),
		"bad value under other field": one(lbEP(ok, msg(3, entry("istio", entry("alpn_override", str(3, "\xff")))))),
		"unknown fields everywhere":   one(lbEP(ok, varint(99, 1), msg(98, str(1, "x")), msg(3, varint(97, 1)))),
		"wrong wire types":            one(lbEP(sock(varint(2, 1), str(3, "x"), str(2, "10.44.0.13")), str(2, "x"), varint(4, 1))),
		"locality weight":             append(str(1, helloEDS), msg(2, msg(1, str(1, "r1")), msg(3, varint(1, 4)), lbEP(ok))...),
		"bad locality metadata":       append(str(1, helloEDS), msg(2, msg(1, str(1, "r1")), msg(9, entry("\xff", nil)), lbEP(ok))...),
		"bad endpoint hostname":       one(msg(2, msg(1, msg(1, ok), str(3, "h\xff")))),
	}
	// Valid resources the fast path must keep for itself, not hand over.
	fastKeeps := map[string]bool{"unknown fields everywhere": true, "wrong wire types": true,
		"locality weight": true, "address in two parts": true, "endpoint in two parts": true,
		"weight then empty weight": true, "istio twice, second empty": true, "tlsMode twice": true,
		"map key of the wrong type": true}
	lab := mustMarshal(t, labCLA())
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := decodeCLAFast(raw, nil); fastKeeps[name] && err != nil {
				t.Errorf("fast decoder handed over a valid resource: %v", err)
			}
			checkEDSDecode(t, lab, raw)
			checkEDSDecode(t, raw, raw)
		})
	}
}

// TestFastEDSKeepsIstiodShapes: what istiod sends stays on the fast path:
// the real pushes captured from the lab's istiods (the istiod-* seeds of
// FuzzDecodeEDS, written by test/e2e TestCaptureFuzzSeeds) and the shapes
// edsSeeds adds next to them (two localities with a weight, dual-stack
// additional addresses, more metadata).
func TestFastEDSKeepsIstiodShapes(t *testing.T) {
	for i, pair := range edsSeeds(t)[:8] {
		if _, err := decodeCLAFast(pair[1], nil); err != nil {
			t.Errorf("seed %d handed over: %v", i, err)
		}
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzDecodeEDS", "istiod-*"))
	if len(files) < 30 {
		t.Fatalf("%d captured istiod seeds; run test/e2e TestCaptureFuzzSeeds with MESHSCOPE_UPDATE_FUZZ_SEEDS=1", len(files))
	}
	endpoints := 0
	for _, f := range files {
		for _, raw := range readCorpusFile(t, f) {
			la, err := decodeCLAFast(raw, nil)
			if err != nil {
				t.Errorf("%s: istiod's push handed over: %v", filepath.Base(f), err)
			}
			endpoints += len(la.Endpoints)
		}
	}
	if endpoints == 0 {
		t.Error("no endpoints in the captured pushes")
	}
}

// readCorpusFile reads the []byte values of a Go fuzz corpus file.
func readCorpusFile(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) == 0 || lines[0] != "go test fuzz v1" {
		t.Fatalf("%s: not a fuzz corpus file", path)
	}
	var out [][]byte
	for _, l := range lines[1:] {
		q, ok := strings.CutPrefix(l, "[]byte(")
		if !ok || !strings.HasSuffix(q, ")") {
			t.Fatalf("%s: not a []byte value: %.40s", path, l)
		}
		v, err := strconv.Unquote(strings.TrimSuffix(q, ")"))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, []byte(v))
	}
	return out
}

// labCLA is the lab's helloworld as network1 gets it.
func labCLA() *endpoint.ClusterLoadAssignment {
	return cla(helloEDS, ep{"10.44.0.13", 5000, 1, "helloworld-v1-abc;sample;helloworld;v1;cluster1"}, ep{"192.168.60.9", 15443, 3, ";;;;cluster2"})
}
