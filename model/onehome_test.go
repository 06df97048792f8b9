package model

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// homeExempt are files outside this package's homes that still spell a
// label or the cluster domain, with why.
var homeExempt = map[string]string{}

// TestOneHome: the labels and annotations istiod reads are written in
// labels.go only, the cluster domain ("cluster.local") in hostname.go
// only, and the problem kinds in problems.go only — no other Go file of the product spells them as a string (tests,
// their fixtures (internal/meshtest), the lab and the end-to-end tests
// may: they are the mesh's objects, not meshscope's reading of them; and
// prose may, a help text's example).
func TestOneHome(t *testing.T) {
	labels := map[string]string{} // value → constant
	f, err := parser.ParseFile(token.NewFileSet(), "labels.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok {
			for i, v := range vs.Values {
				if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					if strings.Contains(s, "/") || strings.Contains(s, "-") { // a label key, not a value
						labels[s] = vs.Names[i].Name
					}
				}
			}
		}
		return true
	})
	if len(labels) < 20 {
		t.Fatalf("read %d labels from labels.go", len(labels))
	}
	root := ".."
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch {
			case rel == "lab", rel == "test", rel == filepath.Join("internal", "meshtest"), d.Name() == "testdata", rel != "." && strings.HasPrefix(d.Name(), "."):
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || rel == "model/labels.go" || rel == "model/hostname.go" {
			return nil
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if k := literalKind(n); k != "" {
				t.Errorf("%s: problem kind %s written as a string: use its model.ProblemKind constant (problems.go)", fset.Position(n.Pos()), k)
			}
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, _ := strconv.Unquote(lit.Value)
			what := ""
			if c, ok := labels[s]; ok {
				what = "model." + c
			} else if strings.Contains(s, "cluster.local") && !strings.ContainsAny(s, " \n") {
				what = "model.Hostname, FQDN, ShortHost, DNSDomain or DefaultTrustDomain"
			}
			if what == "" {
				return true
			}
			if why, ok := homeExempt[filepath.ToSlash(rel)]; ok {
				t.Logf("%s: %s (exempt: %s)", fset.Position(lit.Pos()), lit.Value, why)
				return true
			}
			t.Errorf("%s: %s, which is %s", fset.Position(lit.Pos()), lit.Value, what)
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// literalKind is the string of a problem kind written as a literal —
// ProblemKind("x"), or Kind: "x" in a Problem{…} — else "".
func literalKind(n ast.Node) string {
	name := func(e ast.Expr) string {
		switch e := e.(type) {
		case *ast.Ident:
			return e.Name
		case *ast.SelectorExpr:
			return e.Sel.Name
		}
		return ""
	}
	switch n := n.(type) {
	case *ast.CallExpr:
		if len(n.Args) == 1 && name(n.Fun) == "ProblemKind" {
			if lit, ok := n.Args[0].(*ast.BasicLit); ok {
				return lit.Value
			}
		}
	case *ast.CompositeLit:
		if name(n.Type) != "Problem" {
			return ""
		}
		for _, e := range n.Elts {
			if kv, ok := e.(*ast.KeyValueExpr); ok && name(kv.Key) == "Kind" {
				if lit, ok := kv.Value.(*ast.BasicLit); ok {
					return lit.Value
				}
			}
		}
	}
	return ""
}
