package tui

import (
	"context"
	"errors"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/meshscope/meshscope/analysis/whatif"
)

// Options configure the UI.
type Options struct {
	// Theme is a theme name or file (see themes.Load); "" is the default
	// theme, which follows the terminal's background.
	Theme string
	// Contexts are the kube contexts given on the command line, for the
	// status bar.
	Contexts []string
	// WhatIf answers ":whatif" on the mesh the feed reads (live.WhatIf on
	// the session's Registry); nil: the command says it cannot.
	WhatIf func(whatif.Request) (*whatif.Report, error)
	// Fix builds and proves a problem's fix on that mesh (live.Fix); nil:
	// the problems view shows the plan unproven.
	Fix fixFunc

	// now replaces the clock in tests.
	now func() time.Time
}

// Run runs the terminal UI until the user quits or ctx is cancelled (which
// is not an error). It draws the first frame at once, before any snapshot,
// takes the alternate screen with mouse cell motion, and restores the
// terminal on exit.
func Run(ctx context.Context, feed Feed, opts Options) error {
	m, err := New(feed, opts)
	if err != nil {
		return err
	}
	p := tea.NewProgram(m, tea.WithContext(ctx))
	_, err = p.Run()
	if err != nil && errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}
