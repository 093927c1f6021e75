package appdef

import "github.com/adkhost/adkhost/internal/yamlscan"

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
	// maxModelNameBytes bounds a model name: the longest, a Vertex AI
	// endpoint path, stays under 200 bytes.
	maxModelNameBytes = 256
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

// checkTree bounds the aliases of a parsed file, refuses an anchor whose
// value holds an alias, and refuses a YAML tag that would change what its
// value means (internal/yamlscan.CheckTree): the loader reads values
// without their tags, so "!!binary aGk=" was the text "aGk=", "!!str 5"
// the number 5, "!!float 5" the integer 5, and "!!python/object:..." or
// "!foo" loaded quietly, where google-adk's yaml.safe_load reads bytes,
// the text "5", 5.0, or refuses the file.
func checkTree(d *doc) *Error {
	if p := yamlscan.CheckTree(d.body, maxYAMLAliases, "a definition is plain YAML (google-adk reads it with yaml.safe_load)"); p != nil {
		return &Error{File: d.file, Line: p.Line, Column: p.Column, Msg: p.Msg}
	}
	return nil
}
