package link_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function outside tests and fakes may be:
// past it, a newcomer reads it in more than one sitting, and it is split
// where its phases part.
const maxFuncLines = 80

// TestFuncLength fails naming each function outside tests and fakes
// (model/fakeprovider, internal/stdioagent, testdata, a package whose
// name ends in "test") longer than maxFuncLines, with its length.
func TestFuncLength(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if fake(path) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			name := filepath.ToSlash(path) + ":" + funcName(fn)
			if n > maxFuncLines {
				t.Errorf("%s is %d lines, past %d: split it where its phases part", name, n, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// fake says whether the folder at path holds tests' parts or fakes, or
// what isn't Go of the module's.
func fake(path string) bool {
	base := filepath.Base(path)
	switch {
	case path == ".":
		return false
	case base == "testdata" || base == "node_modules" || strings.HasPrefix(base, "."):
		return true
	case strings.HasSuffix(base, "test"):
		return true
	}
	p := filepath.ToSlash(path)
	return p == "model/fakeprovider" || p == "internal/stdioagent"
}

// funcName is a function's name, a method's with its receiver's type:
// Type.Method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}
