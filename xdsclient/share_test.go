package xdsclient

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// edsResponse is an EDS response holding the given ClusterLoadAssignments,
// marshalled deterministically as istiod does (protoconv.MessageToAny), so
// the same content gives the same bytes.
func edsResponse(t testing.TB, nonce string, clas ...*endpoint.ClusterLoadAssignment) *response {
	t.Helper()
	r := &response{t: EDS, version: nonce, nonce: nonce}
	for _, c := range clas {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		r.resources = append(r.resources, &anypb.Any{TypeUrl: endpointTypeURL, Value: b})
		r.bytes += len(b)
	}
	return r
}

func newEDSClient(t testing.TB, vp Viewpoint, shared *Shared) *Client {
	t.Helper()
	c, err := New(Options{Viewpoint: vp, Transport: TransportConfig{Address: "127.0.0.1:1"}, EDSNames: []string{helloEDS, sleepEDS}, Shared: shared})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sameEndpoints reports whether two views share one decoded endpoint array.
func sameEndpoints(a, b LoadAssignment) bool {
	return len(a.Endpoints) > 0 && len(b.Endpoints) > 0 && &a.Endpoints[0] == &b.Endpoints[0]
}

// TestSharedDecodesOnce: two viewpoints sent the same bytes hold one
// decoded LoadAssignment; different bytes stay apart; each still sees its
// own diff; an entry nobody holds leaves the table.
func TestSharedDecodesOnce(t *testing.T) {
	shared := NewShared()
	net2 := Viewpoint{Cluster: "cluster2", Network: "network2", Namespace: "sample"}
	a, b := newEDSClient(t, net1, shared), newEDSClient(t, net2, shared)
	hello1 := cla(helloEDS, ep{"10.44.0.13", 5000, 1, "hw-v1;sample;helloworld;v1;cluster1"}, ep{"192.168.60.9", 15443, 1, ";;;;cluster2"})
	sleep := cla(sleepEDS, ep{"10.44.0.14", 80, 1, "sleep-abc;sample;sleep;latest;cluster1"})

	evA, _, nack := a.apply(edsResponse(t, "1", hello1, sleep))
	if nack != nil {
		t.Fatal(nack)
	}
	evB, _, nack := b.apply(edsResponse(t, "1", hello1, sleep))
	if nack != nil {
		t.Fatal(nack)
	}
	if len(evA.Endpoints) != 3 || len(evB.Endpoints) != 3 {
		t.Fatalf("each client sees its own first push: %d and %d endpoint changes, want 3 and 3", len(evA.Endpoints), len(evB.Endpoints))
	}
	la, _ := a.LoadAssignment(helloEDS)
	lb, _ := b.LoadAssignment(helloEDS)
	if !sameEndpoints(la, lb) || la.raw != lb.raw {
		t.Fatal("the same bytes were decoded twice")
	}
	if st := shared.Stats(); st.Hits != 2 || st.Misses != 2 || st.Live != 2 {
		t.Fatalf("stats after two identical pushes = %+v, want 2 hits, 2 misses, 2 live", st)
	}

	// b's hello changes (one more pod behind the gateway): its own view, a
	// weight change in its event, a's view untouched.
	hello3 := cla(helloEDS, ep{"10.44.0.13", 5000, 1, "hw-v1;sample;helloworld;v1;cluster1"}, ep{"192.168.60.9", 15443, 3, ";;;;cluster2"})
	ev, _, nack := b.apply(edsResponse(t, "2", hello3))
	if nack != nil {
		t.Fatal(nack)
	}
	if len(ev.Changed) != 1 || !hasEndpointChange(ev, EndpointWeight, "192.168.60.9", 15443, 3) {
		t.Fatalf("b's event = %+v", ev)
	}
	la, _ = a.LoadAssignment(helloEDS)
	lb, _ = b.LoadAssignment(helloEDS)
	if sameEndpoints(la, lb) || la.Endpoints[1].Weight != 1 || lb.Endpoints[1].Weight != 3 {
		t.Fatalf("different bytes share a view: a %+v, b %+v", la.Endpoints, lb.Endpoints)
	}
	if st := shared.Stats(); st.Live != 3 {
		t.Fatalf("live entries = %d, want 3 (hello twice, sleep)", st.Live)
	}

	// Once a lets go of the old hello too, its entry leaves the table.
	if _, _, nack := a.apply(edsResponse(t, "2", hello3)); nack != nil {
		t.Fatal(nack)
	}
	la, _ = a.LoadAssignment(helloEDS)
	if !sameEndpoints(la, lb) {
		t.Fatal("a's new hello is not b's")
	}
	waitFor(t, 5*time.Second, "the unused entry to leave the table", func() bool {
		runtime.GC()
		return shared.Stats().Live == 2
	})
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
}

// TestSharedForgetsDroppedClients: when every client holding entries is
// gone, the table is empty.
func TestSharedForgetsDroppedClients(t *testing.T) {
	shared := NewShared()
	func() {
		c := newEDSClient(t, net1, shared)
		if _, _, nack := c.apply(edsResponse(t, "1", cla(helloEDS, ep{"10.44.0.13", 5000, 1, "hw;sample;helloworld;v1;cluster1"}))); nack != nil {
			t.Fatal(nack)
		}
	}()
	waitFor(t, 5*time.Second, "the table to empty", func() bool {
		runtime.GC()
		shared.mu.Lock()
		n := len(shared.entries)
		shared.mu.Unlock()
		return n == 0
	})
}

// TestSharedNACKsBadBytes: bytes that do not decode are NACKed and never
// enter the table.
func TestSharedNACKsBadBytes(t *testing.T) {
	shared := NewShared()
	c := newEDSClient(t, net1, shared)
	r := &response{t: EDS, nonce: "1", resources: []*anypb.Any{{TypeUrl: endpointTypeURL, Value: []byte{0xff, 0xff, 0xff}}}}
	if _, _, nack := c.apply(r); nack == nil {
		t.Fatal("garbage was accepted")
	}
	if st := shared.Stats(); st.Live != 0 || st.Misses != 0 {
		t.Fatalf("stats after a NACK = %+v", st)
	}
}

// BenchmarkSharedPush: the second viewpoint's copy of a 10,000-endpoint
// push, decoded (alone) or taken from the table (shared).
func BenchmarkSharedPush(b *testing.B) {
	eps := make([]ep, 10000)
	for i := range eps {
		eps[i] = ep{addr: "10.50." + itoa(i/250) + "." + itoa(i%250+1), port: 8080, weight: 1, workload: "svc-" + itoa(i) + ";bench;svc;v1;cluster1"}
	}
	r := edsResponse(b, "1", cla(helloEDS, eps...))
	for _, mode := range []string{"alone", "shared"} {
		b.Run(mode, func(b *testing.B) {
			var shared *Shared
			if mode == "shared" {
				shared = NewShared()
				first := newEDSClient(b, net1, shared)
				first.apply(r)
				defer runtime.KeepAlive(first)
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				c := newEDSClient(b, net1, shared)
				if _, _, nack := c.apply(r); nack != nil {
					b.Fatal(nack)
				}
			}
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
