package model_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestReadersLinkNoMachinery: the folders say which way data flows
// (docs/architecture.md): sources → collector → model → analysis → tui / cmd.
// The model, every package under analysis/ and the UI link neither client-go
// nor the machinery that fills the model: the collector (its watchers
// included) and the sessions that reach istiod (session/). A new package in
// one of those folders is held to the rule without being listed here.
func TestReadersLinkNoMachinery(t *testing.T) {
	if testing.Short() {
		t.Skip("go list over the module")
	}
	const mod = "github.com/meshscope/meshscope/"
	readers := []string{"../model/...", "../analysis/...", "../tui/..."}
	out, err := exec.Command("go", append([]string{"list", "-deps", "-f", "{{.ImportPath}} {{join .Deps \",\"}}"}, readers...)...).Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	machinery := func(path string) bool {
		if strings.HasPrefix(path, "k8s.io/client-go") {
			return true
		}
		rest, ok := strings.CutPrefix(path, mod)
		if !ok {
			return false
		}
		top, _, _ := strings.Cut(rest, "/")
		return top == "collector" || top == "session"
	}
	reader := func(path string) bool {
		rest, ok := strings.CutPrefix(path, mod)
		if !ok {
			return false
		}
		top, _, _ := strings.Cut(rest, "/")
		return top == "model" || top == "analysis" || top == "tui"
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, deps, _ := strings.Cut(line, " ")
		if !reader(path) {
			continue
		}
		checked++
		for _, d := range strings.Split(deps, ",") {
			if machinery(d) {
				t.Errorf("%s links %s", path, d)
				break
			}
		}
	}
	if checked < 8 {
		t.Fatalf("only %d reader packages listed: the folders moved?", checked)
	}
}
