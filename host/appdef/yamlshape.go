package appdef

import (
	"fmt"

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
