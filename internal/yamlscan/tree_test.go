package yamlscan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

func TestCheckTree(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"plain", "a: &x 1\nb: *x\nc: !!str s\nd: !!float 0.5\ne: !!int 3\nf: !!map {g: !!seq [1]}\n", ""},
		{"aliases within the bound", "a: &x 1\nb: [" + strings.Repeat("*x, ", 99) + "*x]\n", ""},
		{"too many aliases", "a: &x 1\nb: [" + strings.Repeat("*x, ", 100) + "*x]\n", "2:405: too many YAML aliases (101; at most 100)"},
		{"alias in an anchor", "a: &x [1]\nb: &y [*x]\nc: *y\n", "2:8: the value of anchor &y holds an alias: aliases may not nest"},
		{"binary", "a: !!binary aGk=\n", "1:4: YAML tag !!binary is not supported: plain here; remove the tag"},
		{"python", "a: [!!python/object/apply:os.system [ls]]\n", "YAML tag !!python/object/apply:os.system is not supported"},
		{"local", "a: !local x\n", "YAML tag !local is not supported"},
		{"verbatim other", "a: !<tag:example.com,2000:x> x\n", "YAML tag !<tag:example.com,2000:x> is not supported"},
		{"verbatim core", "a: !<tag:yaml.org,2002:str> x\n", ""},
		{"str on a number", "a: !!str 5\n", `1:4: YAML tag !!str on a number: write the value as it is, or quote it for a string ("5")`},
		{"int on a string", "a: !!int '5'\n", "YAML tag !!int on a string: write the value without the tag"},
		// yaml.safe_load reads 5.0; a reader of the AST read the integer 5.
		{"float on an integer", "a: !!float 5\n", "1:4: YAML tag !!float on the integer 5: write 5.0 for a float, or drop the tag for an integer"},
		{"float on a float", "a: !!float 5.0\nb: !!float .inf\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parser.ParseBytes([]byte(tc.yaml), 0)
			if err != nil {
				t.Fatal(err)
			}
			p := CheckTree(f.Docs[0].Body, 100, "plain here")
			switch {
			case tc.want == "" && p != nil:
				t.Errorf("%d:%d %s", p.Line, p.Column, p.Msg)
			case tc.want != "" && p == nil:
				t.Errorf("passed, want %q", tc.want)
			case tc.want != "":
				if got := fmtProblem(p); !strings.Contains(got, tc.want) {
					t.Errorf("%s, want %q", got, tc.want)
				}
			}
		})
	}
	if p := CheckTree(nil, 100, ""); p != nil {
		t.Errorf("an empty document: %+v", p)
	}
}

func fmtProblem(p *Problem) string { return fmt.Sprintf("%d:%d: %s", p.Line, p.Column, p.Msg) }

// FuzzCheckTree: whatever the parser accepts, CheckTree returns without
// panicking, and what it passes holds at most the aliases it allows.
func FuzzCheckTree(f *testing.F) {
	for _, s := range []string{"a: &x 1\nb: *x\n", "a: &x [*y]\n", "a: !!float 5\n", "- !foo {a: !!str 1}\n", "a: &x !!str b\nc: *x\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if Check(data, 50) != nil {
			return
		}
		file, err := parser.ParseBytes(data, 0)
		if err != nil {
			return
		}
		for _, d := range file.Docs {
			if d == nil || CheckTree(d.Body, 3, "x") != nil {
				continue
			}
			n := 0
			ast.Walk(visitFunc(func(n2 ast.Node) {
				if _, ok := n2.(*ast.AliasNode); ok {
					n++
				}
			}), d.Body)
			if n > 3 {
				t.Fatalf("passed with %d aliases", n)
			}
		}
	})
}
