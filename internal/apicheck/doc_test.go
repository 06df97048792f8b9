package apicheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// TestDocNamesItsDeclaration: a doc comment starts with the name it
// documents as declared — a comment that still says "ProxyOf" above
// proxyOf was left behind when the name changed.
func TestDocNamesItsDeclaration(t *testing.T) {
	root, files := goFiles(t)
	for _, name := range files {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, root+"/"+name, nil, parser.ParseComments)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		check := func(doc *ast.CommentGroup, id *ast.Ident) {
			if doc == nil {
				return
			}
			words := strings.Fields(doc.Text())
			if len(words) == 0 {
				return
			}
			w := strings.TrimRight(words[0], ":,.")
			if w != id.Name && strings.EqualFold(w, id.Name) {
				t.Errorf("%s:%d: the doc comment says %s, the declaration is %s", name, fset.Position(id.Pos()).Line, w, id.Name)
			}
		}
		for _, d := range f.Decls {
			switch x := d.(type) {
			case *ast.FuncDecl:
				check(x.Doc, x.Name)
			case *ast.GenDecl:
				for _, s := range x.Specs {
					doc := x.Doc
					switch sp := s.(type) {
					case *ast.TypeSpec:
						if sp.Doc != nil || len(x.Specs) > 1 {
							doc = sp.Doc
						}
						check(doc, sp.Name)
					case *ast.ValueSpec:
						if sp.Doc != nil || len(x.Specs) > 1 {
							doc = sp.Doc
						}
						check(doc, sp.Names[0])
					}
				}
			}
		}
	}
}
