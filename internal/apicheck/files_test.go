package apicheck

import (
	"os/exec"
	"strings"
	"testing"
)

// goFiles are the module's Go files as git tracks them (paths from the top
// of the checkout) and that top; the test is skipped outside a checkout.
func goFiles(t *testing.T) (root string, files []string) {
	t.Helper()
	out, err := exec.Command("git", "ls-files", "--full-name", ":/*.go").Output()
	if err != nil {
		t.Skipf("git ls-files: %v", err)
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("git rev-parse: %v", err)
	}
	return strings.TrimSpace(string(top)), strings.Fields(string(out))
}
