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

// TestTUIInTmux drives the built binary in a real terminal (tmux, 120×40) on
// the demo mesh, as a person would (issue #6): the first screen shows the
// clusters; /hello + enter + enter opens helloworld with network2's gateway
// rewrite; → moves the focus to the other viewpoint's column; q exits 0 and
// leaves the alternate screen.
func TestTUIInTmux(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal("tmux is needed for this test (.ci/run installs it: apt-get install tmux)")
	}
	bin := meshscopeBinary(t)
	dir := t.TempDir()
	sock := "meshscope-e2e"
	tm := func(args ...string) string {
		out, err := exec.Command(tmux, append([]string{"-L", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	exitFile := filepath.Join(dir, "exit")
	script := bin + " demo --log-file " + filepath.Join(dir, "log") + "; echo $? > " + exitFile + "; sleep 60"
	tm("new-session", "-d", "-s", "ui", "-x", "120", "-y", "40", "sh", "-c", script)
	t.Cleanup(func() { _ = exec.Command(tmux, "-L", sock, "kill-server").Run() })
	screen := func() string { return tm("capture-pane", "-p", "-t", "ui") }
	waitScreen := func(what string, ok func(string) bool) string {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		var s string
		for time.Now().Before(deadline) {
			if s = screen(); ok(s) {
				return s
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("%s; the screen is:\n%s", what, s)
		return ""
	}
	keys := func(k ...string) {
		tm(append([]string{"send-keys", "-t", "ui"}, k...)...)
		time.Sleep(300 * time.Millisecond)
	}

	waitScreen("the first screen should list the clusters", func(s string) bool {
		return strings.Contains(s, "Clusters") && strings.Contains(s, "cluster1") && strings.Contains(s, "synced")
	})
	keys("/")
	keys("hello")
	keys("Enter")
	keys("Enter")
	s := waitScreen("/hello should open helloworld with the gateway rewrite", func(s string) bool {
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
	keys("Right")
	s = waitScreen("→ should move the focus to the next viewpoint", func(s string) bool { f := focused(s); return f != "" && f != before })
	t.Logf("focus moved from %s to %s", before, focused(s))
	keys("q")
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(exitFile); err == nil {
			if code := strings.TrimSpace(string(b)); code != "0" {
				t.Fatalf("meshscope exited %s", code)
			}
			if strings.Contains(screen(), "meshscope │") {
				t.Fatal("the UI is still on screen after q: the terminal was not restored")
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("meshscope did not exit after q; the screen is:\n%s", screen())
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
