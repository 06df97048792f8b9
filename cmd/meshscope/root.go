package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
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
			if err := setupLogging(opts.LogFile); err != nil {
				return err
			}
			// client-go logs through klog, which writes to stderr — over
			// the terminal UI (a port-forward that cannot reach istiod
			// says so every few seconds). Its lines go where slog's go.
			klog.SetSlogLogger(slog.Default())
			return nil
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
// nothing may write over the terminal UI.
func setupLogging(path string) error {
	if path == "" || path == "-" {
		slog.SetDefault(slog.New(slog.DiscardHandler))
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("log file: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("log file: %w", err)
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug})))
	return nil
}
