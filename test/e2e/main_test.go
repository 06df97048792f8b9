// Package e2e holds meshscope's end-to-end tests against the real lab: real
// etcd, kube-apiservers and istiod on loopback (see lab/). They run with
// MESHSCOPE_E2E=1 (make e2e); a plain go test ./... skips them.
package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/meshscope/meshscope/lab"
)

// theLab is started once for the package and stopped after the run, pass or
// fail. Tests that mutate it undo their mutations.
var theLab *lab.Lab

func TestMain(m *testing.M) {
	os.Exit(lab.RunTests(m, e2eConfig, func(l *lab.Lab) { theLab = l }))
}

// e2eConfig is the default lab on ports shifted by 100 (or by
// $MESHSCOPE_E2E_PORT_OFFSET), in its own folder, so the tests can run while
// a developer's `make lab` (or another working tree's e2e run) is up.
func e2eConfig(root string, offset int) lab.Config {
	cfg := lab.DefaultConfig(root).Shifted(offset)
	cfg.Dir = filepath.Join(root, ".lab", "e2e")
	// Multi-primary: istiod for cluster1 and one for cluster2, each reading
	// the other cluster through a remote secret (comparing control planes).
	cfg.MultiPrimary = true
	return cfg
}
