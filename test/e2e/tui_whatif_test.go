package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTUIWhatIfInTmux: :whatif in the built binary on the demo, as a
// person types it: a DestinationRule with tls DISABLE on reviews shows the
// banner on the screen it was typed on, marks reviews in the services
// list as losing endpoints (Δ!; d: only the changed ones), opens reviews on its endpoints before →
// after, and esc back to the first screen drops it.
func TestTUIWhatIfInTmux(t *testing.T) {
	file := filepath.Join(t.TempDir(), "dr.yaml")
	dr := "apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata:\n  name: reviews-plaintext\n  namespace: bookinfo\nspec:\n  host: reviews.bookinfo.svc.cluster.local\n  trafficPolicy:\n    tls:\n      mode: DISABLE\n"
	if err := os.WriteFile(file, []byte(dr), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := startTUI(t, "meshscope-e2e-whatif", 120, "demo")
	ts.WaitScreen("the first screen should list the clusters", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "Clusters") && strings.Contains(s, "synced")
	})
	ts.Keys(":")
	ts.Keys("whatif " + file)
	ts.Keys("Enter")
	ts.WaitScreen("the banner should say a what-if is shown", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "WHAT-IF: "+file+" (1 service changes, 1 loses endpoints, 3 new errors; FAILS") && strings.Contains(s, "meshscope │ WHAT-IF │")
	})
	ts.Keys(":")
	ts.Keys("svc")
	ts.Keys("Enter")
	ts.Keys("d")
	ts.WaitScreen("only reviews should be listed, marked", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "only the 1 the what-if changes") && strings.Contains(s, "Δ! reviews.bookinfo")
	})
	ts.Keys("Enter")
	ts.WaitScreen("reviews should open on its endpoints before → after", 10*time.Second, func(s string) bool {
		return strings.Contains(s, ":9080 from cluster1/network1@cluster1 (sidecar) LOSES EVERY REMOTE ENDPOINT") &&
			strings.Contains(s, "− 192.168.60.9:15443") && strings.Contains(s, "DISABLE for reviews.bookinfo")
	})
	ts.Keys("Escape")
	ts.Keys("Escape")
	ts.Keys("Escape")
	ts.WaitScreen("esc on the first screen should drop the what-if", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "Clusters") && !strings.Contains(s, "WHAT-IF")
	})
	ts.Quit()
}

// TestTUIFixInTmux: the problems view of the built binary on the demo
// shows the selected problem's fix and, once proven in the background,
// its proof; f lays it over the mesh as a what-if (the banner on every
// screen), and esc drops it.
func TestTUIFixInTmux(t *testing.T) {
	ts := startTUI(t, "meshscope-e2e-fix", 140, "demo")
	ts.WaitScreen("the first screen should list the clusters", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "Clusters") && strings.Contains(s, "synced")
	})
	ts.Keys(":")
	ts.Keys("problems")
	ts.Keys("Enter")
	ts.WaitScreen("the drop's fix and its proof should show under it", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "drop ×2") && strings.Contains(s, "fix: label the pod templates of the workloads of 2 pods") &&
			strings.Contains(s, "proof: resolves it")
	})
	ts.Keys("f")
	ts.WaitScreen("f should lay the fix over the mesh", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "WHAT-IF: fix: label the pod templates") && strings.Contains(s, "meshscope │ WHAT-IF │")
	})
	ts.Keys("Escape")
	ts.Keys("Escape")
	ts.WaitScreen("esc on the first screen should drop the fix's what-if", 10*time.Second, func(s string) bool {
		return !strings.Contains(s, "WHAT-IF")
	})
	ts.Quit()
}
