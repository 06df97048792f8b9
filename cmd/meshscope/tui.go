package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/meshscope/meshscope/analysis/fix"
	"github.com/meshscope/meshscope/analysis/whatif"
	"github.com/meshscope/meshscope/model"
	"github.com/meshscope/meshscope/session/live"
	"github.com/meshscope/meshscope/tui"
	"github.com/meshscope/meshscope/xdsclient"
)

// The live feed serves everything the UI asks for, optional parts included.
var (
	_ tui.Feed        = (*live.Feed)(nil)
	_ tui.ConfigFeed  = (*live.Feed)(nil)
	_ tui.IstiodFeed  = (*live.Feed)(nil)
	_ tui.AmbientFeed = (*live.Feed)(nil)
	_ tui.FleetFeed   = (*live.Feed)(nil)
	_ tui.GatewayFeed = (*live.Feed)(nil)
)

// runTUI opens the terminal UI on the mesh (the demo mesh with --demo). The
// UI draws at once; clusters and streams fill in as they sync.
func runTUI(cmd *cobra.Command, g *globalOptions, o *meshOptions) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m, err := openMesh(ctx, g, o, true)
	if err != nil {
		return err
	}
	feed := m.Feed(ctx, xdsclient.ModeDelta)
	err = tui.Run(ctx, feed, tuiOptions(g, m))
	closeWithin(quitGrace, func() { feed.Close(); m.Close() })
	return err
}

// tuiOptions are the UI's options on a session: :whatif answers, and the
// problems view's fixes are built and proven, on the session's own
// Registry, as the what-if command and doctor --fix do (the changes stay
// in memory; nothing is written to a cluster).
func tuiOptions(g *globalOptions, m *live.Session) tui.Options {
	return tui.Options{Theme: g.Theme, Contexts: g.Contexts,
		WhatIf: func(req whatif.Request) (*whatif.Report, error) { return live.WhatIf(m.Registry(), req) },
		Fix: func(p model.Problem) fix.Fix {
			// The objects' reads are bounded: a cluster that does not
			// answer makes the fix say so, not the UI wait.
			ctx, cancel := context.WithTimeout(context.Background(), fixReadTimeout)
			defer cancel()
			reg := m.Registry()
			return live.Fix(ctx, reg, reg.Snapshot(), p)
		}}
}

// fixReadTimeout bounds the reads of one fix's objects in the UI.
const fixReadTimeout = 20 * time.Second

// quitGrace bounds the teardown after the UI has quit: the streams, the
// informers and the port-forwards stop in the background, and a user who
// pressed q does not wait on a loaded machine or a port-forward still
// dialling (the e2e fault matrix once waited over 5 s).
const quitGrace = 2 * time.Second

// closeWithin runs stop, and returns when it is done or after d; what is
// still stopping then ends with the process (meshscope holds nothing that
// must be flushed: it never writes to a cluster).
func closeWithin(d time.Duration, stop func()) {
	done := make(chan struct{})
	go func() { stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		slog.Warn("teardown still running after the UI quit; exiting anyway", "after", d)
	}
}
