package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
)

// subcommands is filled by init functions in the files that define each
// command, so adding a command touches only its own file.
var subcommands []func(*globalOptions) *cobra.Command

func newRootCmd() *cobra.Command { return newRootCmdAs(displayName(os.Args[0])) }

// newRootCmdAs builds the command tree as invoked by name: "meshscope", or
// "kubectl meshscope" when the binary runs as a kubectl plugin.
func newRootCmdAs(name string) *cobra.Command {
	opts := &globalOptions{}
	mo := &meshOptions{}
	root := &cobra.Command{
		Use:   "meshscope",
		Short: "Live terminal UI for diagnosing Istio multicluster, multi-network meshes",
		Long: `meshscope shows how istiod sees a multicluster Istio mesh — clusters, remote
secrets, networks, east-west gateways — and what endpoints a proxy in any
network really receives, with the reason for every split-horizon rewrite.

With no subcommand it opens the terminal UI on the given contexts. It only
reads (get/list/watch) and never prints a secret.

Try it without a cluster:

  meshscope demo

Installed as kubectl-meshscope on PATH (or through krew), it is the kubectl
plugin "kubectl meshscope", with the same commands and flags.` + exitHelp("never: the UI shows what is wrong, it does not judge"),
		Example: `  meshscope demo
  meshscope --context cluster1
  meshscope --context cluster1,cluster2 --xds-address 127.0.0.1:15010
  meshscope explain helloworld.sample
  meshscope doctor --context cluster1
  meshscope completion bash > ~/.local/share/bash-completion/completions/meshscope`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          noArgs,
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
	root.SetFlagErrorFunc(flagError)
	opts.addFlags(root.PersistentFlags())
	mo.addFlags(root.Flags())
	mo.addIstiodFlag(root.Flags())
	for _, mk := range subcommands {
		root.AddCommand(mk(opts))
	}
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	describeCompletion(root)
	if name != root.Name() {
		// cobra prints usage lines and completion scripts under the display
		// name; the examples are rewritten to match.
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: name}
		renameExamples(root, name)
	}
	return root
}

// displayName is how the user invoked meshscope: kubectl runs a plugin by
// its path, .../kubectl-meshscope (krew installs a link of that name), and
// its help should then read "kubectl meshscope ...".
func displayName(argv0 string) string {
	base := strings.TrimSuffix(filepath.Base(argv0), ".exe")
	if base == "kubectl-meshscope" {
		return "kubectl meshscope"
	}
	return "meshscope"
}

// commandLine matches an example line that runs meshscope.
var commandLine = regexp.MustCompile(`(?m)^(\s*)meshscope\b`)

// renameExamples makes every example and every command line of a Long
// text (an indented line starting with "meshscope") use name.
func renameExamples(c *cobra.Command, name string) {
	c.Example = commandLine.ReplaceAllString(c.Example, "${1}"+name)
	c.Long = commandLine.ReplaceAllString(c.Long, "${1}"+name)
	for _, sub := range c.Commands() {
		renameExamples(sub, name)
	}
}

// describeCompletion gives cobra's completion commands examples, including
// the kubectl plugin's completion helper.
func describeCompletion(root *cobra.Command) {
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		c.Example = `  meshscope completion bash > ~/.local/share/bash-completion/completions/meshscope
  meshscope completion zsh > "${fpath[1]}/_meshscope"
  meshscope completion fish > ~/.config/fish/completions/meshscope.fish

  # as a kubectl plugin (kubectl 1.26 or later completes plugin arguments
  # through an executable named kubectl_complete-meshscope on PATH):
  printf '#!/bin/sh\nexec kubectl-meshscope __complete "$@"\n' > ~/.local/bin/kubectl_complete-meshscope
  chmod +x ~/.local/bin/kubectl_complete-meshscope`
		for _, sh := range c.Commands() {
			switch sh.Name() {
			case "bash":
				sh.Example = `  source <(meshscope completion bash)
  meshscope completion bash > ~/.local/share/bash-completion/completions/meshscope`
			case "zsh":
				sh.Example = `  source <(meshscope completion zsh)
  meshscope completion zsh > "${fpath[1]}/_meshscope"`
			case "fish":
				sh.Example = `  meshscope completion fish | source
  meshscope completion fish > ~/.config/fish/completions/meshscope.fish`
			case "powershell":
				sh.Example = `  meshscope completion powershell | Out-String | Invoke-Expression`
			}
		}
	}
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
