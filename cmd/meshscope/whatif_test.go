package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshscope/meshscope/analysis/whatif"
)

// TestWhatIfDemo: the README's example — a DestinationRule that turns mTLS
// off for reviews — on the demo: every cross-network endpoint of reviews
// goes, the proxy without NETWORK loses them all, new drop errors, exit 1;
// --fail-on none exits 0; bad input exits 2 with where it is.
func TestWhatIfDemo(t *testing.T) {
	example := filepath.Join("..", "..", "docs", "examples", "what-if-plaintext-reviews.yaml")
	out, err := runCLI(t, "what-if", "--demo", "-f", example)
	if code, _ := exitOf(err); code != 1 {
		t.Fatalf("exit: %v, want 1\n%s", err, out)
	}
	for _, want := range []string{
		"reviews.bookinfo.svc.cluster.local:9080  from cluster1/network1@cluster1 (sidecar)  LOSES EVERY REMOTE ENDPOINT",
		"from cluster1/none@cluster1 (sidecar)  LOSES EVERY ENDPOINT",
		"share:  network1 66.7% → 100%, network2 33.3% → 0%",
		"the gateway routes by SNI, which needs mTLS",
		"NEW PROBLEMS", "RESOLVED PROBLEMS", "duplicate-gateway",
		"read as destinationrules",
		"FAIL: 3 new errors (--fail-on error); 1 service view(s) lose every endpoint (--fail-on lost)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("what-if --demo lacks %q\n%s", want, out)
		}
	}
	out, err = runCLI(t, "what-if", "--demo", "-f", example, "-o", "json", "--fail-on", "none")
	var rep whatif.Report
	if err != nil || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Changes) != 3 || len(rep.Problems.New) != 3 || rep.Fail != nil {
		t.Errorf("-o json --fail-on none: %v, %d changes, %d new problems, fail %v", err, len(rep.Changes), len(rep.Problems.New), rep.Fail)
	}
	// A Deployment whose template turns injection off: its pod in cluster2
	// is re-made without a sidecar, and network1 loses it.
	deploy := filepath.Join("..", "..", "docs", "examples", "what-if-deployment-no-sidecar.yaml")
	out, err = runCLI(t, "what-if", "--demo", "-f", "cluster2="+deploy)
	if code, _ := exitOf(err); code != 1 {
		t.Fatalf("deployment: exit %v, want 1\n%s", err, out)
	}
	for _, want := range []string{
		"after:  10.44.0.28:9080 (local, network1), 192.168.60.9:15443 (gateway, network2)",
		"lacks security.istio.io/tlsMode=istio (no sidecar)",
		"put Deployment bookinfo/ratings-v1 in cluster2 (" + deploy + ":1): 1 pod in cluster2 re-made from its template (ratings-v1-",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("what-if --demo of a Deployment lacks %q\n%s", want, out)
		}
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: [x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-f", bad}, "bad.yaml:4: not YAML"},
		{[]string{"-f", "cluster9=" + example}, `no cluster "cluster9" in the mesh`},
		{[]string{"--delete", "-f", example}, "DestinationRule bookinfo/reviews-plaintext does not exist in cluster cluster1"},
	} {
		_, err := runCLI(t, append([]string{"what-if", "--demo"}, c.args...)...)
		code, msg := exitOf(err)
		if code != 2 || !strings.Contains(msg, c.want) {
			t.Errorf("%v: exit %d %q, want 2 with %q", c.args, code, msg, c.want)
		}
	}
	if _, err := runCLI(t, "what-if", "--demo"); err == nil || !strings.Contains(err.Error(), "nothing to try") {
		t.Errorf("no change: %v", err)
	}
}
