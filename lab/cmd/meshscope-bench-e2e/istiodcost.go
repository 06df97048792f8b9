package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/meshscope/meshscope/lab"
)

// istiodSample is what one istiod's monitoring port says at one moment.
type istiodSample struct {
	at   time.Time
	cpu  float64 // process_cpu_seconds_total
	heap float64 // go_memstats_heap_alloc_bytes (after a forced GC when asked)
	// pushes counts pilot_xds_pushes by type (cds, eds, lds, rds; the
	// *_senderr and *_builderr types are errors).
	pushes  map[string]float64
	clients float64 // pilot_xds: xDS streams connected
	// pushTime sums pilot_xds_push_time (seconds istiod spent building
	// and sending a push) over EDS pushes; pushTimeN counts them.
	pushTime, pushTimeN float64
	// edsBytes sums pilot_xds_config_size_bytes over EDS pushes: the work
	// a push is, whoever it goes to.
	edsBytes float64
}

// metric is one sample line of Prometheus text: name, labels, value.
type metric struct {
	name   string
	labels map[string]string
	value  float64
}

// parseMetrics reads the Prometheus text exposition format (enough of it
// for istiod's /metrics: no timestamps, no escaped quotes in values we read).
func parseMetrics(r io.Reader) ([]metric, error) {
	var out []metric
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		m := metric{labels: map[string]string{}}
		rest := line
		if i := strings.IndexAny(rest, "{ "); i >= 0 && rest[i] == '{' {
			m.name = rest[:i]
			j := strings.LastIndexByte(rest, '}')
			if j < i {
				return nil, fmt.Errorf("bad metric line %q", line)
			}
			for _, kv := range splitLabels(rest[i+1 : j]) {
				k, v, _ := strings.Cut(kv, "=")
				m.labels[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"`)
			}
			rest = strings.TrimSpace(rest[j+1:])
		} else if i >= 0 {
			m.name, rest = rest[:i], strings.TrimSpace(rest[i+1:])
		}
		if f := strings.Fields(rest); len(f) > 0 {
			v, err := strconv.ParseFloat(f[0], 64)
			if err != nil {
				continue // NaN spelled otherwise, or a format we do not read
			}
			m.value = v
			out = append(out, m)
		}
	}
	return out, sc.Err()
}

