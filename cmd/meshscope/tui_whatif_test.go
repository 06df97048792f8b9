package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/meshscope/meshscope/analysis/whatif"
	"github.com/meshscope/meshscope/model"
)

// TestTUIWhatIfOnDemo: the UI's :whatif answers on the session it reads —
// the demo here — through the same whatif.Run as the command: a
// DestinationRule with tls DISABLE on reviews takes network2's gateway
// from network1's sidecars; settings alone answer too.
func TestTUIWhatIfOnDemo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	g := &globalOptions{Demo: true}
	m, err := openMesh(ctx, g, &meshOptions{seed: 1}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	opts := tuiOptions(g, m)
	if opts.WhatIf == nil {
		t.Fatal("the UI gets no what-if")
	}
	file := filepath.Join(t.TempDir(), "dr.yaml")
	dr := "apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata:\n  name: reviews-plaintext\n  namespace: bookinfo\nspec:\n  host: reviews.bookinfo.svc.cluster.local\n  trafficPolicy:\n    tls:\n      mode: DISABLE\n"
	if err := os.WriteFile(file, []byte(dr), 0o600); err != nil {
		t.Fatal(err)
	}
	objs, err := whatif.Read([]whatif.Source{{Path: file}}, "cluster1", nil)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := opts.WhatIf(whatif.Request{Objects: objs})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range rep.Changes {
		if c.Service == "reviews.bookinfo.svc.cluster.local" && c.Viewpoint == "cluster1/network1@cluster1" && c.LostRemote {
			found = true
		}
	}
	if !found || len(rep.Problems.New) == 0 {
		t.Fatalf("no lost remote endpoints for network1's sidecars, or no new problem: %+v", rep.Changes)
	}
	// Settings alone (":whatif --env …"): the demo's istiod without ambient
	// multi-network mode.
	rep, err = opts.WhatIf(whatif.Request{Env: []model.IstiodEnv{{Key: "AMBIENT_ENABLE_MULTI_NETWORK", Value: "false"}}})
	if err != nil || len(rep.Settings) != 1 || len(rep.Problems.New)+len(rep.Problems.Resolved) == 0 {
		t.Fatalf("settings alone: %v, %+v", err, rep)
	}
}
