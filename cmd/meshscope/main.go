// Command meshscope is a live terminal UI for diagnosing Istio multicluster,
// multi-network meshes. See README.md.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		// cobra has already printed "Error: ..." with SilenceErrors off for
		// usage errors; commands return errExit to set a code silently.
		if code, msg, ok := exitCode(err); ok {
			if msg != "" {
				fmt.Fprintln(os.Stderr, "meshscope:", msg)
			}
			os.Exit(code)
		}
		fmt.Fprintln(os.Stderr, "meshscope:", err)
		os.Exit(1)
	}
}
