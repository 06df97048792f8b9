package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

func walk(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		walk(sub, fn)
	}
}

// TestHelpComplete: every command a user can reach has a one-line Short, a
// Long text and examples that run meshscope, and every flag says what it
// does; `help` (cobra's own) is the one exception.
func TestHelpComplete(t *testing.T) {
	n := 0
	walk(newRootCmdAs("meshscope"), func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		n++
		path := c.CommandPath()
		if c.Short == "" || strings.Contains(c.Short, "\n") {
			t.Errorf("%s: Short must be one line", path)
		}
		if len(strings.TrimSpace(c.Long)) < 40 {
			t.Errorf("%s: no Long text", path)
		}
		if !strings.Contains(c.Example, "meshscope") {
			t.Errorf("%s: no example that runs meshscope", path)
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if strings.TrimSpace(f.Usage) == "" {
				t.Errorf("%s --%s: no usage text", path, f.Name)
			}
		})
	})
	// root, six commands, completion and its four shells
	if n < 12 {
		t.Errorf("only %d commands walked", n)
	}
}

// TestKubectlPluginName: run as kubectl-meshscope (kubectl execs plugins by
// path; krew installs a link of that name), usage lines and examples read
// "kubectl meshscope"; any other name is meshscope.
func TestKubectlPluginName(t *testing.T) {
	for argv0, want := range map[string]string{
		"/home/u/.krew/bin/kubectl-meshscope": "kubectl meshscope",
		`C:\bin\kubectl-meshscope.exe`:        "meshscope", // not a path separator on linux
		"kubectl-meshscope.exe":               "kubectl meshscope",
		"kubectl-meshscope":                   "kubectl meshscope",
		"/usr/local/bin/meshscope":            "meshscope",
		"./bin/meshscope":                     "meshscope",
		"meshscope.test":                      "meshscope",
	} {
		if filepath.Separator == '\\' {
			break
		}
		if got := displayName(argv0); got != want {
			t.Errorf("displayName(%q) = %q, want %q", argv0, got, want)
		}
	}

	root := newRootCmdAs("kubectl meshscope")
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"explain", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	if !strings.Contains(help, "\n  kubectl meshscope explain SERVICE [flags]") {
		t.Errorf("usage line does not read kubectl meshscope:\n%s", help)
	}
	if !strings.Contains(help, "\n  kubectl meshscope explain helloworld.sample --demo") {
		t.Errorf("examples do not read kubectl meshscope:\n%s", help)
	}
	if strings.Contains(strings.ReplaceAll(help, "kubectl meshscope", ""), "\n  meshscope ") {
		t.Errorf("an example still starts with plain meshscope:\n%s", help)
	}
	// Commands and flags are the same tree.
	plain := newRootCmdAs("meshscope")
	if len(plain.Commands()) != len(root.Commands()) {
		t.Errorf("plugin has %d commands, meshscope %d", len(root.Commands()), len(plain.Commands()))
	}
}

// TestManPages renders a man page per command with cobra/doc (make man
// writes them to $MESHSCOPE_MAN_DIR); here it checks that they render and
// carry the examples.
func TestManPages(t *testing.T) {
	dir := os.Getenv("MESHSCOPE_MAN_DIR")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	root := newRootCmdAs("meshscope")
	root.DisableAutoGenTag = true // no generation date: the pages are reproducible
	// The default --log-file is under the home of whoever builds the pages.
	root.PersistentFlags().Lookup("log-file").DefValue = "$XDG_CACHE_HOME/meshscope/meshscope.log"
	hdr := &doc.GenManHeader{Title: "MESHSCOPE", Section: "1", Source: "meshscope", Manual: "meshscope manual"}
	if err := doc.GenManTree(root, hdr, dir); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "meshscope-explain.1"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte("EXAMPLE")) || !bytes.Contains(page, []byte("helloworld.sample")) {
		t.Errorf("meshscope-explain.1 lacks its examples:\n%s", page)
	}
	pages, _ := filepath.Glob(filepath.Join(dir, "*.1"))
	if len(pages) < 12 {
		t.Errorf("%d man pages: %v", len(pages), pages)
	}
}
