package main

import (
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/meshscope/meshscope/xdsclient"
)

// sample is what the soak measures every few seconds.
type sample struct {
	at time.Duration // since the start
	// heap is the live heap: HeapAlloc right after a forced GC.
	heap       uint64
	goroutines int
	open       xdsclient.Open // xDS streams and connections, as gRPC sees them
	fds        int            // open file descriptors (-1 where unknown)
	// What the mesh and the UI hold, to read the others by (not judged).
	endpoints int
	services  int
	// ui is how the UI loop answered in the interval.
	ui uiStats
}

// take measures now.
func take(start time.Time, mesh meshSize, ui uiStats) sample {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return sample{
		at:         time.Since(start),
		heap:       ms.HeapAlloc,
		goroutines: runtime.NumGoroutine(),
		open:       xdsclient.OpenNow(),
		fds:        openFDs(),
		endpoints:  mesh.endpoints,
		services:   mesh.services,
		ui:         ui,
	}
}

// openFDs counts this process's open file descriptors (Linux: /proc/self/fd).
func openFDs() int {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return -1
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return -1
	}
	return len(names) - 1 // the directory itself is open while listed
}

// meshSize is how big the mesh is in the latest snapshot.
type meshSize struct{ services, endpoints int }

// metric is one series the soak judges (or reports).
type metric struct {
	name, unit string
	floor      float64
	info       bool
	lows       bool // judged by the lowest sample of each stretch (see rule.block)
	value      func(s sample) float64
}

// metrics are the series of a run, in report order.
var metrics = []metric{
	{name: "heap", unit: "MiB", floor: 1, lows: true, value: func(s sample) float64 { return float64(s.heap) / (1 << 20) }},
	{name: "goroutines", floor: 5, value: func(s sample) float64 { return float64(s.goroutines) }},
	{name: "xds streams", floor: 1, value: func(s sample) float64 { return float64(s.open.Streams) }},
	{name: "grpc conns", floor: 1, value: func(s sample) float64 { return float64(s.open.Connections) }},
	{name: "fds", floor: 5, value: func(s sample) float64 { return float64(s.fds) }},
	{name: "mesh endpoints", info: true, value: func(s sample) float64 { return float64(s.endpoints) }},
}

// csvHeader and csv write samples for a later look (-samples).
const csvHeader = "seconds,heap_bytes,goroutines,xds_streams,grpc_conns,fds,services,endpoints,ui_messages,ui_probe_max_ms"

func (s sample) csv() string {
	return fmt.Sprintf("%.1f,%d,%d,%d,%d,%d,%d,%d,%d,%.1f", s.at.Seconds(), s.heap, s.goroutines, s.open.Streams, s.open.Connections,
		s.fds, s.services, s.endpoints, s.ui.messages, float64(s.ui.probeMax)/float64(time.Millisecond))
}
