package model

import (
	"fmt"
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

// cpViewCalls are the calls that decide what a control plane sees of a
// snapshot — the cut to the clusters it reads and to its config
// (Snapshot.ForControlPlane, Restrict), a horizon index, an ambient view:
// made only by analysis/plane's View (and model, which defines the cut).
var cpViewCalls = map[string]bool{"ForControlPlane": true, "Restrict": true, "NewIndex": true, "NewView": true}

// cpViewExempt are the files outside analysis/plane that make one of
// cpViewCalls, with why.
var cpViewExempt = map[string]string{
	"analysis/horizon/target.go": "the sidecar's ambient scope filter, built inside the horizon index from the control plane's view it indexes",
}

// globalExempt are package-level variables of synchronised types that are
// no cache, with why.
var globalExempt = map[string]string{
	"xdsclient.eventSeq": "a sequence number for events, never read back as data",
	"uiprobe.current":    "the hooks a benchmark sets in the UI (nil otherwise)",
}

// TestOneHome: the labels and annotations istiod reads are written in
// labels.go only, the cluster domain ("cluster.local") in hostname.go
// only, and the problem kinds in problems.go only — no other Go file of the product spells them as a string (tests,
// their fixtures (internal/meshtest), the lab and the end-to-end tests
// may: they are the mesh's objects, not meshscope's reading of them; and
// prose may, a help text's example). What a control plane sees of a
// snapshot is decided in analysis/plane only (cpViewCalls), and no
// package keeps a cache in a package-level variable (packageCaches): a
// cache belongs to whoever holds the snapshot.
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
		file, err := parser.ParseFile(fset, path, nil, 0) // objects resolved: a local is no global
		if err != nil {
			return err
		}
		for _, e := range cpViewErrors(fset, file, filepath.ToSlash(rel)) {
			t.Error(e)
		}
		for _, e := range packageCaches(fset, file) {
			t.Error(e)
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

// cpViewErrors are the calls in file (at rel) that decide what a control
// plane sees outside analysis/plane and model.
func cpViewErrors(fset *token.FileSet, file *ast.File, rel string) []string {
	if strings.HasPrefix(rel, "analysis/plane/") || strings.HasPrefix(rel, "model/") {
		return nil
	}
	var out []string
	ast.Inspect(file, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || !cpViewCalls[sel.Sel.Name] {
			return true
		}
		// tea.NewView and the like are no control plane's view.
		if x, ok := sel.X.(*ast.Ident); ok && sel.Sel.Name == "NewView" && x.Name != "ambient" {
			return true
		}
		if sel.Sel.Name == "NewIndex" {
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "horizon" {
				return true
			}
		}
		if _, ok := cpViewExempt[rel]; ok {
			return true
		}
		out = append(out, fmt.Sprintf("%s: %s decides what a control plane sees: use analysis/plane (plane.Set.Of)", fset.Position(call.Pos()), sel.Sel.Name))
		return true
	})
	return out
}

// packageCaches are the package-level variables of file that cache: of a
// synchronised type (sync.Map, a struct holding a sync.Mutex, atomic
// values), or a map written into by a function (name[k] = v, delete).
func packageCaches(fset *token.FileSet, file *ast.File) []string {
	globals := map[string]*ast.ValueSpec{}
	var out []string
	for _, d := range file.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, sp := range gd.Specs {
			vs := sp.(*ast.ValueSpec)
			for _, name := range vs.Names {
				globals[name.Name] = vs
				if globalExempt[file.Name.Name+"."+name.Name] != "" || vs.Type == nil {
					continue
				}
				synced := false
				ast.Inspect(vs.Type, func(n ast.Node) bool {
					if sel, ok := n.(*ast.SelectorExpr); ok {
						if x, ok := sel.X.(*ast.Ident); ok && (x.Name == "sync" || x.Name == "atomic") {
							synced = true
						}
					}
					return true
				})
				if synced {
					out = append(out, fmt.Sprintf("%s: package-level %s is synchronised state, a cache: keep it in the value that owns the data", fset.Position(name.Pos()), name.Name))
				}
			}
		}
	}
	written := func(e ast.Expr) (string, bool) {
		ix, ok := e.(*ast.IndexExpr)
		if !ok {
			return "", false
		}
		id, ok := ix.X.(*ast.Ident)
		if !ok || globals[id.Name] == nil || (id.Obj != nil && id.Obj.Decl != globals[id.Name]) {
			return "", false
		}
		return id.Name, true
	}
	for _, d := range file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil || fd.Name.Name == "init" {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			var targets []ast.Expr
			switch n := n.(type) {
			case *ast.AssignStmt:
				targets = n.Lhs
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "delete" && len(n.Args) > 0 {
					targets = []ast.Expr{&ast.IndexExpr{X: n.Args[0]}}
				}
			}
			for _, tgt := range targets {
				if name, ok := written(tgt); ok {
					out = append(out, fmt.Sprintf("%s: %s writes into package-level %s, a cache: keep it in the value that owns the data", fset.Position(tgt.Pos()), fd.Name.Name, name))
				}
			}
			return true
		})
	}
	return out
}
