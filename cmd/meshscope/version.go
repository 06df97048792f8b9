package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version and commit are set at build time by the Makefile through -ldflags;
// when not set (go install, go run) they come from the module build info.
var (
	version = ""
	commit  = ""
)

func init() { subcommands = append(subcommands, newVersionCmd) }

func newVersionCmd(*globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print meshscope's version, commit and Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, c := buildVersion()
			fmt.Fprintf(cmd.OutOrStdout(), "meshscope %s\ncommit: %s\ngo: %s %s/%s\n", v, c, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}

func buildVersion() (v, c string) {
	v, c = version, commit
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" && info.Main.Version != "" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && c == "" {
				c = s.Value
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	if c == "" {
		c = "unknown"
	}
	return v, c
}
