package model_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestReadersLinkNoMachinery: the model and its readers — the
// predictions, the diagnosis, the fleet, the map, the what-if comparison
// and the UI — link neither client-go nor the collector that fills the
// model, its watchers included (docs/architecture.md: data flows one way).
func TestReadersLinkNoMachinery(t *testing.T) {
	if testing.Short() {
		t.Skip("go list over the module")
	}
	pkgs := []string{"../model", "../collector/horizon", "../collector/ambient", "../collector/explain", "../collector/fleet",
		"../collector/meshmap", "../collector/whatif", "../tui"}
	out, err := exec.Command("go", append([]string{"list", "-deps", "-f", "{{.ImportPath}} {{join .Deps \",\"}}"}, pkgs...)...).Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	// The machinery: the Registry, its watchers, istiod's debug views and
	// the live session.
	machinery := map[string]bool{}
	for _, p := range []string{"collector", "collector/watch", "collector/istiod", "collector/live"} {
		machinery["github.com/meshscope/meshscope/"+p] = true
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, deps, _ := strings.Cut(line, " ")
		if !strings.HasPrefix(path, "github.com/meshscope/meshscope/") {
			continue
		}
		for _, d := range strings.Split(deps, ",") {
			if strings.HasPrefix(d, "k8s.io/client-go") || machinery[d] {
				t.Errorf("%s links %s", path, d)
				break
			}
		}
	}
}
