package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A failed port-forward to istiod is remembered (every stream and the
// istiod poller asking at once get the same answer, without hammering the
// API server) and tried again after forwardRetry.
func TestPortForwardedRetriesAfterFailure(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := &mesh{runCtx: ctx, kube: &watchKube{kubeconfig: "/nonexistent/first"}}
	_, err := m.portForwarded(ctx, istiodXDSPort)
	if err == nil || !strings.Contains(err.Error(), "first") || !strings.Contains(err.Error(), "15010") {
		t.Fatalf("err = %v", err)
	}
	m.kube.kubeconfig = "/nonexistent/second"
	if _, err := m.portForwarded(ctx, istiodXDSPort); err == nil || !strings.Contains(err.Error(), "first") {
		t.Fatalf("within forwardRetry the first failure is reused: %v", err)
	}
	// Another port is its own forward.
	if _, err := m.portForwarded(ctx, istiodDebugPort); err == nil || !strings.Contains(err.Error(), "second") || !strings.Contains(err.Error(), "8080") {
		t.Fatalf("debug port: %v", err)
	}
	old := forwardRetry
	forwardRetry = time.Millisecond
	defer func() { forwardRetry = old }()
	time.Sleep(2 * time.Millisecond)
	if _, err := m.portForwarded(ctx, istiodXDSPort); err == nil || !strings.Contains(err.Error(), "second") {
		t.Fatalf("after forwardRetry it is tried again: %v", err)
	}
}
