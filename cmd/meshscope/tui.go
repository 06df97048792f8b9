package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/meshscope/meshscope/collector/live"
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
	defer m.Close()
	feed := m.Feed(ctx, xdsclient.ModeDelta)
	defer feed.Close()
	return tui.Run(ctx, feed, tui.Options{Theme: g.Theme, Contexts: g.Contexts})
}
