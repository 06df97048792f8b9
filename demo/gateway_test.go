package demo

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/analysis/plane"
	"github.com/meshscope/meshscope/xdsclient"
)

// TestDemoServesGateways: the demo's control plane serves a gateway pod
// impersonated as a router its second hop — the AUTO_PASSTHROUGH listener
// with an SNI chain per service port and the SNI-DNAT clusters — and what
// it serves is what meshscope predicts (but for the planted vm host, which
// no chain carries: it is outside *.local).
func TestDemoServesGateways(t *testing.T) {
	d, ctx := startSettled(t, false, 5*time.Second)
	snap := d.Registry.Snapshot()
	sents := explain.GatewayViewpoints(snap, nil)
	if len(sents) != 2 {
		t.Fatalf("%d gateway pods, want one per gateway (network1, network2)", len(sents))
	}
	s := sents[1]
	c, err := xdsclient.New(xdsclient.Options{Viewpoint: s.Viewpoint(), Transport: xdsclient.TransportConfig{Address: d.XDSAddress}, Listeners: true})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	go func() { _ = c.Run(cctx) }()
	for cctx.Err() == nil {
		if p := c.Progress(); p.CDS && p.LDS && p.EDS >= p.EDSWanted && p.EDSWanted > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.Listeners, s.Clusters = c.Listeners(), c.Clusters()
	s.EDS = map[string]xdsclient.LoadAssignment{}
	for _, la := range c.LoadAssignments() {
		s.EDS[la.Cluster] = la
	}
	if len(s.Listeners) != 1 || len(s.Listeners[0].SNIChains) < 10 {
		t.Fatalf("listeners %+v", s.Listeners)
	}
	var names []string
	for _, fc := range s.Listeners[0].SNIChains {
		names = append(names, fc.ServerNames...)
	}
	if !slices.Contains(names, "outbound_.5000_._.helloworld.sample.svc.cluster.local") || slices.Contains(names, "outbound_.8080_._.vm.mesh.internal") {
		t.Errorf("SNI chains %v", names)
	}
	if diffs := explain.CompareGateway(plane.NewSet(snap, nil).Of(s.ControlPlane), s); len(diffs) != 0 {
		t.Errorf("the demo serves a gateway what meshscope does not predict: %+v", diffs)
	}
}
