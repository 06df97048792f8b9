// Package e2eutil holds what both end-to-end packages (test/e2e and
// test/e2e/ambient) need to drive the meshscope binary as a user does: the
// binary, built once per test run, and the terminal UI in a real terminal
// (tmux).
package e2eutil

import (
	"context"
	"errors"
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

// LabDNS gives the istiods of l the lab's DNS as their resolver
// (Lab.EnableDNS: it restarts them) until the test ends, and skips the
// test where the machine cannot (lab.ErrNoDNSNamespace).
func LabDNS(t *testing.T, l *lab.Lab) {
	t.Helper()
	ctx := context.Background()
	if err := l.EnableDNS(ctx); err != nil {
		if errors.Is(err, lab.ErrNoDNSNamespace) {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.DisableDNS(ctx); err != nil {
			t.Errorf("lab DNS off: %v", err)
		}
	})
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// Binary builds the meshscope binary once per test run and returns its path.
func Binary(t *testing.T) string {
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

// TUI is the meshscope binary running in a real terminal (tmux).
type TUI struct {
	t        *testing.T
	tmux     string
	sock     string
	exitFile string
}

// StartTUI runs meshscope with args in a tmux session of width×40 until
// the test ends. sock names the tmux server; the e2e port offset is added
// to it, since several working trees run these tests side by side.
func StartTUI(t *testing.T, sock string, width int, args ...string) *TUI {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal("tmux is needed for this test (.ci/run installs it: apt-get install tmux)")
	}
	if offset, err := lab.PortOffset("MESHSCOPE_E2E_PORT_OFFSET", 100); err == nil {
		sock = fmt.Sprintf("%s-%d", sock, offset)
	}
	dir := t.TempDir()
	ts := &TUI{t: t, tmux: tmux, sock: sock, exitFile: filepath.Join(dir, "exit")}
	script := Binary(t) + " " + strings.Join(args, " ") + " --log-file " + filepath.Join(dir, "log") + "; echo $? > " + ts.exitFile + "; sleep 60"
	ts.tm("new-session", "-d", "-s", "ui", "-x", fmt.Sprint(width), "-y", "40", "sh", "-c", script)
	t.Cleanup(func() { _ = exec.Command(tmux, "-L", sock, "kill-server").Run() })
	return ts
}

func (ts *TUI) tm(args ...string) string {
	out, err := exec.Command(ts.tmux, append([]string{"-L", ts.sock}, args...)...).CombinedOutput()
	if err != nil {
		ts.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// Screen is what the terminal shows now.
func (ts *TUI) Screen() string { return ts.tm("capture-pane", "-p", "-t", "ui") }

// WaitScreen waits up to timeout for the screen to satisfy ok.
func (ts *TUI) WaitScreen(what string, timeout time.Duration, ok func(string) bool) string {
	ts.t.Helper()
	deadline := time.Now().Add(timeout)
	var s string
	for time.Now().Before(deadline) {
		if s = ts.Screen(); ok(s) {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	ts.t.Fatalf("%s; the screen is:\n%s", what, s)
	return ""
}

// Keys types keys (tmux key names or text).
func (ts *TUI) Keys(k ...string) {
	ts.tm(append([]string{"send-keys", "-t", "ui"}, k...)...)
	time.Sleep(300 * time.Millisecond)
}

// Open searches services for query and opens the best match.
func (ts *TUI) Open(query string) {
	ts.Keys("/")
	ts.Keys(query)
	ts.Keys("Enter")
	ts.Keys("Enter")
}

// Resize sets the terminal's size.
func (ts *TUI) Resize(width, height int) {
	ts.tm("resize-window", "-t", "ui", "-x", fmt.Sprint(width), "-y", fmt.Sprint(height))
}

// Quit presses q and checks that meshscope exits 0 and restores the terminal.
func (ts *TUI) Quit() {
	ts.t.Helper()
	ts.Keys("q")
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(ts.exitFile); err == nil {
			if code := strings.TrimSpace(string(b)); code != "0" {
				ts.t.Fatalf("meshscope exited %s", code)
			}
			if strings.Contains(ts.Screen(), "meshscope │") {
				ts.t.Fatal("the UI is still on screen after q: the terminal was not restored")
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	ts.t.Fatalf("meshscope did not exit after q; the screen is:\n%s", ts.Screen())
}
