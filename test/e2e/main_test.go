// Package e2e holds meshscope's end-to-end tests against the real lab: real
// etcd, kube-apiservers and istiod on loopback (see lab/). They run with
// MESHSCOPE_E2E=1 (make e2e); a plain go test ./... skips them.
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/meshscope/meshscope/lab"
)

// theLab is started once for the package and stopped after the run, pass or
// fail. Tests that mutate it undo their mutations.
var theLab *lab.Lab

func TestMain(m *testing.M) {
	if os.Getenv("MESHSCOPE_E2E") != "1" {
		fmt.Println("e2e: skipped (set MESHSCOPE_E2E=1, or run make e2e)")
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	root, err := lab.FindRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	cfg, err := e2eConfig(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	l, err := lab.Start(ctx, cfg, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: lab:", err)
		return 1
	}
	theLab = l
	defer func() {
		if err := l.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: lab stop:", err)
		}
	}()
	return m.Run()
}

// e2eConfig is the default lab on ports shifted by 100 (or by
// $MESHSCOPE_E2E_PORT_OFFSET), in its own folder, so the tests can run while
// a developer's `make lab` (or another working tree's e2e run) is up.
func e2eConfig(root string) (lab.Config, error) {
	offset, err := lab.PortOffset("MESHSCOPE_E2E_PORT_OFFSET", 100)
	if err != nil {
		return lab.Config{}, err
	}
	cfg := lab.DefaultConfig(root).Shifted(offset)
	cfg.Dir = filepath.Join(root, ".lab", "e2e")
	// Multi-primary: istiod for cluster1 and one for cluster2, each reading
	// the other cluster through a remote secret (comparing control planes).
	cfg.MultiPrimary = true
	return cfg, nil
}
