// Package leakcheck holds the module's goroutine leak check (issue 36): a
// package whose tests start goroutines runs them through Main from its
// TestMain, and the test binary fails if any goroutine is still running
// once every test has returned. Every component stops and waits for the
// goroutines it starts; the only goroutines let through are the libraries'
// own that no caller can stop, listed here once, each with why. Tests
// import it; the product does not.
package leakcheck

import (
	"testing"

	"go.uber.org/goleak"
)

// ignored are the libraries' goroutines that no caller can stop.
var ignored = []goleak.Option{
	// teatest's test model waits for a SIGINT for the life of the
	// process: it has no stop.
	goleak.IgnoreTopFunction("github.com/charmbracelet/x/exp/teatest/v2.NewTestModel.func2"),
	// Bubble Tea does not cancel a command still running when its
	// program ends: a tea.Tick's returns when its timer fires (the TUI
	// ticks every second), and the batch that started it waits for it.
	// The TUI's own commands (waits on the feed) end when the feed is
	// closed and are checked: only the waiting batch frame is let go.
	goleak.IgnoreTopFunction("charm.land/bubbletea/v2.Tick.func1"),
	goleak.IgnoreAnyFunction("charm.land/bubbletea/v2.(*Program).execBatchMsg"),
}

// Main runs the package's tests and then fails the binary if a goroutine
// other than the ignored ones is left (goleak retries for about half a
// second, so a goroutine on its way out after its component was stopped
// and waited for is no false alarm).
func Main(m *testing.M) {
	goleak.VerifyTestMain(m, ignored...)
}
