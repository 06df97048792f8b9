package apicheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// pending are packages whose findings are listed but do not fail the
// test yet, with why.
var pending = map[string]string{
	"github.com/meshscope/meshscope/lab":              "the lab's own clean-up, not issue 25's packages",
	"github.com/meshscope/meshscope/lab/scale":        "the lab's own clean-up, not issue 25's packages",
	"github.com/meshscope/meshscope/test/e2e/e2eutil": "the end-to-end helpers' own clean-up, not issue 25's packages",
}

// TestExportedNamesUsed: every exported name of a non-main package of the
// module is used outside its package, or is unexported (issue 25).
//
// The rule. A package's exported top-level functions, types, variables and
// constants, and the exported methods of its named types (struct fields
// are not checked: encoders read them), count as used when the non-test
// code of another package of the module (main packages included) uses
// them:
//   - names it (a function, constant, variable, type or method, through any
//     selector, promoted methods included; an instance of a generic one
//     counts for the generic);
//   - or, for a type, works with its values: the type of any expression
//     there is, or holds (pointer, slice, array, map, channel, function
//     signature, type argument), the type — so a type returned by a used
//     function and only read through its fields stays exported;
//   - or, for a constant of a named type of its package (an enumeration:
//     a state, a kind, a reason), the type is used: code that works with
//     the type meets all of its values;
//   - or, for a method, its type (or its pointer) implements an interface
//     with that method: an interface declared in any package the module
//     compiles against (in its package scope, or written inline in the
//     module's code), or one the standard library asks for by reflection
//     (String, Error, MarshalJSON, … below).
//
// Tests of another package are outside the package too: a name that only
// they use (the end-to-end tests call explain.Explain for what they
// expect; a fixture's type) counts, the tests type-checked as the go tool
// builds them. A package's own tests, its external _test package included,
// never count: a name only they need is unexported and tested from
// inside. The names other packages use only in tests are logged (-v).
func TestExportedNamesUsed(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the module")
	}
	findings, testOnly, err := unusedExported()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range testOnly {
		t.Logf("used outside its package only by tests: %s", f)
	}
	for _, f := range findings {
		if why, ok := pending[f.pkg]; ok {
			t.Logf("pending (%s): %s", why, f)
			continue
		}
		t.Errorf("exported but unused outside its package: %s", f)
	}
}

// reflective are the method names the standard library and the encoders
// call through interfaces they do not export, or by reflection.
var reflective = map[string]bool{
	"Error": true, "Unwrap": true, "Is": true, "As": true, "String": true, "GoString": true, "Format": true,
	"MarshalJSON": true, "UnmarshalJSON": true, "MarshalText": true, "UnmarshalText": true, "MarshalYAML": true, "UnmarshalYAML": true,
}

type finding struct {
	pkg, kind, name, pos string
}

func (f finding) String() string { return fmt.Sprintf("%s: %s %s (%s)", f.pkg, f.kind, f.name, f.pos) }

type listed struct {
	Dir, ImportPath, Name, Export string
	Module                        *struct{ Path string }
	GoFiles, TestGoFiles          []string
	XTestGoFiles                  []string
	Imports, TestImports          []string
	XTestImports                  []string
}

// checked is a package of the module type-checked from source.
type checked struct {
	l     *listed
	pkg   *types.Package
	info  *types.Info
	files []*ast.File
}

