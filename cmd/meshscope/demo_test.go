package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&bytes.Buffer{})
	root.SetArgs(append(args, "--log-file", "-"))
	err := root.Execute()
	return out.String(), err
}

// TestExplainDemo: explain helloworld.sample --demo shows the
// gateway rewrite, every view matches, and the exit status is 0.
func TestExplainDemo(t *testing.T) {
	out, err := runCLI(t, "explain", "helloworld.sample", "--demo", "--all-views", "-o", "json")
	if err != nil {
		t.Fatalf("explain --demo: %v\n%s", err, out)
	}
	var res explainResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Service != "helloworld.sample.svc.cluster.local" || len(res.Views) != 3 {
		t.Fatalf("service %q with %d views, want helloworld with 3", res.Service, len(res.Views))
	}
	v := res.Views[0]
	var got []string
	for _, a := range v.Actual {
		got = append(got, a.Address+" "+string(a.Kind))
	}
	if v.Verdict != "match" || strings.Join(got, ",") != "10.44.0.13 local,192.168.60.9 gateway" {
		t.Errorf("from %s: verdict %s, actual %v; want match with the gateway rewrite", v.Viewpoint.Name, v.Verdict, got)
	}
	// A DestinationRule subset, as the demo's control plane serves it.
	out, err = runCLI(t, "explain", "--demo", "--all-views", "reviews.bookinfo", "--subset", "v2")
	if err != nil || strings.Count(out, ": MATCH") != 3 {
		t.Errorf("explain reviews.bookinfo --subset v2 --demo: %v\n%s", err, out)
	}
	// The VM service (a ServiceEntry and its WorkloadEntries): sent as
	// predicted, but its host is outside the hosts cross-network-gateway
	// exposes (*.local): the demo's planted broken second hop, exit 1.
	out, err = runCLI(t, "explain", "--demo", "--all-views", "vm.mesh.internal")
	if err == nil || strings.Count(out, ": BROKEN") != 3 ||
		!strings.Contains(out, "second hop → 192.168.60.9:15443 → SNI outbound_.8080_._.vm.mesh.internal ✗ the hosts of the AUTO_PASSTHROUGH server(s) on port 15443 (*.local) do not match vm.mesh.internal") {
		t.Errorf("explain vm.mesh.internal --demo: %v\n%s", err, out)
	}
	// The fuzzy query and the table form.
	out, err = runCLI(t, "explain", "hello", "--demo")
	if err != nil || !strings.Contains(out, "192.168.60.9:15443") || !strings.Contains(out, "MATCH") {
		t.Errorf("explain hello --demo: %v\n%s", err, out)
	}
}

// TestExplainAmbientDemo: issue #15 — explain of an ambient service asks
// the demo's control plane as a ztunnel and matches the prediction: echo's
// network2 pods behind one split-horizon workload; table and JSON; a mixed
// service gets the sidecar views too; --from ztunnel@ names the istiod.
func TestExplainAmbientDemo(t *testing.T) {
	out, err := runCLI(t, "explain", "echo.ambient", "--demo", "-o", "json")
	if err != nil {
		t.Fatalf("explain echo.ambient --demo: %v\n%s", err, out)
	}
	var res explainResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Views) != 0 || len(res.Ztunnels) != 1 {
		t.Fatalf("an ambient service: %d sidecar views and %d ztunnel views, want 0 and 1", len(res.Views), len(res.Ztunnels))
	}
	z := res.Ztunnels[0]
	var kinds []string
	for _, w := range z.Prediction.Workloads {
		kinds = append(kinds, string(w.Kind))
	}
	if z.ControlPlane != "cluster1" || z.Verdict != "match" || z.Actual == nil || len(z.Actual.Workloads) != 2 || strings.Join(kinds, ",") != "pod,split-horizon" {
		t.Errorf("ztunnel view %+v", z)
	}
	out, err = runCLI(t, "explain", "ledger.ambient", "--demo", "--from", "ztunnel@cluster1")
	for _, want := range []string{"from ztunnel@cluster1 (control plane cluster1, network network1): MATCH", "WDS is per istiod", "DROPPED  not-global"} {
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("explain ledger --from ztunnel@cluster1: %v; lacks %q\n%s", err, want, out)
		}
	}
	out, err = runCLI(t, "explain", "orders.ambient", "--demo", "-o", "json")
	res = explainResult{}
	if err != nil || json.Unmarshal([]byte(out), &res) != nil || len(res.Views) != 2 || len(res.Ztunnels) != 1 {
		t.Errorf("a mixed service: %v, %d sidecar and %d ztunnel views", err, len(res.Views), len(res.Ztunnels))
	}
	if _, err := runCLI(t, "explain", "echo.ambient", "--demo", "--from", "ztunnel@cluster9"); err == nil || !strings.Contains(err.Error(), "no cluster cluster9") {
		t.Errorf("an unknown control plane: %v", err)
	}
}

// TestDoctorDemo: issues #7 and #12 — doctor --demo lists every error kind
// the demo plants (drop, failing remote secret, CA mismatch, missing
// service) and the skew its endpoint counts do not explain, on one screen,
// compares what the demo's control plane sends with the prediction (no
// difference), and exits 1.
func TestDoctorDemo(t *testing.T) {
	out, err := runCLI(t, "doctor", "--demo")
	if code, _ := exitOf(err); code != 1 {
		t.Fatalf("doctor --demo: err %v, want exit status 1", err)
	}
	for _, want := range []string{"legacy-billing", "search.shop", "cluster4", "TLS/CA mismatch", "root-ca-mismatch", "missing-service", "adservice.shop",
		"duplicate-gateway", "reviews.bookinfo port 9080: network2 gets 33 % of a network1 proxy's requests instead of 60 %",
		"ambient-scope-mismatch", "inventory.ambient"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor --demo does not mention %q:\n%s", want, out)
		}
	}
	if rows := strings.Count(out, "\n"); rows > 24 {
		t.Errorf("doctor --demo prints %d lines, want at most a screen (24):\n%s", rows, out)
	}
	if strings.Contains(out, "xds-differs") || strings.Contains(out, "wds-differs") || strings.Contains(out, "istiod-unreachable") {
		t.Errorf("the demo's control plane sends what is predicted:\n%s", out)
	}
	// -o json carries the group counts.
	out, _ = runCLI(t, "doctor", "--demo", "-o", "json", "--offline")
	var res struct {
		Problems []struct {
			Kind  string `json:"kind"`
			Count int    `json:"count"`
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Problems {
		if p.Kind == "drop" && p.Count != 2 {
			t.Errorf("legacy-billing's two dropped pods are one row with count 2: %+v", p)
		}
	}
}
