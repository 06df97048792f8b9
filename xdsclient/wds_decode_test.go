package xdsclient

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// TestWDSEncodeDecodeRoundTrip: every field of the views survives encoding
// to the wire and decoding back.
func TestWDSEncodeDecodeRoundTrip(t *testing.T) {
	w := &WDSWorkload{
		UID: "cluster1//Pod/sample/hello", Name: "hello", Namespace: "sample",
		Addresses: []string{"10.44.0.13", "fd00::13"}, Network: "network1", TunnelProtocol: TunnelHBONE,
		TrustDomain: "td.local", ServiceAccount: "hello", Node: "node1",
		Waypoint:       &WDSGateway{Namespace: "sample", Hostname: "waypoint.sample.svc.cluster.local", HBONEPort: 15008},
		NetworkGateway: &WDSGateway{Network: "network1", Address: "192.168.60.113", HBONEPort: 15008},
		CanonicalName:  "helloworld", CanonicalRevision: "v1", WorkloadType: WorkloadPod, WorkloadName: "helloworld-v1",
		NativeTunnel:      true,
		ApplicationTunnel: "PROXY:15088",
		Services: []WDSServicePorts{
			{Service: "sample/a.sample.svc.cluster.local", Ports: []WDSPort{{ServicePort: 80, TargetPort: 8080, AppProtocol: "HTTP2"}}},
			{Service: "sample/b.sample.svc.cluster.local", Ports: []WDSPort{{ServicePort: 5000, TargetPort: 5000}}},
		},
		AuthorizationPolicies: []string{"istio-system/allow"},
		Status:                Unhealthy, ClusterID: "cluster1",
		Locality:    &Locality{Region: "r", Zone: "z", SubZone: "s"},
		NetworkMode: networkHost, Extensions: []string{"ext"},
		Capacity: 3, CapacitySet: true,
	}
	s := &WDSService{
		Name: "helloworld", Namespace: "sample", Hostname: "helloworld.sample.svc.cluster.local",
		Addresses:       []WDSNetworkAddress{{Network: "network1", Address: "10.96.0.10"}, {Network: "network2", Address: "10.97.0.0/16"}},
		Ports:           []WDSPort{{ServicePort: 5000, TargetPort: 5000, AppProtocol: "HTTP11"}},
		SubjectAltNames: []string{"spiffe://cluster.local/ns/sample/sa/a", "spiffe://cluster.local/ns/sample/sa/b"},
		Waypoint:        &WDSGateway{Network: "network1", Address: "10.96.0.99", HBONEPort: 15008},
		IPFamilies:      "DUAL", Canonical: true, IngressUseWaypoint: true, Visibility: "NAMESPACE",
		Extensions: []string{"x"},
	}
	for _, a := range []WDSAddress{{Name: w.UID, Workload: w}, {Name: s.key(), Service: s}} {
		b, err := EncodeWDSAddress(a)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeWDSAddress(a.Name, b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, a) {
			t.Errorf("round trip of %s:\n got %+v\nwant %+v", a.Name, got, a)
		}
		if d := diffWDSAddress(got, a); d != nil {
			t.Errorf("DiffWDSAddress of equal %s: %v", a.Name, d)
		}
	}
}

// TestWDSDecodeDefaults: an empty workload decodes with the proto defaults
// (HEALTHY, tunnel NONE, capacity 1 when unset).
func TestWDSDecodeDefaults(t *testing.T) {
	b := protowire.AppendTag(nil, fAddressWorkload, protowire.BytesType)
	b = protowire.AppendBytes(b, appendString(nil, fWlUID, "x"))
	a, err := DecodeWDSAddress("x", b)
	if err != nil {
		t.Fatal(err)
	}
	w := a.Workload
	if w.Status != Healthy || w.TunnelProtocol != TunnelNone || w.EffectiveCapacity() != 1 || w.CapacitySet {
		t.Errorf("defaults: %+v", w)
	}
}

