package xdsclient

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/meshscope/meshscope/internal/leakcheck"
)

// TestMain doubles as the helper xDS server for the idle-stream benchmark:
// with XDSCLIENT_HELPER_SERVER=1 the test binary serves the lab snapshot to
// every node and prints its address, so the benchmark process counts only
// the client's goroutines and heap. Otherwise it runs the tests and fails
// if a goroutine outlives them (internal/leakcheck).
func TestMain(m *testing.M) {
	if os.Getenv("XDSCLIENT_HELPER_SERVER") == "1" {
		helperServer()
		return
	}
	leakcheck.Main(m)
}

// sameNode gives every node the same snapshot.
type sameNode struct{}

func (sameNode) ID(*core.Node) string { return "all" }

func helperServer() {
	tb := &testing.B{}
	srv := startServerHash(tb, "127.0.0.1:0", sameNode{})
	srv.set(tb, "all", "v1", lab(1))
	fmt.Println(srv.addr)
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes stdin
	srv.stop()
}

// BenchmarkEDSPush10k measures decode + diff + state update of one EDS
// response of 10,000 endpoints against a previous state of 10,000 with 1%
// weight changes (each op alternates between the two states).
func BenchmarkEDSPush10k(b *testing.B) {
	mk := func(shift uint32) *response {
		eps := make([]ep, 10000)
		for i := range eps {
			w := uint32(1)
			if i%100 == 0 {
				w += shift
			}
			eps[i] = ep{fmt.Sprintf("10.%d.%d.%d", i/65536, (i/256)%256, i%256), 5000, w, fmt.Sprintf("hw-%d;sample;helloworld;v1;cluster1", i)}
		}
		a, err := anypb.New(cla(helloEDS, eps...))
		if err != nil {
			b.Fatal(err)
		}
		return &response{t: EDS, version: fmt.Sprint(shift), nonce: fmt.Sprint(shift), resources: []*anypb.Any{a}, bytes: len(a.GetValue())}
	}
	r1, r2 := mk(0), mk(2)
	c, err := New(Options{Viewpoint: net1, Transport: TransportConfig{Address: "127.0.0.1:1"}, EDSNames: []string{helloEDS}})
	if err != nil {
		b.Fatal(err)
	}
	c.apply(r1)
	c.types[EDS].first = true
	b.SetBytes(int64(r1.bytes))
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	defer reportCPU(b, start)
	for i := 0; i < b.N; i++ {
		r := r2
		if i%2 == 1 {
			r = r1
		}
		ev, _, nack := c.apply(r)
		if nack != nil || len(ev.Endpoints) != 100 {
			b.Fatalf("nack %v, %d changes", nack, len(ev.Endpoints))
		}
	}
}

// BenchmarkIdleStreams opens 20 viewpoint streams against a server in
// another process, waits until each has its CDS and EDS, and reports the
// goroutines and heap each idle stream costs. shared: one gRPC connection
// for all streams (how meshscope runs several viewpoints on one istiod);
// own-conn: a connection per stream.
func BenchmarkIdleStreams(b *testing.B) {
	const n = 20
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "XDSCLIENT_HELPER_SERVER=1")
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	addr = strings.TrimSpace(addr)

	for _, shared := range []bool{true, false} {
		name := "shared-conn"
		if !shared {
			name = "own-conn"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				g, heap := measureIdle(b, addr, n, shared)
				b.ReportMetric(g, "goroutines/stream")
				b.ReportMetric(heap/1024, "KiB/stream")
			}
		})
	}
}

func heapNow() uint64 {
	var ms runtime.MemStats
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func measureIdle(b *testing.B, addr string, n int, shared bool) (goroutinesPer, heapPer float64) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var conn *grpc.ClientConn
	if shared {
		var err error
		if conn, err = Dial(TransportConfig{Address: addr}); err != nil {
			b.Fatal(err)
		}
		// Bring the shared connection up first: its own goroutines are a
		// per-control-plane cost, not a per-stream one.
		if err := waitReady(ctx, conn, 5*time.Second); err != nil {
			b.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	g0, h0 := runtime.NumGoroutine(), heapNow()
	clients := make([]*Client, n)
	done := make(chan struct{}, n)
	for i := range clients {
		vp := net1
		vp.IP = fmt.Sprintf("192.0.2.%d", 100+i)
		c, err := New(Options{Viewpoint: vp, Conn: conn, Transport: TransportConfig{Address: addr}})
		if err != nil {
			b.Fatal(err)
		}
		clients[i] = c
		go func() { _ = c.Run(ctx); done <- struct{}{} }()
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, c := range clients {
		for len(c.LoadAssignments()) < 2 || c.Status().State != StateConnected {
			if time.Now().After(deadline) {
				b.Fatalf("client %s not synced: %+v", c.viewpoint(), c.Status())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	time.Sleep(100 * time.Millisecond) // let ACKs and gRPC settle
	g1, h1 := runtime.NumGoroutine(), heapNow()
	cancel()
	for range clients {
		<-done
	}
	if conn != nil {
		conn.Close()
	}
	runtime.KeepAlive(clients)
	return float64(g1-g0) / float64(n), (float64(h1) - float64(h0)) / float64(n)
}
