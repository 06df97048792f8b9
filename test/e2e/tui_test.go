package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/test/e2e/e2eutil"
)

// The terminal UI in tmux and the binary, shared with test/e2e/ambient.
func startTUI(t *testing.T, sock string, width int, args ...string) *e2eutil.TUI {
	return e2eutil.StartTUI(t, sock, width, args...)
}

func meshscopeBinary(t *testing.T) string { return e2eutil.Binary(t) }

// TestTUIInTmux drives the built binary in a real terminal (tmux, 120×40) on
// the demo mesh, as a person would: the first screen shows the
// clusters; /hello + enter + enter opens helloworld with network2's gateway
// rewrite; → moves the focus to the other viewpoint's column; q exits 0 and
// leaves the alternate screen.
func TestTUIInTmux(t *testing.T) {
	ts := startTUI(t, "meshscope-e2e", 120, "demo")
	ts.WaitScreen("the first screen should list the clusters", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "Clusters") && strings.Contains(s, "cluster1") && strings.Contains(s, "synced")
	})
	ts.Keys("/")
	ts.Keys("hello")
	ts.Keys("Enter")
	ts.Keys("Enter")
	s := ts.WaitScreen("/hello should open helloworld with the gateway rewrite", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "helloworld.sample.svc.cluster.local") && strings.Contains(s, "192.168.60.9:15443")
	})
	focused := func(s string) string {
		for _, l := range strings.Split(s, "\n") {
			if i := strings.Index(l, "▌"); i >= 0 && strings.Contains(l, "/network") {
				return strings.Fields(l[i+len("▌"):])[0]
			}
		}
		return ""
	}
	before := focused(s)
	ts.Keys("Right")
	s = ts.WaitScreen("→ should move the focus to the next viewpoint", 10*time.Second, func(s string) bool { f := focused(s); return f != "" && f != before })
	t.Logf("focus moved from %s to %s", before, focused(s))
	ts.Quit()
}

// labTUI starts the UI on the lab's kubeconfig with the given contexts and
// waits until both clusters are synced and both streams up.
func labTUI(t *testing.T, sock string, width int, contexts string) *e2eutil.TUI {
	t.Helper()
	ts := startTUI(t, sock, width, "--kubeconfig", theLab.Kubeconfig, "--context", contexts)
	ts.WaitScreen("both clusters synced and both streams up", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "2 of 2 synced") && strings.Contains(s, "xds 2/2 up")
	})
	return ts
}

// TestTUIOnLab: the UI on the real lab with nothing but a kube context, as
// a user starts it: both clusters synced, one sidecar stream per network up
// through the port-forward to istiod, and helloworld's actual EDS (what the
// real istiod sent) matching the prediction from both viewpoints.
func TestTUIOnLab(t *testing.T) {
	ts := labTUI(t, "meshscope-e2e-lab", 140, "cluster1")
	ts.Open("hello")
	s := ts.WaitScreen("helloworld with both gateways, istiod's EDS matching the prediction from both viewpoints", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "helloworld.sample.svc.cluster.local") && strings.Contains(s, "192.168.60.9:15443") &&
			strings.Contains(s, "192.168.60.113:15443") && strings.Count(s, "verdict match") == 2
	})
	t.Logf("service view on the lab:\n%s", s)
	ts.Quit()
}

// TestTUILocalitiesOnLab (issues #11, #12 in the UI): with cluster2's
// helloworld in two zones (twoZones), the service view shows what explain
// shows of what the real istiod sends a network1 sidecar — each gateway
// entry's locality, Envoy's share with istiod's intended one, "dup" for
// the entries Envoy drops, the split — next to a matching prediction, and
// doctor's duplicate-gateway problem, which the problems view lists too.
func TestTUILocalitiesOnLab(t *testing.T) {
	twoZones(t)
	ts := labTUI(t, "meshscope-e2e-loc", 160, "cluster1")
	ts.Open("hello")
	s := ts.WaitScreen("helloworld with localities, shares, the split and the duplicate-gateway problem", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "locality region2/zone-b") && strings.Contains(s, "locality region2/zone-c") &&
			strings.Contains(s, "w1 50% (20%) unknown") && strings.Contains(s, "w2 0% (40%) dup unknown") &&
			strings.Contains(s, "split: network1 50% (istiod's weights mean 20%)") &&
			strings.Contains(s, "error duplicate-gateway: helloworld.sample port 5000: network2 gets 50 % of a network1 proxy's requests instead of 80 %") &&
			strings.Count(s, "verdict match") == 2
	})
	t.Logf("service view:\n%s", s)
	ts.Keys("Enter") // the service's problems
	s = ts.WaitScreen("the problems view on the duplicate-gateway row", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "Problems (") && strings.Contains(s, "duplicate-gateway") && strings.Contains(s, "Envoy keeps only the first") && strings.Contains(s, "gateway entries for 192.168.60.9:15443")
	})
	t.Logf("problems view:\n%s", s)
	ts.Quit()
}

// TestTUIMissingRemoteSecretOnLab (issue #12 in the UI): multi-primary with
// cluster2's remote secret for cluster1 deleted. From both contexts, the
// problems view shows doctor's control-plane-missing-cluster row naming the
// secret, and the clusters view's control planes pane says cluster2's
// istiod reads only cluster2; with the secret back, both go.
func TestTUIMissingRemoteSecretOnLab(t *testing.T) {
	ts := labTUI(t, "meshscope-e2e-cp", 160, "cluster1,cluster2")
	ts.WaitScreen("both primaries reading both clusters", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "its secrets: cluster1, cluster2") && strings.Contains(s, "its secrets: cluster2, cluster1") &&
			strings.Contains(s, "cluster2 istiod-local-cluster2")
	})
	restore := deleteRemoteSecret(t, "cluster2", "cluster1")
	s := ts.WaitScreen("cluster2's istiod reading only cluster2", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "its secrets: cluster2 ")
	})
	t.Logf("clusters view:\n%s", s)
	ts.Keys(":")
	ts.Keys("problems")
	ts.Keys("Enter")
	s = ts.WaitScreen("the problems view with the missing remote secret", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "control-plane-missing-cluster") &&
			strings.Contains(s, "istiod cluster2 does not read cluster cluster1")
	})
	t.Logf("problems view:\n%s", s)
	restore()
	ts.WaitScreen("the problem gone once the secret is back", 60*time.Second, func(s string) bool {
		return strings.Contains(s, "Problems (") && !strings.Contains(s, "control-plane-missing-cluster")
	})
	ts.Keys(":")
	ts.Keys("clusters")
	ts.Keys("Enter")
	ts.WaitScreen("cluster2's istiod reading both clusters again", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "its secrets: cluster2, cluster1")
	})
	ts.Quit()
}
