package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/meshscope/meshscope/model"
)

// The exit-code contract, the same for every command (README "Exit
// codes"; exitHelp says it in each command's help). This file owns it:
// commands say what they found (outcome) and what they could not read, or
// return badInput; exitStatus turns that into the code.
const (
	// exitOK: everything asked for was read and nothing fails the
	// command's rule.
	exitOK = 0
	// exitFinding: the command's finding — doctor's error-level problems,
	// a view explain finds differing, a what-if that fails --fail-on.
	exitFinding = 1
	// exitBadInput: a flag, argument, file or viewpoint that does not
	// parse or names nothing.
	exitBadInput = 2
	// exitIncomplete: some cluster, istiod or stream meshscope needed
	// could not be read or did not sync in time, so the answer is partial.
	// It wins over exitFinding: a finding made on a partial read may be
	// the read's doing (a view differs because a cluster is missing), so
	// a pipeline must not take it for the mesh's own; both are said.
	exitIncomplete = 3
	// exitInterrupted: Ctrl-C before the answer (128+SIGINT, as shells
	// report it). watch, which runs until interrupted, exits 0 or 3.
	exitInterrupted = 130
)

// exitError carries a process exit code out of a command, with the
// message to print (err nil: nothing more is printed; the output already
// says it).
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string {
	if e.err != nil {
		return e.err.Error()
	}
	return fmt.Sprintf("exit status %d", e.code)
}

func (e exitError) Unwrap() error { return e.err }

// badInput marks err as bad input (exit 2): meshscope prints it and exits.
func badInput(err error) error {
	if err == nil {
		return nil
	}
	var e exitError
	if errors.As(err, &e) {
		return err // already classified
	}
	return exitError{code: exitBadInput, err: err}
}

// errInterrupted is returned when Ctrl-C ends a command before its answer.
var errInterrupted = errors.New("interrupted")

// exitStatus prints what err says (if anything) to w and returns the
// process's exit code. An error no command classified is an answer that
// could not be finished: exit 3, as incomplete.
func exitStatus(w io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	var e exitError
	switch {
	case errors.As(err, &e):
		if e.err != nil {
			fmt.Fprintln(w, "meshscope:", e.err)
		}
		return e.code
	case errors.Is(err, errInterrupted), errors.Is(err, context.Canceled):
		fmt.Fprintln(w, "meshscope: interrupted")
		return exitInterrupted
	}
	fmt.Fprintln(w, "meshscope:", err)
	return exitIncomplete
}

// outcome is a command's answer as the contract sees it: what it found
// (a short phrase, "" for nothing that fails its rule) and what it could
// not read.
type outcome struct {
	finding    string
	incomplete []model.Incomplete
}

// exit is the error that ends the command with the contract's code: nil
// for 0; a finding alone exits 1 silently (the output says it); anything
// incomplete exits 3 with a last line on stderr that says both.
func (o outcome) exit() error {
	switch {
	case len(o.incomplete) > 0:
		msg := "incomplete answer (exit 3): " + incompleteSummary(o.incomplete)
		if o.finding != "" {
			msg += "; found as well (exit 1 alone): " + o.finding
		}
		return exitError{code: exitIncomplete, err: errors.New(msg)}
	case o.finding != "":
		return exitError{code: exitFinding}
	}
	return nil
}

// fail ends the command on err: exit 3 with the cause first when something
// was not read (the error may be its doing: a service not found in a mesh
// of which a cluster is missing), else err as bad input (exit 2).
func (o outcome) fail(err error) error {
	if len(o.incomplete) == 0 {
		return badInput(err)
	}
	return exitError{code: exitIncomplete, err: fmt.Errorf("%s: %w\nincomplete answer (exit 3): %s", o.incomplete[0].Sentence(), err, incompleteSummary(o.incomplete))}
}

// incompleteSummary names what was not read, in one line.
func incompleteSummary(inc []model.Incomplete) string {
	what := map[string][]string{}
	var order []string
	for _, i := range inc {
		if _, ok := what[i.What]; !ok {
			order = append(order, i.What)
		}
		what[i.What] = append(what[i.What], i.Cluster)
	}
	var parts []string
	for _, w := range order {
		names := dedupe(what[w])
		switch w {
		case model.IncompleteCluster:
			parts = append(parts, plural(len(names), "cluster", "clusters")+" not read ("+strings.Join(names, ", ")+")")
		case model.IncompleteIstiod:
			parts = append(parts, plural(len(names), "istiod", "istiods")+" not read ("+strings.Join(names, ", ")+")")
		case model.IncompleteXDS:
			parts = append(parts, "streams without an answer from "+plural(len(names), "istiod", "istiods")+" ("+strings.Join(names, ", ")+")")
		default:
			parts = append(parts, w+" not read ("+strings.Join(names, ", ")+")")
		}
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func dedupe(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// writeIncomplete writes what was not read, one line each, before a text
// answer: its first line names the cause. known is what the answer holds
// despite a cluster not read ("0 services known"), said after it when it
// comes first.
func writeIncomplete(w io.Writer, inc []model.Incomplete, known string) {
	for i, x := range inc {
		line := x.Sentence()
		if i == 0 && known != "" && x.What == model.IncompleteCluster {
			line += ": " + known
		}
		fmt.Fprintln(w, line)
	}
}

// servicesKnown is what a snapshot holds despite the clusters not read.
func servicesKnown(snap *model.Snapshot) string {
	if snap == nil {
		return "0 services known"
	}
	return plural(len(snap.Services), "service", "services") + " known"
}

// exitHelp is the exit-code part of every command's help: the contract,
// and what this command's finding (exit 1) is.
func exitHelp(finding string) string {
	return `

Exit status, the same for every command (README.md, "Exit codes"):
    0  everything was read, and nothing fails this command's rule
    1  ` + finding + `
    2  bad input: a flag, argument, file or viewpoint that does not parse
       or names nothing
    3  incomplete: a cluster, istiod or stream meshscope needed could not
       be read or did not sync in time; the output's first line says which
       (JSON: the "incomplete" list). 3 wins over 1, and both are said
  130  interrupted (Ctrl-C) before the answer`
}
