package main

import (
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"
)

// subcommands is filled by init functions in the files that define each
// command, so adding a command touches only its own file.
var subcommands []func(*globalOptions) *cobra.Command

func newRootCmd() *cobra.Command {
	opts := &globalOptions{}
	mo := &meshOptions{}
	root := &cobra.Command{
		Use:   "meshscope",
		Short: "Live terminal UI for diagnosing Istio multicluster, multi-network meshes",
		Long: `meshscope shows how istiod sees a multicluster Istio mesh — clusters, remote
secrets, networks, east-west gateways — and what endpoints a proxy in any
network really receives, with the reason for every split-horizon rewrite.

With no subcommand it opens the terminal UI on the given contexts.
Try it without a cluster: meshscope demo`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return setupLogging(opts.LogFile)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTUI(cmd, opts, mo)
		},
	}
	opts.addFlags(root.PersistentFlags())
	mo.addFlags(root.Flags())
	mo.addIstiodFlag(root.Flags())
	for _, mk := range subcommands {
		root.AddCommand(mk(opts))
	}
	return root
}

// setupLogging sends slog (and so every package's logs) to the log file:
// nothing may write over the terminal UI. The file is private (0600) and
// bounded (see logFile).
func setupLogging(path string) error {
	if currentLog != nil {
		currentLog.Close()
		currentLog = nil
	}
	if path == "" || path == "-" {
		slog.SetDefault(slog.New(slog.DiscardHandler))
		return nil
	}
	f, err := openLogFile(path, maxLogSize, path == defaultLogFile())
	if err != nil {
		return fmt.Errorf("log file: %w", err)
	}
	currentLog = f
	slog.SetDefault(slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug})))
	return nil
}

// currentLog is the log file setupLogging opened last (a test may run several
// commands in one process).
var currentLog *logFile
