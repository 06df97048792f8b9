package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshscope/meshscope/lab"
)

// tuiSession is the meshscope binary running in a real terminal (tmux).
type tuiSession struct {
	t        *testing.T
	tmux     string
	sock     string
	exitFile string
}

// startTUI runs meshscope with args in a tmux session of 120×40 (or wider)
// until the test ends.
func startTUI(t *testing.T, sock string, width int, args ...string) *tuiSession {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal("tmux is needed for this test (.ci/run installs it: apt-get install tmux)")
	}
	// One tmux server per e2e lab: several working trees run these tests
	// side by side.
	if offset, err := lab.PortOffset("MESHSCOPE_E2E_PORT_OFFSET", 100); err == nil {
		sock = fmt.Sprintf("%s-%d", sock, offset)
	}
	dir := t.TempDir()
	ts := &tuiSession{t: t, tmux: tmux, sock: sock, exitFile: filepath.Join(dir, "exit")}
	script := meshscopeBinary(t) + " " + strings.Join(args, " ") + " --log-file " + filepath.Join(dir, "log") + "; echo $? > " + ts.exitFile + "; sleep 60"
	ts.tm("new-session", "-d", "-s", "ui", "-x", fmt.Sprint(width), "-y", "40", "sh", "-c", script)
	t.Cleanup(func() { _ = exec.Command(tmux, "-L", sock, "kill-server").Run() })
	return ts
}

func (ts *tuiSession) tm(args ...string) string {
	out, err := exec.Command(ts.tmux, append([]string{"-L", ts.sock}, args...)...).CombinedOutput()
	if err != nil {
		ts.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (ts *tuiSession) screen() string { return ts.tm("capture-pane", "-p", "-t", "ui") }

// waitScreen waits up to timeout for the screen to satisfy ok.
func (ts *tuiSession) waitScreen(what string, timeout time.Duration, ok func(string) bool) string {
	ts.t.Helper()
	deadline := time.Now().Add(timeout)
	var s string
	for time.Now().Before(deadline) {
		if s = ts.screen(); ok(s) {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	ts.t.Fatalf("%s; the screen is:\n%s", what, s)
	return ""
}

func (ts *tuiSession) keys(k ...string) {
	ts.tm(append([]string{"send-keys", "-t", "ui"}, k...)...)
	time.Sleep(300 * time.Millisecond)
}

// quit presses q and checks that meshscope exits 0 and restores the terminal.
func (ts *tuiSession) quit() {
	ts.t.Helper()
	ts.keys("q")
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(ts.exitFile); err == nil {
			if code := strings.TrimSpace(string(b)); code != "0" {
				ts.t.Fatalf("meshscope exited %s", code)
			}
			if strings.Contains(ts.screen(), "meshscope │") {
				ts.t.Fatal("the UI is still on screen after q: the terminal was not restored")
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	ts.t.Fatalf("meshscope did not exit after q; the screen is:\n%s", ts.screen())
}

// TestTUIInTmux drives the built binary in a real terminal (tmux, 120×40) on
// the demo mesh, as a person would: the first screen shows the
// clusters; /hello + enter + enter opens helloworld with network2's gateway
// rewrite; → moves the focus to the other viewpoint's column; q exits 0 and
// leaves the alternate screen.
func TestTUIInTmux(t *testing.T) {
	ts := startTUI(t, "meshscope-e2e", 120, "demo")
	ts.waitScreen("the first screen should list the clusters", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "Clusters") && strings.Contains(s, "cluster1") && strings.Contains(s, "synced")
	})
	ts.keys("/")
	ts.keys("hello")
	ts.keys("Enter")
	ts.keys("Enter")
	s := ts.waitScreen("/hello should open helloworld with the gateway rewrite", 10*time.Second, func(s string) bool {
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
	ts.keys("Right")
	s = ts.waitScreen("→ should move the focus to the next viewpoint", 10*time.Second, func(s string) bool { f := focused(s); return f != "" && f != before })
	t.Logf("focus moved from %s to %s", before, focused(s))
	ts.quit()
}

// labTUI starts the UI on the lab's kubeconfig with the given contexts and
// waits until both clusters are synced and both streams up.
func labTUI(t *testing.T, sock string, width int, contexts string) *tuiSession {
	t.Helper()
	ts := startTUI(t, sock, width, "--kubeconfig", theLab.Kubeconfig, "--context", contexts)
	ts.waitScreen("both clusters synced and both streams up", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "2 of 2 synced") && strings.Contains(s, "xds 2/2 up")
	})
	return ts
}

// open searches services for query and opens the best match.
func (ts *tuiSession) open(query string) {
	ts.keys("/")
	ts.keys(query)
	ts.keys("Enter")
	ts.keys("Enter")
}

// TestTUIOnLab: the UI on the real lab with nothing but a kube context, as
// a user starts it: both clusters synced, one sidecar stream per network up
// through the port-forward to istiod, and helloworld's actual EDS (what the
// real istiod sent) matching the prediction from both viewpoints.
func TestTUIOnLab(t *testing.T) {
	ts := labTUI(t, "meshscope-e2e-lab", 140, "cluster1")
	ts.open("hello")
	s := ts.waitScreen("helloworld with both gateways, istiod's EDS matching the prediction from both viewpoints", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "helloworld.sample.svc.cluster.local") && strings.Contains(s, "192.168.60.9:15443") &&
			strings.Contains(s, "192.168.60.113:15443") && strings.Count(s, "verdict match") == 2
	})
	t.Logf("service view on the lab:\n%s", s)
	ts.quit()
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
	ts.open("hello")
	s := ts.waitScreen("helloworld with localities, shares, the split and the duplicate-gateway problem", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "locality region2/zone-b") && strings.Contains(s, "locality region2/zone-c") &&
			strings.Contains(s, "w1 50% (20%) unknown") && strings.Contains(s, "w2 0% (40%) dup unknown") &&
			strings.Contains(s, "split: network1 50% (istiod's weights mean 20%)") &&
			strings.Contains(s, "error duplicate-gateway: helloworld.sample port 5000: network2 gets 50 % of a network1 proxy's requests instead of 80 %") &&
			strings.Count(s, "verdict match") == 2
	})
	t.Logf("service view:\n%s", s)
	ts.keys("Enter") // the service's problems
	s = ts.waitScreen("the problems view on the duplicate-gateway row", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "Problems (") && strings.Contains(s, "duplicate-gateway") && strings.Contains(s, "Envoy keeps only the first") && strings.Contains(s, "gateway entries for 192.168.60.9:15443")
	})
	t.Logf("problems view:\n%s", s)
	ts.quit()
}

