// Command meshscope is a live terminal UI for diagnosing Istio multicluster,
// multi-network meshes. See README.md.
package main

import "os"

func main() {
	// Every command's errors and exit codes go through one contract
	// (exit.go): cobra prints nothing itself (SilenceErrors).
	os.Exit(exitStatus(os.Stderr, newRootCmd().Execute()))
}
