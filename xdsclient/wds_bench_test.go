package xdsclient

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// wdsPush10k is a WDS push of 10,000 pod workloads of 100 services (and
// the services), as a full push (istiod's answer to a new stream) sends
// them; unhealthy flips the health of every workload, so each workload's
// bytes differ between the two pushes.
func wdsPush10k(tb testing.TB, version string, unhealthy bool) *discovery.DeltaDiscoveryResponse {
	r := &discovery.DeltaDiscoveryResponse{TypeUrl: AddressTypeURL, SystemVersionInfo: version, Nonce: version}
	add := func(a WDSAddress) {
		b, err := EncodeWDSAddress(a)
		if err != nil {
			tb.Fatal(err)
		}
		r.Resources = append(r.Resources, &discovery.Resource{Name: a.Name, Resource: &anypb.Any{TypeUrl: AddressTypeURL, Value: b}})
	}
	for s := 0; s < 100; s++ {
		add(wdsSvc("bench", fmt.Sprintf("svc-%d", s), WDSNetworkAddress{Network: "network1", Address: fmt.Sprintf("10.96.%d.%d", s/256, s%256)}))
	}
	for i := 0; i < 10000; i++ {
		svc := fmt.Sprintf("bench/svc-%d.bench.svc.cluster.local", i%100)
		a := wdsPod("cluster1", "network1", "bench", fmt.Sprintf("pod-%d", i), fmt.Sprintf("10.%d.%d.%d", 44+i/65536, (i/256)%256, i%256), svc)
		if unhealthy {
			a.Workload.Status = Unhealthy
		}
		add(a)
	}
	return r
}

// cpuTime is the CPU time the process has used (all threads, the garbage
// collector's included). On a machine shared with other builds, wall time
// per op mostly measures the wait for a core; CPU time per op does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds the CPU time per op since start as "cpu-ns/op".
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkWDSPush10k measures decode + diff + state update of one WDS push
// of 10,000 workloads: "changed" against a held state of the same 10,000,
// every one of which changed health (pushes alternate), "full" the first
// push on a stream into an empty client.
func BenchmarkWDSPush10k(b *testing.B) {
	r1, r2 := wdsPush10k(b, "v1", false), wdsPush10k(b, "v2", true)
	bytes := 0
	for _, res := range r1.Resources {
		bytes += len(res.GetResource().GetValue())
	}
	newClient := func() *WDSClient {
		c, err := NewWDS(WDSOptions{Transport: TransportConfig{Address: "127.0.0.1:1"}})
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	b.Run("changed", func(b *testing.B) {
		c := newClient()
		if _, err := c.apply(r1, true); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(bytes))
		b.ReportAllocs()
		b.ResetTimer()
		start := cpuTime()
		defer reportCPU(b, start)
		for i := 0; i < b.N; i++ {
			r := r2
			if i%2 == 1 {
				r = r1
			}
			ev, err := c.apply(r, false)
			if err != nil || len(ev.Changed) != 10000 {
				b.Fatalf("apply: %v, %d changed", err, len(ev.Changed))
			}
		}
	})
	b.Run("full", func(b *testing.B) {
		b.SetBytes(int64(bytes))
		b.ReportAllocs()
		clients := make([]*WDSClient, b.N)
		for i := range clients {
			clients[i] = newClient()
		}
		b.ResetTimer()
		start := cpuTime()
		defer reportCPU(b, start)
		for i := 0; i < b.N; i++ {
			c := clients[i]
			clients[i] = nil // its state is garbage after this push
			ev, err := c.apply(r1, true)
			if err != nil || len(ev.Added) != 10100 {
				b.Fatalf("apply: %v, %d added", err, len(ev.Added))
			}
		}
	})
}
