package screenshots

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestScreenshots drives `meshscope demo` in tmux (120×36, catppuccin-mocha)
// through each view and writes docs/screenshots/NAME.svg.
func TestScreenshots(t *testing.T) {
	if os.Getenv("MESHSCOPE_SCREENSHOTS") != "1" {
		t.Skip("set MESHSCOPE_SCREENSHOTS=1 (make screenshots) to render the docs' screenshots")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal("tmux is needed")
	}
	root, _ := filepath.Abs("../..")
	bin := filepath.Join(t.TempDir(), "meshscope")
	build := exec.Command("go", "build", "-o", bin, "./cmd/meshscope")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	const cols, rows = 120, 36
	sock := "meshscope-shots"
	tm := func(args ...string) string {
		out, err := exec.Command(tmux, append([]string{"-L", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	// In the repository's root: files are typed relative to it (:whatif).
	tm("new-session", "-d", "-s", "s", "-x", "120", "-y", "36", "-c", root, "-e", "COLORTERM=truecolor",
		bin+" demo --theme catppuccin-mocha --seed 1 --log-file "+filepath.Join(t.TempDir(), "log"))
	t.Cleanup(func() { _ = exec.Command(tmux, "-L", sock, "kill-server").Run() })
	keys := func(k ...string) {
		tm(append([]string{"send-keys", "-t", "s"}, k...)...)
		time.Sleep(400 * time.Millisecond)
	}
	shot := func(name, mustContain string) {
		deadline := time.Now().Add(8 * time.Second)
		var plain string
		for time.Now().Before(deadline) {
			if plain = tm("capture-pane", "-p", "-t", "s"); strings.Contains(plain, mustContain) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if !strings.Contains(plain, mustContain) {
			t.Fatalf("%s: %q not on screen:\n%s", name, mustContain, plain)
		}
		svg := ansiToSVG(tm("capture-pane", "-e", "-p", "-t", "s"), cols, rows, "#cdd6f4", "#1e1e2e")
		out := filepath.Join(root, "docs", "screenshots", name+".svg")
		if err := os.WriteFile(out, []byte(svg), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", out)
	}
	time.Sleep(2 * time.Second) // let the demo settle and the first pushes arrive
	shot("clusters", "synced")
	keys(":")
	keys("svc", "Enter")
	shot("services", "helloworld")
	keys("/")
	keys("hello")
	keys("Enter")
	keys("Enter")
	shot("service", "192.168.60.9:15443")
	keys("Escape")
	keys("Escape")
	keys("/")
	keys("reviews")
	keys("Enter")
	keys("Enter")
	shot("localities", "dup")
	keys("Escape")
	keys("Escape")
	keys(":")
	keys("problems", "Enter")
	shot("problems", "legacy-billing")
	keys(":")
	keys("events", "Enter")
	time.Sleep(2 * time.Second)
	shot("events", "eds")
	keys(":")
	keys("diff network1 network2", "Enter")
	shot("diff", "legacy-billing")
	keys("/")
	keys("legacy")
	keys("Enter")
	keys("Enter")
	shot("compare", "legacy-billing")
	keys(":")
	keys("pc network1", "Enter")
	shot("proxy-config", "CLUSTERS")
	// The fleet: bookinfo's and sample's proxies, the drifted one selected
	// (one STALE and one DISCONNECTED among them).
	keys(":")
	keys("proxies", "Enter")
	keys("/")
	keys("ns=bookinfo,sample")
	keys("Enter")
	for i := 0; i < 20 && !strings.Contains(tm("capture-pane", "-p", "-t", "s"), `injected with network ""`); i++ {
		keys("Down")
	}
	shot("proxies", "DISCONNECTED")
	keys(":")
	keys("map", "Enter")
	// The churn takes network2's gateway away now and then, and the streams
	// lag the snapshot for a moment: draw the map between such moments.
	for i := 0; i < 100; i++ {
		s := tm("capture-pane", "-p", "-t", "s")
		if strings.Contains(s, "192.168.60.9:15443") && !strings.Contains(s, "differs") && !strings.Contains(s, "disagrees") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	shot("map", "istiod cluster1")
	// A what-if laid over the mesh: the README's DestinationRule (tls
	// DISABLE on reviews), reviews' endpoints before → after.
	keys(":")
	keys("whatif docs/examples/what-if-plaintext-reviews.yaml", "Enter")
	keys(":")
	keys("svc", "Enter")
	keys("d")
	keys("Enter")
	shot("what-if", "LOSES EVERY REMOTE ENDPOINT")
	keys("q")
}
