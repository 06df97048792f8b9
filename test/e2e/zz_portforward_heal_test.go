package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshscope/meshscope/lab"
	"github.com/meshscope/meshscope/session/istiod"
	"github.com/meshscope/meshscope/xdsclient"
)

// TestPortForwardHeals: a port-forward lives only as long as its
// connection through the API server. When cluster2's API server restarts,
// the forward to cluster2's istiod ends; meshscope re-establishes it on the
// same local port (finding the Pod again), and the impersonated proxy on it
// reconnects and gets the same EDS. (A zz_ file: it disturbs the lab.)
func TestPortForwardHeals(t *testing.T) {
	ctx := context.Background()
	c2 := theLab.Cluster("cluster2")
	var mu sync.Mutex
	var logs []string
	logged := func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), logs...) }
	pf, err := istiod.StartPortForwardTo(ctx, istiod.PortForwardOptions{
		Config: c2.RESTConfig(), RemotePort: 15010, Timeout: 10 * time.Second,
		Find: func(ctx context.Context) (string, string, error) {
			p, err := istiod.FindPod(ctx, c2.Client(), lab.SystemNamespace, "")
			if err != nil {
				return "", "", err
			}
			return p.Namespace, p.Name, nil
		},
		Backoff: xdsclient.Backoff{Initial: 200 * time.Millisecond, Max: time.Second},
		Logf: func(f string, a ...any) {
			mu.Lock()
			defer mu.Unlock()
			logs = append(logs, fmt.Sprintf(f, a...))
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	const want = seedEDSNetwork2
	p := runProbe(t, xdsclient.Options{
		Viewpoint: xdsclient.Viewpoint{Cluster: "cluster2", Network: "network2"}, ControlPlane: "cluster2",
		EDSNames:  []string{helloworldEDS},
		Transport: xdsclient.TransportConfig{Address: pf.Address},
		Backoff:   xdsclient.Backoff{Initial: 200 * time.Millisecond, Max: time.Second},
	})
	edsIs := func(want string) func() string {
		return func() string {
			if got := strings.Join(p.eds(helloworldEDS), ","); got != want {
				return "EDS through the forward: " + got + ", want " + want
			}
			return ""
		}
	}
	eventually(t, 30*time.Second, edsIs(want))
	before := p.count()

	stopped := time.Now()
	if err := theLab.StopAPIServer("cluster2"); err != nil {
		t.Fatal(err)
	}
	if err := theLab.StartAPIServer(ctx, "cluster2"); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	eventually(t, 60*time.Second, func() string {
		if _, heals := pf.Current(); heals < 1 {
			return fmt.Sprintf("the forward was not re-established (log: %q)", logged())
		}
		for _, e := range p.since(before) {
			if e.Type == xdsclient.EventReconnect {
				return edsIs(want)()
			}
		}
		return "the probe has not reconnected through the healed forward"
	})
	pod, heals := pf.Current()
	t.Logf("forward healed %d time(s) to %s on %s; EDS back %s after the API server stopped, %s after it was ready again; log: %q",
		heals, pod, pf.Address, time.Since(stopped).Round(time.Millisecond), time.Since(restarted).Round(time.Millisecond), logged())
}
