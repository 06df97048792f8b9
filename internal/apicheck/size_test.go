package apicheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// Size limits that keep the code readable (issue 36): no function over
// maxFunc lines outside tests, maxLabFunc in the lab's tools (lab/), and
// no file of the UI over maxTUIFile lines.
const (
	maxFunc    = 100
	maxLabFunc = 120
	maxTUIFile = 450
)

// sizePending are functions over the limit that are being split, with why
// they wait; the list only shrinks.
var sizePending = map[string]string{}

// TestSizeLimits: functions and the UI's files stay within the limits.
func TestSizeLimits(t *testing.T) {
	root, files := goFiles(t)
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "test/") {
			continue
		}
		src, err := os.ReadFile(root + "/" + name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if n := strings.Count(string(src), "\n"); strings.HasPrefix(name, "tui/") && n > maxTUIFile {
			t.Errorf("%s has %d lines: the UI's files stay within %d (split it by what it holds)", name, n, maxTUIFile)
		}
		limit := maxFunc
		if strings.HasPrefix(name, "lab/") {
			limit = maxLabFunc
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		checked++
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			n := fset.Position(fd.Body.Rbrace).Line - fset.Position(fd.Pos()).Line + 1
			if n <= limit {
				continue
			}
			key := fmt.Sprintf("%s %s", name, fd.Name.Name)
			if why, ok := sizePending[key]; ok {
				t.Logf("pending (%s): %s is %d lines", why, key, n)
				continue
			}
			t.Errorf("%s is %d lines, over %d: split it into steps with names", key, n, limit)
		}
	}
	if checked < 100 {
		t.Fatalf("only %d files checked", checked)
	}
}
