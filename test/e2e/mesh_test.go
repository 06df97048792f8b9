package e2e

import (
	"context"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/meshscope/meshscope/collector"
	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/xdsclient"
)

// startRegistry runs meshscope's collector from the lab's cluster1 context
// alone: cluster2 must come in through the remote secret.
func startRegistry(t *testing.T) *collector.Registry {
	t.Helper()
	return startRegistryFrom(t, "cluster1")
}

// startRegistryFrom runs the collector from the given contexts.
func startRegistryFrom(t *testing.T, contexts ...string) *collector.Registry {
	t.Helper()
	reg, err := collector.NewRegistry(collector.Options{Kubeconfig: theLab.Kubeconfig, Contexts: contexts, SyncTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = reg.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer wcancel()
	if _, err := reg.WaitSettled(wctx); err != nil {
		t.Fatalf("collector did not settle: %v", err)
	}
	return reg
}

// threeViewProbes impersonates, against the first istiod, the three
// viewpoints the scenarios compare: a network1 sidecar, a network2 sidecar
// and a proxy without NETWORK, each asking for helloworld's EDS.
func threeViewProbes(t *testing.T) ([]xdsclient.Viewpoint, []*probe) {
	t.Helper()
	vps := []xdsclient.Viewpoint{
		{Cluster: "cluster1", Network: "network1"},
		{Cluster: "cluster2", Network: "network2"},
		{Cluster: "cluster1", NoNetwork: true},
	}
	probes := make([]*probe, len(vps))
	for i, vp := range vps {
		probes[i] = startProbe(t, vp, xdsclient.ModeDelta, helloworldEDS)
	}
	return vps, probes
}

// probe is one impersonated proxy against the lab's istiod, recording events.
type probe struct {
	c      *xdsclient.Client
	mu     sync.Mutex
	events []xdsclient.Event
}

// startProbe impersonates vp against the first istiod (plaintext).
func startProbe(t *testing.T, vp xdsclient.Viewpoint, mode xdsclient.Mode, eds ...string) *probe {
	t.Helper()
	return runProbe(t, xdsclient.Options{
		Viewpoint: vp, ControlPlane: "cluster1", Mode: mode, EDSNames: eds,
		Transport: xdsclient.TransportConfig{Address: theLab.Istiods()[0].XDSAddress()},
		Backoff:   xdsclient.Backoff{Initial: 100 * time.Millisecond, Max: time.Second},
	})
}

// runProbe starts a client with opts (recording its events) until the test ends.
func runProbe(t *testing.T, opts xdsclient.Options) *probe {
	t.Helper()
	p := &probe{}
	opts.OnEvent = func(e xdsclient.Event) {
		p.mu.Lock()
		p.events = append(p.events, e)
		p.mu.Unlock()
	}
	c, err := xdsclient.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	p.c = c
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = c.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return p
}

// eds is "address:port w=N" per endpoint of the named cluster, sorted; nil
// until the first EDS arrived.
func (p *probe) eds(name string) []string {
	la, ok := p.c.LoadAssignment(name)
	if !ok {
		return nil
	}
	return edsKeys(la)
}

// edsKeys is "address:port w=weight" per endpoint, sorted.
func edsKeys(la xdsclient.LoadAssignment) []string {
	out := []string{}
	for _, e := range la.Endpoints {
		out = append(out, e.Key()+" w="+strconv.FormatUint(uint64(e.Weight), 10))
	}
	sort.Strings(out)
	return out
}

func (p *probe) since(seq int) []xdsclient.Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]xdsclient.Event(nil), p.events[seq:]...)
}

func (p *probe) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.events)
}

// eventually retries check until it returns "" or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, check func() string) {
	t.Helper()
	lab.Eventually(t, timeout, check)
}

// withChange applies a mutation of the shared lab for the rest of the
// (sub)test and undoes it at its end.
func withChange(t *testing.T, apply, undo func() error) {
	t.Helper()
	if err := apply(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := undo(); err != nil {
			t.Errorf("undo: %v", err)
		}
	})
}