// TestTUIMissingRemoteSecretOnLab (issue #12 in the UI): multi-primary with
// cluster2's remote secret for cluster1 deleted. From both contexts, the
// problems view shows doctor's control-plane-missing-cluster row naming the
// secret, and the clusters view's control planes pane says cluster2's
// istiod reads only cluster2; with the secret back, both go.
func TestTUIMissingRemoteSecretOnLab(t *testing.T) {
	ts := labTUI(t, "meshscope-e2e-cp", 160, "cluster1,cluster2")
	ts.waitScreen("both primaries reading both clusters", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "its secrets: cluster1, cluster2") && strings.Contains(s, "its secrets: cluster2, cluster1") &&
			strings.Contains(s, "cluster2 istiod-local-cluster2")
	})
	restore := deleteRemoteSecret(t, "cluster2", "cluster1")
	s := ts.waitScreen("cluster2's istiod reading only cluster2", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "its secrets: cluster2 ")
	})
	t.Logf("clusters view:\n%s", s)
	ts.keys(":")
	ts.keys("problems")
	ts.keys("Enter")
	s = ts.waitScreen("the problems view with the missing remote secret", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "control-plane-missing-cluster") &&
			strings.Contains(s, "istiod cluster2 does not read cluster cluster1")
	})
	t.Logf("problems view:\n%s", s)
	restore()
	ts.waitScreen("the problem gone once the secret is back", 60*time.Second, func(s string) bool {
		return strings.Contains(s, "Problems (") && !strings.Contains(s, "control-plane-missing-cluster")
	})
	ts.keys(":")
	ts.keys("clusters")
	ts.keys("Enter")
	ts.waitScreen("cluster2's istiod reading both clusters again", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "its secrets: cluster2, cluster1")
	})
	ts.quit()
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// meshscopeBinary builds the meshscope binary once per test run.
func meshscopeBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		root, err := lab.FindRoot()
		if err != nil {
			binErr = err
			return
		}
		dir, err := os.MkdirTemp("", "meshscope-e2e-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "meshscope")
		build := exec.Command("go", "build", "-o", binPath, "./cmd/meshscope")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}
