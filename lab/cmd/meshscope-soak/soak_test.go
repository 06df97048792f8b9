package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestSoakSmoke runs the soak on the demo mesh for a few seconds: the
// headless UI answers, samples are taken and judged, the report and the
// rule are printed, and closing leaves no stream, connection or stray
// goroutine. (Too short to judge growth: the verdict itself is not
// asserted; make soak is the real run.)
func TestSoakSmoke(t *testing.T) {
	cfg := config{mesh: meshDemo, duration: 12 * time.Second, every: time.Second, step: 500 * time.Millisecond,
		demoInterval: 50 * time.Millisecond, rule: rule{warmup: 2 * time.Second, maxPerHour: 0.1, minT: 3, minRiseFrac: 0.05}}
	var out bytes.Buffer
	if _, err := soak(context.Background(), cfg, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	report := out.String()
	for _, want := range []string{"samples over 12s", "grows without bound when", "heap (MiB)", "goroutines", "xds streams", "grpc conns", "fds",
		"UI: ", "last status bar: clusters", "after close: xds streams 0, grpc conns 0"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	// Every stream of the demo up (sidecars and, the demo using ambient
	// mode, a ztunnel): "xds N/N up".
	if m := regexp.MustCompile(`xds (\d+)/(\d+) up`).FindStringSubmatch(report); m == nil || m[1] != m[2] {
		t.Errorf("the last status bar does not have every xDS stream up:\n%s", report)
	}
	if strings.Contains(report, "waited for an answer") || strings.Contains(report, "LEFT OPEN") || strings.Contains(report, "too few samples") {
		t.Errorf("the UI stalled, something stayed open, or the window was empty:\n%s", report)
	}
	t.Log(report)
}
