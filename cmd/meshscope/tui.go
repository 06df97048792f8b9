package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// runTUI opens the terminal UI. The UI itself is issue #6; until it lands the
// root command says so plainly instead of pretending.
func runTUI(cmd *cobra.Command, opts *globalOptions) error {
	return fmt.Errorf("the terminal UI is not built yet; use a subcommand (see meshscope --help)")
}
