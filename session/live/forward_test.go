package live

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/session/istiod"
)

// A failed port-forward to istiod is remembered (every stream and the
// istiod poller asking at once get the same answer, without hammering the
// API server) and tried again after the retry delay. The forwards go
// through istiod.Kube, to kubeconfigs that do not exist.
func TestForwarderRetriesAfterFailure(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kube := istiod.Kube{Kubeconfig: "/nonexistent/first"}
	const retry = 200 * time.Millisecond
	fw := newForwarder(ctx, retry, func(ctx context.Context, kctx, _ string, port int) (*istiod.PortForward, string, error) {
		return kube.PortForwardIn(ctx, kctx, istiod.DefaultNamespace, port, time.Second)
	})
	defer fw.close()
	_, err := fw.get(ctx, "", "", istiodXDSPort)
	if err == nil || !strings.Contains(err.Error(), "first") || !strings.Contains(err.Error(), "15010") {
		t.Fatalf("err = %v", err)
	}
	kube.Kubeconfig = "/nonexistent/second"
	if _, err := fw.get(ctx, "", "", istiodXDSPort); err == nil || !strings.Contains(err.Error(), "first") {
		t.Fatalf("within the retry delay the first failure is reused: %v", err)
	}
	// Another port is its own forward.
	if _, err := fw.get(ctx, "", "", istiodDebugPort); err == nil || !strings.Contains(err.Error(), "second") || !strings.Contains(err.Error(), "8080") {
		t.Fatalf("debug port: %v", err)
	}
	// So is the same port of another context's istiod, and its error
	// names the context.
	kube.Kubeconfig = "/nonexistent/third"
	if _, err := fw.get(ctx, "cluster2", "", istiodDebugPort); err == nil || !strings.Contains(err.Error(), "third") || !strings.Contains(err.Error(), `context "cluster2"`) {
		t.Fatalf("another context: %v", err)
	}
	time.Sleep(retry)
	if _, err := fw.get(ctx, "", "", istiodXDSPort); err == nil || !strings.Contains(err.Error(), "third") {
		t.Fatalf("after the retry delay it is tried again: %v", err)
	}
}

// TestSessionForwardsOnlyWithoutAddresses: a real session port-forwards to
// istiod (xDS and debug) only when no control plane is given; the demo
// never does.
func TestSessionForwardsOnlyWithoutAddresses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := &Session{fwd: newForwarder(ctx, time.Hour, func(context.Context, string, string, int) (*istiod.PortForward, string, error) {
		return &istiod.PortForward{Address: "127.0.0.1:9"}, "cluster1", nil
	})}
	if !s.forwardsToIstiod() || !s.readsIstiodView() {
		t.Fatal("no addresses: forwards")
	}
	if ts := s.istiodDebugTargets(ctx, nil); len(ts) != 1 || ts[0] != (debugTarget{Target: Target{Cluster: "cluster1", Address: "127.0.0.1:9"}}) {
		t.Fatalf("debug targets %v", ts)
	}
	s.controlPlanes = []Target{{Address: "127.0.0.1:15010"}}
	if s.forwardsToIstiod() || s.readsIstiodView() {
		t.Fatal("--xds-address alone: no forward, no istiod view")
	}
	demo, _ := openDemo(t, ctx, Options{})
	if demo.forwardsToIstiod() {
		t.Fatal("the demo forwards")
	}
	// The demo serves its own istiod debug endpoint (demo/debug.go).
	if !demo.readsIstiodView() {
		t.Fatal("the demo's istiod debug endpoint is not read")
	}
}
