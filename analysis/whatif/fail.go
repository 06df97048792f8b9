package whatif

import (
	"fmt"
	"slices"
	"strings"

	"github.com/meshscope/meshscope/internal/humanize"
	"github.com/meshscope/meshscope/model"
)

// The rules a what-if can fail on (--fail-on), for a pipeline that gates
// a pull request on it.
const (
	failError      = "error"       // a new error-level problem
	failWarning    = "warning"     // a new problem of warning level or worse
	failLost       = "lost"        // a service loses every endpoint from some viewpoint where a client runs
	failLostRemote = "lost-remote" // … or every endpoint of the other clusters
	failChange     = "change"      // any endpoint of any proxy changes
	failNone       = "none"
)

// FailRules are the rules in the order --fail-on lists them; DefaultFailOn
// is what a what-if fails on unless told.
var (
	failRules     = []string{failError, failWarning, failLost, failLostRemote, failChange, failNone}
	DefaultFailOn = []string{failError, failLost}
)

// ParseFailOn checks --fail-on's rules.
func ParseFailOn(rules []string) ([]string, error) {
	var out []string
	for _, r := range rules {
		for _, part := range strings.Split(r, ",") {
			part = strings.TrimSpace(part)
			if !slices.Contains(failRules, part) {
				return nil, fmt.Errorf("--fail-on %q: one of %s", part, strings.Join(failRules, ", "))
			}
			out = append(out, part)
		}
	}
	if slices.Contains(out, failNone) && len(out) > 1 {
		return nil, fmt.Errorf("--fail-on none cannot be combined with other rules")
	}
	return out, nil
}

// Judge fills rep.Fail: why the what-if fails the rules (empty: it passes).
func Judge(rep *Report, rules []string) {
	rep.Fail = nil
	has := func(r string) bool { return slices.Contains(rules, r) }
	count := func(sev ...model.Severity) int {
		n := 0
		for _, p := range rep.Problems.New {
			if slices.Contains(sev, p.Severity) {
				n++
			}
		}
		return n
	}
	if has(failWarning) {
		if n := count(model.SeverityError, model.SeverityWarning); n > 0 {
			rep.Fail = append(rep.Fail, fmt.Sprintf("%s (--fail-on warning)", humanize.Count(n, "new problem")))
		}
	} else if has(failError) {
		if n := count(model.SeverityError); n > 0 {
			rep.Fail = append(rep.Fail, fmt.Sprintf("%s (--fail-on error)", humanize.Count(n, "new error")))
		}
	}
	// Only where a client runs: a namespace without one loses nothing.
	lost, lostRemote := 0, 0
	for _, c := range rep.Changes {
		if c.NoClient {
			continue
		}
		if c.LostAll {
			lost++
		}
		if c.LostRemote {
			lostRemote++
		}
	}
	if (has(failLost) || has(failLostRemote)) && lost > 0 {
		rep.Fail = append(rep.Fail, fmt.Sprintf("%d service view(s) lose every endpoint (--fail-on lost)", lost))
	}
	if has(failLostRemote) && lostRemote > 0 {
		rep.Fail = append(rep.Fail, fmt.Sprintf("%d service view(s) lose every remote endpoint (--fail-on lost-remote)", lostRemote))
	}
	if has(failChange) && len(rep.Changes) > 0 {
		rep.Fail = append(rep.Fail, fmt.Sprintf("%d service view(s) change (--fail-on change)", len(rep.Changes)))
	}
}
