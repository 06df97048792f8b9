// Package uiprobe lets meshscope's own benchmarks watch the terminal UI's
// model at work without changing what it does: package tui calls the hooks
// set here — none, in the product — right after its Update applied a batch
// of xDS events to the views, and right after it made a newly derived
// index (the services' rows and verdicts) current. The end-to-end
// benchmark (lab/cmd/meshscope-bench-e2e) measures push-to-screen delay
// and the time until every service's verdict is known with them. The
// package is internal: nothing outside this module can set a hook.
package uiprobe

import (
	"sync/atomic"

	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/xdsclient"
)

// Hooks are called from the UI's update loop: they must return at once.
type Hooks struct {
	// EventsApplied hears each batch of xDS events once the model has
	// applied it (timeline and views refreshed).
	EventsApplied func(events []xdsclient.Event)
	// IndexApplied hears of each new index once it is current: the
	// snapshot it was derived from, how many services it lists and how
	// many of them have a verdict (match or mismatch, not pending). The
	// snapshot lets a caller tell an index of the complete mesh from one
	// of a partial snapshot that happened to have every verdict too.
	IndexApplied func(snap *model.Snapshot, services, verdictsKnown int)
}

var current atomic.Pointer[Hooks]

// Set installs h (nil removes the hooks) and returns a function that puts
// back what was there before.
func Set(h *Hooks) (restore func()) {
	old := current.Swap(h)
	return func() { current.Store(old) }
}

// Get is the hooks installed, or nil.
func Get() *Hooks { return current.Load() }
