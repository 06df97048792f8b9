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
	"os"
	"path/filepath"
	"testing"

	"github.com/meshscope/meshscope/lab"
)

var theLab *lab.Lab

func TestMain(m *testing.M) {
	os.Exit(lab.RunTests(m, func(root string, offset int) lab.Config {
		cfg := lab.DefaultConfig(root).Shifted(offset + 50)
		cfg.Dir = filepath.Join(root, ".lab", "e2e-ambient")
		cfg.Ambient = true
		return cfg
	}, func(l *lab.Lab) { theLab = l }))
}