// TestWDSDecodeUnknownFields: fields this schema does not know (a newer
// istiod) are skipped, of every wire type.
func TestWDSDecodeUnknownFields(t *testing.T) {
	wl := appendString(nil, fWlUID, "u")
	wl = protowire.AppendTag(wl, 99, protowire.VarintType)
	wl = protowire.AppendVarint(wl, 7)
	wl = protowire.AppendTag(wl, 98, protowire.Fixed32Type)
	wl = protowire.AppendFixed32(wl, 1)
	wl = protowire.AppendTag(wl, 97, protowire.Fixed64Type)
	wl = protowire.AppendFixed64(wl, 1)
	wl = appendString(wl, 96, "future")
	wl = protowire.AppendTag(wl, fWlTunnelProtocol, protowire.VarintType)
	wl = protowire.AppendVarint(wl, 9) // an enum value newer than the schema
	b := appendMessage(nil, fAddressWorkload, wl)
	a, err := DecodeWDSAddress("u", b)
	if err != nil {
		t.Fatal(err)
	}
	if a.Workload.UID != "u" || a.Workload.TunnelProtocol.String() != "9" {
		t.Errorf("got %+v", a.Workload)
	}
}

// TestWDSDecodeErrors: malformed bytes are errors that name the resource
// and what is wrong, never a panic or a half-filled view passed as good.
func TestWDSDecodeErrors(t *testing.T) {
	good, _ := EncodeWDSAddress(wdsPod("cluster1", "network1", "sample", "p", "10.0.0.1", "sample/s"))
	badIP := appendMessage(nil, fAddressWorkload, appendMessage(nil, fWlAddresses, []byte{1, 2, 3}))
	wrongType := appendMessage(nil, fAddressWorkload, appendVarint(nil, fWlUID, 5))
	for name, tc := range map[string]struct {
		b    []byte
		want string
	}{
		"truncated":     {good[:len(good)-3], "address x"},
		"empty":         {nil, "neither a workload nor a service"},
		"bad ip":        {badIP, "not an IP"},
		"wrong type":    {wrongType, "wrong wire type"},
		"garbage":       {[]byte{0xff, 0xff, 0xff}, "address x"},
		"bad gateway":   {appendMessage(nil, fAddressWorkload, appendMessage(nil, fWlNetworkGateway, appendMessage(nil, 2, appendMessage(nil, 2, []byte{9})))), "not an IP"},
		"bad cidr":      {appendMessage(nil, fAddressService, appendMessage(nil, fSvcAddresses, append(appendMessage(nil, 2, []byte{10, 0, 0, 0}), 0x18, 99))), "10.0.0.0/99"},
		"bad map entry": {appendMessage(nil, fAddressWorkload, appendMessage(nil, fWlServices, appendVarint(nil, 2, 1))), "wrong wire type"},
	} {
		_, err := DecodeWDSAddress("x", tc.b)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want it to mention %q", name, err, tc.want)
		}
	}
}

func TestWDSGatewayString(t *testing.T) {
	for _, tc := range []struct {
		g    *WDSGateway
		want string
	}{
		{nil, ""},
		{&WDSGateway{Address: "1.2.3.4", HBONEPort: 15008}, "1.2.3.4:15008"},
		{&WDSGateway{Address: "fd00::1", HBONEPort: 15008}, "[fd00::1]:15008"},
		{&WDSGateway{Namespace: "istio-system", Hostname: "gw.example.com", HBONEPort: 15008}, "istio-system/gw.example.com:15008"},
	} {
		if got := tc.g.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.g, got, tc.want)
		}
	}
}

func TestDiffWDSAddress(t *testing.T) {
	a := wdsSplitHorizon("network2", "istio-system/istio-eastwest", "192.168.60.9", "sample/helloworld.sample.svc.cluster.local", 1)
	b := wdsSplitHorizon("network2", "istio-system/istio-eastwest", "192.168.60.9", "sample/helloworld.sample.svc.cluster.local", 3)
	b.Workload.NetworkGateway = &WDSGateway{Network: "network2", Address: "192.168.60.10", HBONEPort: 15008}
	if got := diffWDSAddress(a, b); !reflect.DeepEqual(got, []string{"networkGateway", "capacity"}) {
		t.Errorf("diff: %v", got)
	}
	if got := diffWDSAddress(a, wdsSvc("sample", "helloworld")); !reflect.DeepEqual(got, []string{"kind"}) {
		t.Errorf("workload vs service: %v", got)
	}
}

