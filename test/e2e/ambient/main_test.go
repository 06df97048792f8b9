// Package ambient holds the end-to-end tests of ambient mode against a lab
// of its own: both istiods in ambient multi-network mode (lab Config.Ambient).
//
// It is a lab apart from test/e2e's because ambient mode changes what
// istiod does for everyone (Gateway API CRDs and Gateways, ambient
// namespaces, ConfigMap istio instead of a mesh file, workloads pushed on
// every pod change), and the sidecar tests hold exact pushes and istiod
// views. Its ports are the e2e offset plus 50, so it never meets a lab
// shifted by a multiple of 100; `make e2e` runs the two packages one after
// the other (-p 1), never two labs at once.
package ambient

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/meshscope/meshscope/lab"
)

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
		fmt.Fprintln(os.Stderr, "e2e ambient:", err)
		return 1
	}
	offset, err := lab.PortOffset("MESHSCOPE_E2E_PORT_OFFSET", 100)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e ambient:", err)
		return 1
	}
	cfg := lab.DefaultConfig(root).Shifted(offset + 50)
	cfg.Dir = filepath.Join(root, ".lab", "e2e-ambient")
	cfg.Ambient = true
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	l, err := lab.Start(ctx, cfg, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e ambient: lab:", err)
		return 1
	}
	theLab = l
	defer func() {
		if err := l.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e ambient: lab stop:", err)
		}
	}()
	return m.Run()
}
