package yamlscan

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// CheckTree checks a document goccy/go-yaml parsed, before anything reads
// its values, and returns the first problem:
//
//   - more than maxAliases aliases, or an anchor whose value holds an
//     alias: aliases of aliases grow what a reader walks exponentially
//     (nine levels of nine made a 521-byte file 700 MB), while aliases of
//     plain values grow it at most maxAliases times the file;
//   - a YAML tag that would change what its value means: readers of the
//     AST or of goccy's decoder drop or honour tags differently from
//     yaml.safe_load (!!binary read as its base64 text or as bytes, !!str
//     5 as a number, !!python/object:… and local !foo tags loaded
//     quietly). A core tag on the kind of value it names (!!str x,
//     !!map {...}) says nothing more and passes. plain completes the
//     refusal's message: "YAML tag !x is not supported: <plain>; remove
//     the tag".
func CheckTree(body ast.Node, maxAliases int, plain string) *Problem {
	if body == nil {
		return nil
	}
	if p := checkAliases(body, maxAliases); p != nil {
		return p
	}
	return checkTags(body, plain)
}

func checkAliases(body ast.Node, maxAliases int) *Problem {
	var aliases []ast.Node
	anchors := map[string]ast.Node{}
	ast.Walk(visitFunc(func(n ast.Node) {
		switch x := n.(type) {
		case *ast.AliasNode:
			aliases = append(aliases, n)
		case *ast.AnchorNode:
			if x.Name != nil {
				anchors[x.Name.GetToken().Value] = x.Value
			}
		}
	}), body)
	if len(aliases) > maxAliases {
		l, c := position(aliases[maxAliases])
		return &Problem{Line: l, Column: c, Msg: fmt.Sprintf("too many YAML aliases (%d; at most %d)", len(aliases), maxAliases)}
	}
	for _, name := range slices.Sorted(maps.Keys(anchors)) {
		var nested ast.Node
		ast.Walk(visitFunc(func(n ast.Node) {
			if _, ok := n.(*ast.AliasNode); ok && nested == nil {
				nested = n
			}
		}), anchors[name])
		if nested != nil {
			l, c := position(nested)
			return &Problem{Line: l, Column: c, Msg: fmt.Sprintf("the value of anchor &%s holds an alias: aliases may not nest", name)}
		}
	}
	return nil
}

// coreTagKinds are the YAML 1.1 core tags a document may carry, each with
// the node kinds it leaves as they are: such a tag only says what the
// value is anyway. !!float is not let through on an integer: yaml.safe_load
// reads "!!float 5" as 5.0, a reader of the AST as the integer 5.
var coreTagKinds = map[string][]ast.NodeType{
	"str":   {ast.StringType, ast.LiteralType},
	"int":   {ast.IntegerType},
	"float": {ast.FloatType, ast.InfinityType, ast.NanType},
	"bool":  {ast.BoolType},
	"null":  {ast.NullType},
	"map":   {ast.MappingType},
	"seq":   {ast.SequenceType},
}

// kindNames name node kinds in checkTags' messages.
var kindNames = map[ast.NodeType]string{
	ast.StringType: "a string", ast.LiteralType: "a string", ast.IntegerType: "a number",
	ast.FloatType: "a number", ast.InfinityType: "a number", ast.NanType: "a number",
	ast.BoolType: "a boolean", ast.NullType: "null", ast.MappingType: "a mapping", ast.SequenceType: "a list",
}

func checkTags(body ast.Node, plain string) *Problem {
	var bad *Problem
	ast.Walk(visitFunc(func(n ast.Node) {
		tn, ok := n.(*ast.TagNode)
		if !ok || bad != nil || tn.Start == nil || tn.Start.Position == nil {
			return
		}
		tag := tn.Start.Value
		short, core := strings.CutPrefix(tag, "!!")
		if !core {
			short, core = strings.CutPrefix(tag, "!<tag:yaml.org,2002:")
			short, core = strings.CutSuffix(short, ">")
		}
		kinds, known := coreTagKinds[short]
		l, c := tn.Start.Position.Line, tn.Start.Position.Column
		if !core || !known {
			bad = &Problem{Line: l, Column: c, Msg: fmt.Sprintf("YAML tag %s is not supported: %s; remove the tag", tag, plain)}
			return
		}
		v := tn.Value
		for range 32 {
			an, ok := v.(*ast.AnchorNode)
			if !ok {
				break
			}
			v = an.Value
		}
		if v == nil {
			return
		}
		if _, isAlias := v.(*ast.AliasNode); isAlias || slices.Contains(kinds, v.Type()) {
			return
		}
		what := kindNames[v.Type()]
		if what == "" {
			what = "a " + v.Type().String()
		}
		hint := "write the value without the tag"
		switch {
		case short == "str":
			hint = fmt.Sprintf("write the value as it is, or quote it for a string (%q)", v.String())
		case short == "float" && v.Type() == ast.IntegerType:
			what = "the integer " + v.String()
			hint = fmt.Sprintf("write %s.0 for a float, or drop the tag for an integer", v.String())
		}
		bad = &Problem{Line: l, Column: c, Msg: fmt.Sprintf("YAML tag %s on %s: %s", tag, what, hint)}
	}), body)
	return bad
}

// visitFunc is an ast.Visitor calling f on every node.
type visitFunc func(ast.Node)

func (f visitFunc) Visit(n ast.Node) ast.Visitor {
	f(n)
	return f
}

// position is a node's 1-based line and column, or 0, 0.
func position(n ast.Node) (int, int) {
	if n == nil {
		return 0, 0
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return 0, 0
	}
	return tk.Position.Line, tk.Position.Column
}