// TestWDSDecodeRealIstiod decodes pushes captured from the lab's real
// istiods (ambient multi-network, `meshscope-lab up --ambient`): the first
// response each sent a ztunnel (test/e2e/ambient TestCaptureWDSTestdata
// rewrites them). Every resource decodes, and the facts the
// prediction relies on come out as istiod wrote them.
func TestWDSDecodeRealIstiod(t *testing.T) {
	for _, tc := range []struct {
		file, splitHorizon, gateway, remoteNet string
		capacity                               uint32
		localPods                              []string
	}{
		{"wds-istiod-cluster1.pb", "network2/SplitHorizonWorkload/istio-system/istio-eastwestgateway/192.168.60.10/ambient/helloworld.ambient.svc.cluster.local",
			"192.168.60.10:15008", "network2", 2, []string{"cluster1//Pod/ambient/helloworld-v1-5d9f8b7c6-amb1a"}},
		{"wds-istiod-cluster2.pb", "network1/SplitHorizonWorkload/istio-system/istio-eastwestgateway/192.168.60.114/ambient/helloworld.ambient.svc.cluster.local",
			"192.168.60.114:15008", "network1", 1, []string{"cluster2//Pod/ambient/helloworld-v2-7f6d5c4b3-amb2a", "cluster2//Pod/ambient/helloworld-v2-7f6d5c4b3-amb2b"}},
	} {
		b, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		var r discovery.DeltaDiscoveryResponse
		if err := proto.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		c, err := NewWDS(WDSOptions{Transport: TransportConfig{Address: "127.0.0.1:1"}})
		if err != nil {
			t.Fatal(err)
		}
		ev, err := c.apply(&r, true)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if len(ev.Added) != len(r.GetResources()) || c.len() != len(r.GetResources()) {
			t.Errorf("%s: %d added of %d", tc.file, len(ev.Added), len(r.GetResources()))
		}
		// Every resource re-encodes to the same bytes: nothing was lost.
		for _, res := range r.GetResources() {
			a, _ := c.Address(res.GetName())
			enc, err := EncodeWDSAddress(a)
			if err != nil || !bytes.Equal(enc, res.GetResource().GetValue()) {
				t.Errorf("%s: %s does not re-encode to istiod's bytes (%v)", tc.file, res.GetName(), err)
			}
		}
		v := c.ServiceView("ambient/helloworld.ambient.svc.cluster.local")
		var uids []string
		for _, w := range v.Workloads {
			uids = append(uids, w.UID)
			if w.SplitHorizon() {
				if w.UID != tc.splitHorizon || w.NetworkGateway.String() != tc.gateway || w.Capacity != tc.capacity ||
					w.Network != tc.remoteNet || len(w.Addresses) != 0 || w.TunnelProtocol != TunnelHBONE {
					t.Errorf("%s: split-horizon workload %+v", tc.file, w)
				}
			}
		}
		if want := append(append([]string(nil), tc.localPods...), tc.splitHorizon); !reflect.DeepEqual(uids, want) {
			t.Errorf("%s: helloworld workloads %v, want %v", tc.file, uids, want)
		}
		if v.Service == nil || len(v.Service.Addresses) != 2 || len(v.Service.SubjectAltNames) != 1 {
			t.Errorf("%s: global service %+v", tc.file, v.Service)
		}
		// sleep is not global: only the local pod, the local VIP.
		sv := c.ServiceView("ambient/sleep.ambient.svc.cluster.local")
		if len(sv.Workloads) != 1 || sv.Service == nil || len(sv.Service.Addresses) != 1 {
			t.Errorf("%s: non-global service %+v", tc.file, sv)
		}
	}
}
