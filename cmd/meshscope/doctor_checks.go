package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/meshscope/meshscope/analysis/explain"
	"github.com/meshscope/meshscope/model"
)

// writeChecks prints doctor's checks (doctor --list-checks): one row each
// with what it looks at, what it needs beyond the clusters' objects, and
// the problem kinds it can raise.
func writeChecks(w io.Writer, output string) error {
	if output == "json" {
		type check struct {
			Name  string              `json:"name"`
			About string              `json:"about"`
			Needs []explain.Need      `json:"needs,omitempty"`
			Kinds []model.ProblemKind `json:"kinds"`
		}
		var out []check
		for _, c := range explain.Checks {
			out = append(out, check{c.Name, c.About, c.Needs, c.Kinds})
		}
		return writeJSON(w, struct {
			Checks []check `json:"checks"`
		}{out})
	}
	for _, c := range explain.Checks {
		fmt.Fprintf(w, "%s — %s\n", c.Name, c.About)
		if len(c.Needs) > 0 {
			needs := make([]string, len(c.Needs))
			for i, n := range c.Needs {
				needs[i] = string(n)
			}
			fmt.Fprintf(w, "    needs:  %s\n", strings.Join(needs, ", "))
		}
		kinds := make([]string, len(c.Kinds))
		for i, k := range c.Kinds {
			kinds[i] = string(k)
		}
		fmt.Fprintf(w, "    raises: %s\n", strings.Join(kinds, ", "))
	}
	return nil
}

// writeNotRun says, a line each, which checks did not run because an input
// was missing or --skip named them; a check the mesh has nothing for (no
// ambient mode) is left out of the text (doctor's JSON lists it).
func writeNotRun(w io.Writer, nr []explain.NotRun) {
	for _, n := range nr {
		if !n.NotApplicable {
			fmt.Fprintf(w, "Not run: check %s: %s.\n", n.Check, n.Why)
		}
	}
}