// unusedExported lists the exported names no other package uses, and
// those only other packages' tests use.
func unusedExported() (unused, testOnly []finding, err error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, nil, err
	}
	mod, pkgs, err := goList(root)
	if err != nil {
		return nil, nil, err
	}
	byPath := map[string]*listed{}
	for _, p := range pkgs {
		byPath[p.ImportPath] = p
	}
	fset := token.NewFileSet()
	fromExport := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		p := byPath[path]
		if p == nil || p.Export == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(p.Export)
	})
	// One universe: the module's packages from source, in dependency
	// order (go list -deps lists dependencies first), the rest from export data.
	done := map[string]*checked{}
	imp := importerFunc(func(path string) (*types.Package, error) {
		if c := done[path]; c != nil {
			return c.pkg, nil
		}
		return fromExport.Import(path)
	})
	var order []*checked
	for _, p := range pkgs {
		if p.Module == nil || p.Module.Path != mod || len(p.GoFiles) == 0 {
			continue
		}
		c := &checked{l: p, info: &types.Info{Uses: map[*ast.Ident]types.Object{}, Types: map[ast.Expr]types.TypeAndValue{}}}
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				return nil, nil, err
			}
			c.files = append(c.files, f)
		}
		conf := types.Config{Importer: imp}
		if c.pkg, err = conf.Check(p.ImportPath, fset, c.files, c.info); err != nil {
			return nil, nil, fmt.Errorf("type-checking %s: %w", p.ImportPath, err)
		}
		done[p.ImportPath] = c
		order = append(order, c)
	}

	used := map[string]bool{}
	ifaces := map[string][]*types.Interface{} // by method name
	addIface := func(it *types.Interface) {
		for i := 0; i < it.NumMethods(); i++ {
			ifaces[it.Method(i).Name()] = append(ifaces[it.Method(i).Name()], it)
		}
	}
	seenPkg := map[*types.Package]bool{}
	var scanScope func(*types.Package)
	scanScope = func(p *types.Package) {
		if seenPkg[p] {
			return
		}
		seenPkg[p] = true
		for _, name := range p.Scope().Names() {
			if tn, ok := p.Scope().Lookup(name).(*types.TypeName); ok {
				if it, ok := tn.Type().Underlying().(*types.Interface); ok {
					addIface(it)
				}
			}
		}
		for _, q := range p.Imports() {
			scanScope(q)
		}
	}
	for _, c := range order {
		scanScope(c.pkg)
		self := c.pkg.Path()
		for _, obj := range c.info.Uses {
			if obj.Pkg() == nil || obj.Pkg().Path() == self || done[obj.Pkg().Path()] == nil {
				continue
			}
			used[key(obj)] = true
		}
		for _, tv := range c.info.Types {
			if it, ok := tv.Type.Underlying().(*types.Interface); ok && tv.IsType() {
				addIface(it)
			}
			markTypes(tv.Type, self, done, used, map[types.Type]bool{})
		}
	}

	// Tests: each package's tests type-checked as the go tool builds
	// them (the package with its _test files, and its external _test
	// package), against the same universe. A test that needs what only
	// its own package's test files declare does not check cleanly; what
	// it uses of other packages is still resolved, which is all this needs.
	testUsed := map[string]bool{}
	for _, p := range pkgs {
		if p.Module == nil || p.Module.Path != mod {
			continue
		}
		for _, set := range []struct {
			path  string
			files []string
		}{{p.ImportPath, append(append([]string(nil), p.GoFiles...), p.TestGoFiles...)}, {p.ImportPath + "_test", p.XTestGoFiles}} {
			if len(set.files) == len(p.GoFiles) && set.path == p.ImportPath || len(set.files) == 0 {
				continue
			}
			var files []*ast.File
			for _, name := range set.files {
				f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
				if err != nil {
					return nil, nil, err
				}
				files = append(files, f)
			}
			info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
			conf := types.Config{Importer: imp, Error: func(error) {}}
			_, _ = conf.Check(set.path, fset, files, info)
			for _, obj := range info.Uses {
				if obj.Pkg() == nil || obj.Pkg().Path() == p.ImportPath || done[obj.Pkg().Path()] == nil {
					continue
				}
				testUsed[key(obj)] = true
			}
		}
	}

	for _, c := range order {
		if c.pkg.Name() == "main" {
			continue
		}
		path := c.pkg.Path()
		report := func(obj types.Object, kind, name string) {
			k := key(obj)
			if cn, ok := obj.(*types.Const); ok {
				if n, ok := cn.Type().(*types.Named); ok && n.Obj().Pkg() == c.pkg && n.Obj().Exported() && used[key(n.Obj())] {
					return
				}
			}
			if used[k] {
				return
			}
			p := fset.Position(obj.Pos())
			rel, _ := filepath.Rel(root, p.Filename)
			f := finding{pkg: path, kind: kind, name: name, pos: fmt.Sprintf("%s:%d", rel, p.Line)}
			if testUsed[k] {
				testOnly = append(testOnly, f)
				return
			}
			unused = append(unused, f)
		}
		scope := c.pkg.Scope()
		for _, name := range scope.Names() {
			obj := scope.Lookup(name)
			if obj.Exported() {
				report(obj, kindOf(obj), name)
			}
			tn, ok := obj.(*types.TypeName)
			if !ok || tn.IsAlias() {
				continue
			}
			named, ok := tn.Type().(*types.Named)
			if !ok {
				continue
			}
			for i := 0; i < named.NumMethods(); i++ {
				m := named.Method(i)
				if !m.Exported() || reflective[m.Name()] || implementsWith(named, m.Name(), ifaces[m.Name()]) {
					continue
				}
				report(m, "method", name+"."+m.Name())
			}
		}
	}
	for _, fs := range [][]finding{unused, testOnly} {
		sort.Slice(fs, func(i, j int) bool { return fs[i].String() < fs[j].String() })
	}
	return unused, testOnly, nil
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// key names an object across the universe: package.Name, or
// package.Type.Method for a method.
func key(obj types.Object) string {
	if f, ok := obj.(*types.Func); ok {
		f = f.Origin()
		if recv := f.Signature().Recv(); recv != nil {
			t := recv.Type()
			if p, ok := t.(*types.Pointer); ok {
				t = p.Elem()
			}
			name := "?"
			switch n := t.(type) {
			case *types.Named:
				name = n.Origin().Obj().Name()
			case *types.Alias:
				name = n.Obj().Name()
			}
			return f.Pkg().Path() + "." + name + "." + f.Name()
		}
		return f.Pkg().Path() + "." + f.Name()
	}
	if v, ok := obj.(*types.Var); ok {
		obj = v.Origin()
	}
	return obj.Pkg().Path() + "." + obj.Name()
}

