package model

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// problemTables are the documents whose tables list the problem kinds.
var problemTables = []string{"../docs/explain.md", "../docs/proxies.md"}

// TestProblemKindsDocumented: every ProblemKind of problems.go has one row
// in the docs' tables of problem kinds (| `kind` | severity | …), and every
// such row names a declared kind (issue 25: the docs' "stable code" list
// had missed 17 of 38 codes).
func TestProblemKindsDocumented(t *testing.T) {
	declared := map[string]bool{}
	f, err := parser.ParseFile(token.NewFileSet(), "problems.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			vs := sp.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "ProblemKind" {
				t.Errorf("problems.go: %s is not a ProblemKind", vs.Names[0].Name)
				continue
			}
			v, err := strconv.Unquote(vs.Values[0].(*ast.BasicLit).Value)
			if err != nil {
				t.Fatal(err)
			}
			if declared[v] {
				t.Errorf("kind %q declared twice", v)
			}
			declared[v] = true
		}
	}
	// A row of a problem table: a kind, then a severity.
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\| (error|warning|info)[^|]*\\|")
	rows := map[string]int{}
	for _, doc := range problemTables {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range row.FindAllStringSubmatch(string(b), -1) {
			rows[m[1]]++
			if !declared[m[1]] {
				t.Errorf("%s lists kind %q, which model/problems.go does not declare", doc, m[1])
			}
		}
	}
	var kinds []string
	for k := range declared {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		if rows[k] != 1 {
			t.Errorf("kind %q has %d rows in %s, want 1", k, rows[k], strings.Join(problemTables, ", "))
		}
	}
}
