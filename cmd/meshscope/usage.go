package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// usageError is bad input (exit 2) that shows how the command is used: the
// problem, the usage line, the command's first example, and where its
// help is — not cobra's "accepts 1 arg(s), received 0".
func usageError(c *cobra.Command, problem string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nUsage:   %s", problem, c.UseLine())
	if ex := firstExample(c.Example); ex != "" {
		fmt.Fprintf(&b, "\nExample: %s", ex)
	}
	fmt.Fprintf(&b, "\n(%s --help says more)", c.CommandPath())
	return badInput(fmt.Errorf("%s", b.String()))
}

// firstExample is the first line of an Example text, unindented.
func firstExample(ex string) string {
	for _, l := range strings.Split(ex, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return strings.TrimSuffix(l, " \\")
		}
	}
	return ""
}

// exactArgs is the Args of a command that takes names, e.g. "SERVICE": a
// missing or extra argument is a usage error.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		switch {
		case len(args) < len(names):
			return usageError(c, fmt.Sprintf("%s: missing %s", c.Name(), strings.Join(names[len(args):], " ")))
		case len(args) > len(names):
			return usageError(c, fmt.Sprintf("%s: unexpected argument %q (it takes %s)", c.Name(), args[len(names)], strings.Join(names, " ")))
		}
		return nil
	}
}

// noArgs is the Args of a command that takes no argument; for the root
// command, an argument is a command it does not know.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if !c.HasParent() {
		problem := fmt.Sprintf("unknown command %q", args[0])
		if c.SuggestionsMinimumDistance <= 0 {
			c.SuggestionsMinimumDistance = 2 // cobra's own default, set where it suggests
		}
		if s := c.SuggestionsFor(args[0]); len(s) > 0 {
			problem += "; did you mean " + strings.Join(s, " or ") + "?"
		}
		return usageError(c, problem)
	}
	return usageError(c, fmt.Sprintf("%s: unexpected argument %q (it takes none; flags start with --)", c.Name(), args[0]))
}

// flagError makes cobra's flag errors (unknown flag, bad value) usage
// errors; every command inherits it from the root.
func flagError(c *cobra.Command, err error) error {
	return usageError(c, c.Name()+": "+err.Error())
}
