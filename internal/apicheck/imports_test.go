package apicheck

import (
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// TestImportOrder: every Go file of the module imports the standard library
// first, then other modules, then this module's own packages (what
// `goimports -local github.com/meshscope/meshscope` writes), so a reader
// finds a file's dependencies where they expect them.
func TestImportOrder(t *testing.T) {
	root, files := goFiles(t)
	class := func(path string) int {
		switch {
		case strings.HasPrefix(path, "github.com/meshscope/meshscope"):
			return 2
		case strings.Contains(strings.SplitN(path, "/", 2)[0], "."):
			return 1
		}
		return 0
	}
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), root+"/"+name, nil, parser.ImportsOnly)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		last := 0
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			c := class(path)
			if c < last {
				t.Errorf("%s: %s is imported after a later group (standard library, other modules, then the module's own: goimports -local github.com/meshscope/meshscope)", name, path)
				break
			}
			last = c
		}
	}
	if len(files) < 100 {
		t.Fatalf("only %d Go files listed", len(files))
	}
}
