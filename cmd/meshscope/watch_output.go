package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/meshscope/meshscope/internal/humanize"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// watchWriter prints events as they come, from every client's goroutine,
// one whole event at a time.
type watchWriter struct {
	mu     sync.Mutex
	format string
	w      *bufio.Writer
	enc    *json.Encoder
	err    error
}

func newWatchWriter(w io.Writer, format string) (*watchWriter, error) {
	switch format {
	case "jsonl", "json":
		format = "jsonl"
	case "table":
	default:
		return nil, fmt.Errorf("-o %q: want jsonl or table", format)
	}
	bw := bufio.NewWriter(w)
	ww := &watchWriter{format: format, w: bw, enc: json.NewEncoder(bw)}
	if format == "table" {
		fmt.Fprintln(bw, "TIME          CONTROL-PLANE  VIEWPOINT            TYPE        VERSION               RES  BYTES    CHANGES")
		_ = bw.Flush()
	}
	return ww, nil
}

func (ww *watchWriter) write(ev xdsclient.Event) {
	ww.mu.Lock()
	defer ww.mu.Unlock()
	if ww.err != nil {
		return
	}
	if ww.format == "jsonl" {
		ww.err = ww.enc.Encode(ev)
	} else {
		writeEventRow(ww.w, ev)
	}
	// Flush per event: watch is read live, often piped into jq or grep.
	if err := ww.w.Flush(); err != nil && ww.err == nil {
		ww.err = err
	}
}

// incomplete ends the output with what could not be read: jsonl a last
// line {"type":"incomplete","incomplete":[...]} (a reader that keys on
// type skips it), table one line per stream.
func (ww *watchWriter) incomplete(inc []model.Incomplete) {
	if len(inc) == 0 {
		return
	}
	ww.mu.Lock()
	defer ww.mu.Unlock()
	if ww.err != nil {
		return
	}
	if ww.format == "jsonl" {
		ww.err = ww.enc.Encode(struct {
			Type       string             `json:"type"`
			Incomplete []model.Incomplete `json:"incomplete"`
		}{"incomplete", inc})
		return
	}
	for _, i := range inc {
		fmt.Fprintln(ww.w, "incomplete: "+i.Sentence())
	}
}

func (ww *watchWriter) flush() error {
	ww.mu.Lock()
	defer ww.mu.Unlock()
	if ww.err != nil {
		return ww.err
	}
	return ww.w.Flush()
}

func writeEventRow(w io.Writer, ev xdsclient.Event) {
	typ := string(ev.Type)
	if ev.ResourceType != "" {
		typ += "(" + string(ev.ResourceType) + ")"
	}
	changes := summarizeChanges(ev)
	fmt.Fprintf(w, "%-13s %-14s %-20s %-11s %-21s %4d %-8s %s\n",
		ev.Time.Format(time.TimeOnly+".000"), trunc(ev.ControlPlane, 14), trunc(ev.Viewpoint, 20), typ,
		trunc(ev.Version, 21), ev.Resources, humanize.Bytes(ev.Bytes), changes)
	for _, c := range ev.Endpoints {
		mark := changeMark(c.Change)
		line := fmt.Sprintf("    %s %s:%d weight %d", mark, c.Address, c.Port, c.Weight)
		if c.Change == xdsclient.EndpointWeight {
			line = fmt.Sprintf("    %s %s:%d weight %d -> %d", mark, c.Address, c.Port, c.OldWeight, c.Weight)
		}
		if c.WorkloadCluster != "" {
			line += "  cluster " + c.WorkloadCluster
		}
		if c.Workload != "" {
			line += "  pod " + c.Workload
		} else if c.WorkloadCluster != "" {
			line += "  (gateway)"
		}
		fmt.Fprintf(w, "%s  [%s]\n", line, c.Cluster)
	}
	for _, a := range ev.Addresses {
		fmt.Fprintf(w, "    %s %s\n", changeMark(a.Change), a.Summary())
	}
}

func changeMark(change string) string {
	return map[string]string{xdsclient.EndpointAdded: "+", xdsclient.EndpointRemoved: "-", xdsclient.EndpointWeight: "~", xdsclient.EndpointChanged: "*"}[change]
}

func summarizeChanges(ev xdsclient.Event) string {
	switch {
	case ev.Error != "" && ev.Message != "":
		return ev.Message
	case ev.Error != "":
		return ev.Error
	case ev.Message != "":
		return ev.Message
	}
	var parts []string
	if n := len(ev.Added); n > 0 {
		parts = append(parts, fmt.Sprintf("+%d", n))
	}
	if n := len(ev.Removed); n > 0 {
		parts = append(parts, fmt.Sprintf("-%d", n))
	}
	if n := len(ev.Changed); n > 0 {
		parts = append(parts, fmt.Sprintf("~%d", n))
	}
	if len(parts) == 0 {
		return "no change"
	}
	return strings.Join(parts, " ") + " resources"
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}