// markTypes marks the module's named types that t is or holds, seen from
// package self.
func markTypes(t types.Type, self string, done map[string]*checked, used map[string]bool, seen map[types.Type]bool) {
	if t == nil || seen[t] {
		return
	}
	seen[t] = true
	switch t := t.(type) {
	case *types.Named:
		if o := t.Origin().Obj(); o.Pkg() != nil && o.Pkg().Path() != self && done[o.Pkg().Path()] != nil {
			used[key(o)] = true
		}
		for i := 0; i < t.TypeArgs().Len(); i++ {
			markTypes(t.TypeArgs().At(i), self, done, used, seen)
		}
	case *types.Alias:
		markTypes(types.Unalias(t), self, done, used, seen)
	case *types.Pointer:
		markTypes(t.Elem(), self, done, used, seen)
	case *types.Slice:
		markTypes(t.Elem(), self, done, used, seen)
	case *types.Array:
		markTypes(t.Elem(), self, done, used, seen)
	case *types.Map:
		markTypes(t.Key(), self, done, used, seen)
		markTypes(t.Elem(), self, done, used, seen)
	case *types.Chan:
		markTypes(t.Elem(), self, done, used, seen)
	case *types.Tuple:
		for i := 0; i < t.Len(); i++ {
			markTypes(t.At(i).Type(), self, done, used, seen)
		}
	case *types.Signature:
		markTypes(t.Params(), self, done, used, seen)
		markTypes(t.Results(), self, done, used, seen)
	}
}

// implementsWith says whether named, or a pointer to it, implements one
// of ifaces (each has a method of the name being asked about).
func implementsWith(named *types.Named, _ string, ifaces []*types.Interface) bool {
	for _, it := range ifaces {
		if types.Implements(named, it) || types.Implements(types.NewPointer(named), it) {
			return true
		}
	}
	return false
}

func kindOf(obj types.Object) string {
	switch obj.(type) {
	case *types.Func:
		return "func"
	case *types.TypeName:
		return "type"
	case *types.Const:
		return "const"
	}
	return "var"
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}

// goList lists the module's packages and everything they and their tests
// import, in dependency order, with their export data.
func goList(root string) (string, []*listed, error) {
	cmd := exec.Command("go", "list", "-e", "-export", "-deps", "-test=false",
		"-json=Dir,ImportPath,Name,Export,Module,GoFiles,TestGoFiles,XTestGoFiles,Imports,TestImports,XTestImports", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", nil, fmt.Errorf("go list: %v: %s", err, stderr.String())
	}
	var pkgs []*listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		p := &listed{}
		if err := dec.Decode(p); err != nil {
			return "", nil, err
		}
		if strings.Contains(p.ImportPath, " [") || strings.HasSuffix(p.ImportPath, ".test") {
			continue // a package built for a test, or a test binary
		}
		pkgs = append(pkgs, p)
	}
	modOut, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		return "", nil, fmt.Errorf("go list -m: %w", err)
	}
	return strings.TrimSpace(string(modOut)), pkgs, nil
}
