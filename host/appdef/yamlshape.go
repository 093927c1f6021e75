package appdef

import (
	"fmt"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/adkhost/adkhost/internal/yamlscan"
)

// Limits on a definition file's YAML, checked before it is parsed (depth)
// and right after (aliases): the parser's memory grows faster than the
// file with nesting (25,000 levels of `[[[...]]]`, 48 KiB, cost 813 MiB),
// and aliases to aliases grow what the loader walks exponentially.
const (
	// maxYAMLDepth bounds an estimate of a file's nesting that is never
	// below the real depth: flow brackets open at once, plus a line's
	// indentation and block indicators. Real agent configs stay under 30.
	maxYAMLDepth = 500
	// maxYAMLAliases bounds the aliases of one file; an anchor's value may
	// not itself hold an alias, so what the loader walks stays within the
	// file's size times this.
	maxYAMLAliases = 100
	// maxAgents bounds the agents of one definition.
	maxAgents = 1000
	// maxErrors bounds the errors one load reports.
	maxErrors = 100
)

// checkYAMLDepth refuses, before parsing, a file that may nest deeper than
// maxYAMLDepth, and the flow-mapping keys goccy/go-yaml misreads
// ({user:plan: basic}), with the position (internal/yamlscan).
func checkYAMLDepth(file string, data []byte) *Error {
	if p := yamlscan.Check(data, maxYAMLDepth); p != nil {
		return &Error{File: file, Line: p.Line, Column: p.Column, Msg: p.Msg}
	}
	return nil
}

// checkAliases bounds the aliases of a parsed file and refuses an anchor
// whose value holds an alias.
func checkAliases(d *doc) *Error {
	var aliases []ast.Node
	ast.Walk(visitFunc(func(n ast.Node) {
		if _, ok := n.(*ast.AliasNode); ok {
			aliases = append(aliases, n)
		}
	}), d.body)
	if len(aliases) > maxYAMLAliases {
		l, c := position(aliases[maxYAMLAliases])
		return &Error{File: d.file, Line: l, Column: c, Msg: fmt.Sprintf("too many YAML aliases (%d; at most %d)", len(aliases), maxYAMLAliases)}
	}
	for name, v := range d.anchors {
		var nested ast.Node
		ast.Walk(visitFunc(func(n ast.Node) {
			if _, ok := n.(*ast.AliasNode); ok && nested == nil {
				nested = n
			}
		}), v)
		if nested != nil {
			l, c := position(nested)
			return &Error{File: d.file, Line: l, Column: c, Msg: fmt.Sprintf("the value of anchor &%s holds an alias: aliases may not nest", name)}
		}
	}
	return nil
}

// visitFunc is an ast.Visitor calling f on every node.
type visitFunc func(ast.Node)

func (f visitFunc) Visit(n ast.Node) ast.Visitor {
	f(n)
	return f
}

// coreTagKinds are the YAML 1.1 core tags a definition may carry, each
// with the node kinds it leaves as they are: such a tag only says what
// the value is anyway.
var coreTagKinds = map[string][]ast.NodeType{
	"str":   {ast.StringType, ast.LiteralType},
	"int":   {ast.IntegerType},
	"float": {ast.FloatType, ast.InfinityType, ast.NanType, ast.IntegerType},
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

// checkTags refuses a YAML tag that would change what its value means.
// The loader reads values without their tags, so "!!binary aGk=" was the
// text "aGk=", "!!str 5" the number 5, and "!!python/object:..." or "!foo"
// loaded quietly, where google-adk's yaml.safe_load reads bytes, the text
// "5", or refuses the file. A core tag on the kind of value it names
// ("!!str x", "!!map {...}") says nothing more and is let through.
func checkTags(d *doc) *Error {
	var bad *Error
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
			bad = &Error{File: d.file, Line: l, Column: c, Msg: fmt.Sprintf("YAML tag %s is not supported: a definition is plain YAML (google-adk reads it with yaml.safe_load); remove the tag", tag)}
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
		if short == "str" {
			hint = fmt.Sprintf("write the value as it is, or quote it for a string (%q)", v.String())
		}
		bad = &Error{File: d.file, Line: l, Column: c, Msg: fmt.Sprintf("YAML tag %s on %s: %s", tag, what, hint)}
	}), d.body)
	return bad
}
