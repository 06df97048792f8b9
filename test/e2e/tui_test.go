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
// the demo mesh, as a person would (issue #6): the first screen shows the
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

// TestTUIOnLab: the UI on the real lab with nothing but a kube context, as
// a user starts it: both clusters synced, one sidecar stream per network up
// through the port-forward to istiod, and helloworld's actual EDS (what the
// real istiod sent) matching the prediction from both viewpoints.
func TestTUIOnLab(t *testing.T) {
	ts := startTUI(t, "meshscope-e2e-lab", 140, "--kubeconfig", theLab.Kubeconfig, "--context", "cluster1")
	ts.WaitScreen("both clusters synced and both streams up", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "2 of 2 synced") && strings.Contains(s, "xds 2/2 up")
	})
	ts.Keys("/")
	ts.Keys("hello")
	ts.Keys("Enter")
	ts.Keys("Enter")
	s := ts.WaitScreen("helloworld with both gateways, istiod's EDS matching the prediction from both viewpoints", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "helloworld.sample.svc.cluster.local") && strings.Contains(s, "192.168.60.9:15443") &&
			strings.Contains(s, "192.168.60.113:15443") && strings.Count(s, "verdict match") == 2
	})
	t.Logf("service view on the lab:\n%s", s)
	ts.Quit()
}