// splitLabels splits k="v",k2="v2" at the commas outside quotes.
func splitLabels(s string) []string {
	var out []string
	inQ, start := false, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			if i == 0 || s[i-1] != '\\' {
				inQ = !inQ
			}
		case ',':
			if !inQ {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

var httpClient = &http.Client{Timeout: 10 * time.Second}

// forceGC asks istiod to collect its garbage (ControlZ's memory topic), so
// two heap readings compare live data, not where a GC cycle happened to be.
func forceGC(ctx context.Context, is *lab.Istiod) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, fmt.Sprintf("http://127.0.0.1:%d/memj/forcecollection", is.Ctrlz), nil)
	if err != nil {
		return err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return fmt.Errorf("istiod %s: forced GC: %w", is.Cluster, err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("istiod %s: forced GC: %s", is.Cluster, resp.Status)
	}
	return nil
}

// scrape reads one istiod's /metrics; with gc it forces a collection first.
func scrape(ctx context.Context, is *lab.Istiod, gc bool) (istiodSample, error) {
	s := istiodSample{pushes: map[string]float64{}}
	if gc {
		if err := forceGC(ctx, is); err != nil {
			return s, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/metrics", is.Monitoring), nil)
	if err != nil {
		return s, err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return s, fmt.Errorf("istiod %s: /metrics: %w", is.Cluster, err)
	}
	defer resp.Body.Close()
	ms, err := parseMetrics(resp.Body)
	if err != nil {
		return s, fmt.Errorf("istiod %s: /metrics: %w", is.Cluster, err)
	}
	s.at = time.Now()
	var seen [3]bool
	for _, m := range ms {
		switch m.name {
		case "process_cpu_seconds_total":
			s.cpu, seen[0] = m.value, true
		case "go_memstats_heap_alloc_bytes":
			s.heap, seen[1] = m.value, true
		case "pilot_xds_pushes", "pilot_xds_pushes_total":
			s.pushes[m.labels["type"]] += m.value
		case "pilot_xds":
			s.clients += m.value
			seen[2] = true
		case "pilot_xds_push_time_sum":
			if m.labels["type"] == "eds" {
				s.pushTime += m.value
			}
		case "pilot_xds_push_time_count":
			if m.labels["type"] == "eds" {
				s.pushTimeN += m.value
			}
		case "pilot_xds_config_size_bytes_sum":
			if strings.HasSuffix(m.labels["type"], "ClusterLoadAssignment") {
				s.edsBytes += m.value
			}
		}
	}
	if !seen[0] || !seen[1] {
		return s, fmt.Errorf("istiod %s: /metrics lacks process_cpu_seconds_total or go_memstats_heap_alloc_bytes", is.Cluster)
	}
	return s, nil
}

// meshSample is one sample of every istiod, in lab order.
type meshSample []istiodSample

func scrapeAll(ctx context.Context, l *lab.Lab, gc bool) (meshSample, error) {
	var out meshSample
	for _, is := range l.Istiods() {
		s, err := scrape(ctx, is, gc)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// heapSamples is how many forced-GC readings a heap figure is the median of:
// one reading can land just after a burst of allocation (a /debug poll, a
// push being built).
const heapSamples = 3

// Where a sample's CPU reading is taken against its forced collections:
// a window must not include the CPU the forced GCs cost (a collection of a
// 500 MiB heap is a good part of a second), so a window opens after them
// and closes before them.
const (
	opening = false // CPU read after the forced GCs
	closing = true  // CPU read before the forced GCs
)

// scrapeWithHeap samples every istiod: its heap as the median of
// heapSamples readings a second apart, each after a forced GC, and its CPU
// and counters in one reading without GC, before the GCs (closing) or
// after them (opening).
func scrapeWithHeap(ctx context.Context, l *lab.Lab, cpuFirst bool) (meshSample, error) {
	var out meshSample
	var err error
	if cpuFirst {
		if out, err = scrapeAll(ctx, l, false); err != nil {
			return nil, err
		}
	}
	var runs []meshSample
	for i := 0; i < heapSamples; i++ {
		if i > 0 {
			time.Sleep(time.Second)
		}
		s, err := scrapeAll(ctx, l, true)
		if err != nil {
			return nil, err
		}
		runs = append(runs, s)
	}
	if !cpuFirst {
		if out, err = scrapeAll(ctx, l, false); err != nil {
			return nil, err
		}
	}
	for i := range out {
		hs := make([]float64, len(runs))
		for k, r := range runs {
			hs[k] = r[i].heap
		}
		slices.Sort(hs)
		out[i].heap = hs[len(hs)/2]
	}
	return out, nil
}

// cost is what the istiods spent between two samples, summed over them.
type cost struct {
	seconds float64 // wall time between the samples
	cpu     float64 // CPU seconds
	heap    float64 // heap at the second sample minus at the first
	pushes  map[string]float64
	// pushTime is istiod's own time per EDS push (seconds), from
	// pilot_xds_push_time.
	pushTime float64
	// edsBytes is the EDS bytes istiod pushed.
	edsBytes float64
}

func costBetween(a, b meshSample) cost {
	c := cost{pushes: map[string]float64{}}
	var pt, ptN float64
	for i := range a {
		pt += b[i].pushTime - a[i].pushTime
		ptN += b[i].pushTimeN - a[i].pushTimeN
		c.edsBytes += b[i].edsBytes - a[i].edsBytes
		c.seconds = max(c.seconds, b[i].at.Sub(a[i].at).Seconds())
		c.cpu += b[i].cpu - a[i].cpu
		c.heap += b[i].heap - a[i].heap
		for t, v := range b[i].pushes {
			c.pushes[t] += v - a[i].pushes[t]
		}
	}
	if ptN > 0 {
		c.pushTime = pt / ptN
	}
	return c
}

// heap is the istiods' heap in all.
func (m meshSample) heap() float64 {
	var h float64
	for _, s := range m {
		h += s.heap
	}
	return h
}

// clients is the xDS streams connected to the istiods in all.
func (m meshSample) clients() float64 {
	var n float64
	for _, s := range m {
		n += s.clients
	}
	return n
}

// profileIstiods fetches, from every istiod's debug port, a CPU profile of
// the next d (pprof's /debug/pprof/profile) into dir as
// istiod-CLUSTER-NAME.pprof; the returned function waits for them.
func profileIstiods(ctx context.Context, l *lab.Lab, dir, name string, d time.Duration) func() error {
	errs := make(chan error, len(l.Istiods()))
	for _, is := range l.Istiods() {
		go func() {
			errs <- fetchTo(ctx, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", is.HTTPURL(), int(d.Seconds())),
				filepath.Join(dir, fmt.Sprintf("istiod-%s-%s.pprof", is.Cluster, name)), d+30*time.Second)
		}()
	}
	return func() error {
		var all []error
		for range l.Istiods() {
			all = append(all, <-errs)
		}
		return errors.Join(all...)
	}
}

// heapProfileIstiods saves every istiod's heap profile into dir.
func heapProfileIstiods(ctx context.Context, l *lab.Lab, dir, name string) error {
	var all []error
	for _, is := range l.Istiods() {
		all = append(all, fetchTo(ctx, is.HTTPURL()+"/debug/pprof/heap", filepath.Join(dir, fmt.Sprintf("istiod-%s-%s.heap.pprof", is.Cluster, name)), 30*time.Second))
	}
	return errors.Join(all...)
}

func fetchTo(ctx context.Context, url, path string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(fh, resp.Body); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}
