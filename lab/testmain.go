package lab

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// RunTests is the TestMain of an end-to-end test package: unless
// MESHSCOPE_E2E=1 it skips them all; otherwise it starts the lab that
// configure describes (given the repository root and the port offset of
// $MESHSCOPE_E2E_PORT_OFFSET, default 100), hands it to started, runs the
// tests and stops the lab, pass or fail. It returns the exit code.
func RunTests(m *testing.M, configure func(root string, offset int) Config, started func(*Lab)) int {
	if os.Getenv("MESHSCOPE_E2E") != "1" {
		fmt.Println("e2e: skipped (set MESHSCOPE_E2E=1, or run make e2e)")
		return 0
	}
	root, err := FindRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	offset, err := PortOffset("MESHSCOPE_E2E_PORT_OFFSET", 100)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	l, err := Start(ctx, configure(root, offset), os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: lab:", err)
		return 1
	}
	started(l)
	defer func() {
		if err := l.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: lab stop:", err)
		}
	}()
	return m.Run()
}

// Eventually calls check until it returns "" or timeout passes, then fails
// the test with check's last answer.
func Eventually(t testing.TB, timeout time.Duration, check func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		if last = check(); last == "" {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("after %s: %s", timeout, last)
}
