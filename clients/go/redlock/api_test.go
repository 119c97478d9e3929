package redlock

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The package's API is what docs/clients.md says it is: its exported identifiers are exactly
// the list under "Go's exports", and every Go name in the names table exists in it.

var codeSpan = regexp.MustCompile("`([^`]+)`")

func readDocs(t *testing.T) string {
	t.Helper()
	docs, err := os.ReadFile("../../../docs/clients.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(docs)
}

// parsePackage parses the package's source files (tests excluded).
func parsePackage(t *testing.T) *ast.Package {
	t.Helper()
	pkgs, err := parser.ParseDir(token.NewFileSet(), ".", func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return pkgs["redlock"]
}

// exported returns the package's exported identifiers, and the exported methods of each
// exported type, read from its source files (tests excluded).
func exported(t *testing.T) (names map[string]bool, methods map[string]bool) {
	t.Helper()
	names, methods = map[string]bool{}, map[string]bool{}
	for _, file := range parsePackage(t).Files {
		for _, decl := range file.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					if d.Name.IsExported() {
						names[d.Name.Name] = true
					}
					continue
				}
				recv := d.Recv.List[0].Type
				if star, ok := recv.(*ast.StarExpr); ok {
					recv = star.X
				}
				if id, ok := recv.(*ast.Ident); ok && id.IsExported() && d.Name.IsExported() {
					methods[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							names[s.Name.Name] = true
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								names[n.Name] = true
							}
						}
					}
				}
			}
		}
	}
	return names, methods
}

func sorted(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestExportedIdentifiersAreExactlyTheDocumentedOnes(t *testing.T) {
	docs := readDocs(t)
	start := strings.Index(docs, "\nGo's exports")
	if start < 0 {
		t.Fatal(`docs/clients.md has no paragraph starting "Go's exports"`)
	}
	paragraph := docs[start:]
	if end := strings.Index(paragraph[1:], "\n\n"); end >= 0 {
		paragraph = paragraph[:end+1]
	}
	documented := map[string]bool{}
	for _, m := range codeSpan.FindAllStringSubmatch(paragraph, -1) {
		if m[1] != "redlock" && m[1] != "api_test.go" {
			documented[m[1]] = true
		}
	}
	names, _ := exported(t)
	if got, want := strings.Join(sorted(names), " "), strings.Join(sorted(documented), " "); got != want {
		t.Errorf("exported identifiers differ from docs/clients.md\n package: %s\n    docs: %s", got, want)
	}
}

func TestEveryGoNameInTheNamesTableExists(t *testing.T) {
	docs := readDocs(t)
	table := docs[strings.Index(docs, "\n| what | Java | Python | Node.js | Go |"):]
	names, methods := exported(t)
	ident := regexp.MustCompile(`^(?:[a-z]+\.)?([A-Z]\w*)`)
	rows := 0
	for _, line := range strings.Split(table, "\n")[2:] {
		if !strings.HasPrefix(line, "| ") {
			break
		}
		rows++
		cells := strings.Split(line, " | ")
		for _, m := range codeSpan.FindAllStringSubmatch(cells[4], -1) {
			name := ident.FindStringSubmatch(m[1])
			if name != nil && !names[name[1]] && !methods[name[1]] {
				t.Errorf("the names table's %q row names %q, which the package does not have", cells[0][2:], m[1])
			}
		}
	}
	if rows < 10 {
		t.Fatalf("found %d rows of the names table", rows)
	}
}

// Two parameters of one type in a row compile just as well swapped: Acquire(ctx, resource,
// ttl, wait) took its ttl and wait so. Every exported function and method takes at most one
// value of a type in a row; what a call may leave out is a named option (WithWait, WithValue).
func TestNoExportedFunctionTakesTwoParametersOfOneTypeInARow(t *testing.T) {
	for _, file := range parsePackage(t).Files {
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || !fn.Name.IsExported() || !exportedReceiver(fn) {
				continue
			}
			var params []string
			for _, field := range fn.Type.Params.List {
				for range field.Names {
					params = append(params, types.ExprString(field.Type))
				}
			}
			for i := 1; i < len(params); i++ {
				if params[i] == params[i-1] {
					t.Errorf("%s takes two %s in a row (parameters %d and %d): name one of them with an option",
						fn.Name.Name, params[i], i, i+1)
				}
			}
		}
	}
}

func exportedReceiver(fn *ast.FuncDecl) bool {
	if fn.Recv == nil {
		return true
	}
	recv := fn.Recv.List[0].Type
	if star, ok := recv.(*ast.StarExpr); ok {
		recv = star.X
	}
	id, ok := recv.(*ast.Ident)
	return ok && id.IsExported()
}
