package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestRunReachesRulesThroughTheRegistry: Run (lint.go) calls no function
// declared in a rule file (one whose init registers a rule or a step):
// what a rule does for the lint as a whole is a step of the registry,
// run by phase, so that the driver names no single rule.
func TestRunReachesRulesThroughTheRegistry(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	declaredIn := map[string]string{} // function or method name -> file
	ruleFiles := map[string]bool{}
	var run *ast.FuncDecl
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if fd.Name.Name == "init" && fd.Recv == nil {
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					if call, ok := n.(*ast.CallExpr); ok {
						if id, ok := call.Fun.(*ast.Ident); ok && (id.Name == "registerRule" || id.Name == "registerStep") {
							ruleFiles[name] = true
						}
					}
					return true
				})
				continue
			}
			declaredIn[fd.Name.Name] = name
			if fd.Name.Name == "Run" && fd.Recv == nil {
				run = fd
			}
		}
	}
	if run == nil {
		t.Fatal("no func Run in package lint")
	}
	if len(ruleFiles) < 10 {
		t.Fatalf("found %d rule files, want the files registering rules and steps: %v", len(ruleFiles), ruleFiles)
	}
	if ruleFiles["lint.go"] {
		t.Fatal("lint.go registers a rule or a step: it is the driver")
	}
	var bad []string
	calls := 0
	ast.Inspect(run.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		var name string
		switch fn := call.Fun.(type) {
		case *ast.Ident:
			name = fn.Name
		case *ast.SelectorExpr:
			if x, ok := fn.X.(*ast.Ident); ok && (x.Name == "c" || x.Name == "r") {
				name = fn.Sel.Name // a method of checkCtx or Report
			}
		}
		if file, ok := declaredIn[name]; ok {
			calls++
			if ruleFiles[file] {
				bad = append(bad, name+" ("+file+")")
			}
		}
		return true
	})
	if calls == 0 {
		t.Fatal("Run calls no function of the package: the test no longer reads it")
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("Run calls functions of rule files directly: %s; register them as steps (registerStep) instead", strings.Join(bad, ", "))
	}
}
