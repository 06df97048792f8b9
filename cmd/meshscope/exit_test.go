package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/meshscope/meshscope/model"
)

// exitOf is the exit code and the message meshscope prints for err.
func exitOf(err error) (int, string) {
	var b strings.Builder
	code := exitStatus(&b, err)
	return code, strings.TrimSpace(strings.TrimPrefix(b.String(), "meshscope: "))
}

// TestExitContract: the one table of exit codes — nothing read amiss and
// nothing found is 0; a finding alone 1, silently; bad input 2 with its
// message; anything not read 3, winning over a finding, with both said;
// an error no command classified 3; Ctrl-C 130.
func TestExitContract(t *testing.T) {
	unread := []model.Incomplete{{Cluster: "c", What: model.IncompleteCluster, Why: "unreachable: dial tcp 127.0.0.1:1: connect: connection refused"}}
	for _, c := range []struct {
		name string
		err  error
		code int
		msg  []string
	}{
		{"ok", outcome{}.exit(), 0, nil},
		{"finding", outcome{finding: "1 view differs"}.exit(), 1, nil},
		{"bad input", badInput(errors.New("--output x: want table or json")), 2, []string{"--output x"}},
		{"bad input twice", badInput(badInput(errors.New("x"))), 2, []string{"x"}},
		{"incomplete", outcome{incomplete: unread}.exit(), 3, []string{"incomplete answer (exit 3): 1 cluster not read (c)"}},
		{"incomplete and finding", outcome{finding: "2 error-level problems", incomplete: unread}.exit(), 3,
			[]string{"1 cluster not read (c)", "found as well (exit 1 alone): 2 error-level problems"}},
		{"fail complete", outcome{}.fail(errors.New(`no service matches "x"`)), 2, []string{`no service matches "x"`}},
		{"fail incomplete", outcome{incomplete: unread}.fail(errors.New(`no service matches "x"`)), 3,
			[]string{`cluster c is unreachable (dial tcp 127.0.0.1:1: connect: connection refused): no service matches "x"`}},
		{"unclassified", errors.New("boom"), 3, []string{"boom"}},
		{"interrupted", fmt.Errorf("settle: %w", errInterrupted), 130, []string{"interrupted"}},
	} {
		code, msg := exitOf(c.err)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d (%q)", c.name, code, c.code, msg)
		}
		if c.msg == nil && msg != "" {
			t.Errorf("%s: prints %q, want nothing", c.name, msg)
		}
		for _, w := range c.msg {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q lacks %q", c.name, msg, w)
			}
		}
	}
}

// TestUsageErrors: a missing or extra argument, an unknown command or flag
// is bad input (exit 2) that shows the usage line and an example, never
// cobra's "accepts 1 arg(s), received 0".
func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"explain"}, []string{"explain: missing SERVICE", "Usage:   meshscope explain SERVICE [flags]", "Example: meshscope explain helloworld.sample --demo", "meshscope explain --help"}},
		{[]string{"explain", "a", "b"}, []string{`unexpected argument "b"`, "Usage:   meshscope explain SERVICE [flags]"}},
		{[]string{"snapshot", "extra"}, []string{`snapshot: unexpected argument "extra"`, "Example: meshscope snapshot --demo"}},
		{[]string{"snapshto"}, []string{`unknown command "snapshto"`, "did you mean snapshot?", "Usage:   meshscope [flags]"}},
		{[]string{"doctor", "--no-such-flag"}, []string{"unknown flag: --no-such-flag", "Usage:   meshscope doctor [flags]"}},
		{[]string{"doctor", "-o", "yaml", "--demo"}, []string{`--output "yaml": want table or json`}},
		{[]string{"what-if", "--demo"}, []string{"nothing to try", "Example: meshscope what-if --demo -f"}},
	} {
		_, err := runCLI(t, c.args...)
		code, msg := exitOf(err)
		if code != exitBadInput {
			t.Errorf("%v: exit %d, want 2 (%q)", c.args, code, msg)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%v: %q lacks %q", c.args, msg, w)
			}
		}
		if strings.Contains(msg, "accepts") {
			t.Errorf("%v: cobra's own words: %q", c.args, msg)
		}
	}
}

// TestHelpSaysExitCodes: every command's help gives the contract and
// points to the README's table.
func TestHelpSaysExitCodes(t *testing.T) {
	walk(newRootCmdAs("meshscope"), func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" || (c.HasParent() && c.Parent().Name() == "completion") {
			return
		}
		for _, w := range []string{`README.md, "Exit codes"`, "\n    3  incomplete:", "3 wins over 1"} {
			if !strings.Contains(c.Long, w) {
				t.Errorf("%s: help lacks %q", c.CommandPath(), w)
			}
		}
	})
}

// TestIncompleteFirstLine: what was not read is the first line of a text
// answer, with what is known despite it.
func TestIncompleteFirstLine(t *testing.T) {
	s := sampleSnapshot() // cluster2: unreachable, through a remote secret
	var b strings.Builder
	if err := writeSnapshot(&b, s, "table"); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(b.String(), "\n")
	if want := "cluster cluster2 is unreachable (connection refused): 1 service known"; first != want {
		t.Errorf("first line %q, want %q", first, want)
	}
}

// TestJSONSaysIncomplete: every command's JSON has its "incomplete" list,
// [] when everything was read (the demo's cluster4 fails for its remote
// secret's own CA, which istiod meets too: a finding, not a gap).
func TestJSONSaysIncomplete(t *testing.T) {
	example := filepath.Join("..", "..", "docs", "examples", "what-if-plaintext-reviews.yaml")
	for _, args := range [][]string{
		{"snapshot"},
		{"explain", "helloworld.sample"},
		{"doctor", "--offline"},
		{"proxies"},
		{"what-if", "-f", example, "--fail-on", "none"},
	} {
		out, err := runCLI(t, append(args, "--demo", "-o", "json")...)
		if code, msg := exitOf(err); code != 0 && !(args[0] == "doctor" && code == 1) {
			t.Errorf("%v: exit %d %s", args, code, msg)
		}
		var res struct {
			Incomplete *[]model.Incomplete `json:"incomplete"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || res.Incomplete == nil || len(*res.Incomplete) != 0 {
			t.Errorf("%v: incomplete %v (%v)", args, res.Incomplete, err)
		}
	}
}
