// Package yamlscan checks hostile YAML before it is read: Check scans the
// bytes before they are parsed, for an upper bound of their nesting depth
// (the parser's memory grows faster than the file with nesting) and the
// flow-mapping keys that goccy/go-yaml, the parser of app definitions,
// scripted models and conformance scenarios, misreads; CheckTree checks
// the parsed document's aliases and tags before its values are read.
package yamlscan

import (
	"bytes"
	"fmt"
)

// Problem is what Check found, at a 1-based line and column.
type Problem struct {
	Line, Column int
	Msg          string
}

// Check scans data once and returns the first problem:
//
//   - the nesting may be deeper than maxDepth: flow brackets open at once,
//     plus the line's indentation and its "- ", "? " and ": " indicators,
//     a bound never below the real depth;
//   - a plain key of a flow mapping holds ':' followed by a non-space, as
//     in {user:plan: basic}: YAML 1.2 (and PyYAML, as google-adk reads it)
//     gives the key "user:plan", goccy/go-yaml the key "user" with the
//     value "plan: basic". Quoting the key ({"user:plan": basic}) or block
//     style reads the same everywhere.
//
// Quoted strings, comments, plain scalars in block context (where brackets
// are text) and block scalars (| and >) are skipped.
func Check(data []byte, maxDepth int) *Problem {
	s := scanner{data: data, maxDepth: maxDepth, blockIndent: -1}
	for lineNo, line := range bytes.Split(data, []byte("\n")) {
		if p := s.line(lineNo+1, line); p != nil {
			return p
		}
	}
	if s.worst > maxDepth {
		return &Problem{Line: s.worstLine, Column: 1,
			Msg: fmt.Sprintf("YAML nests too deep (about %d levels here; at most %d)", s.worst, maxDepth)}
	}
	return nil
}

type scanner struct {
	data             []byte
	maxDepth         int
	flow             []byte // open flow brackets
	quote            byte   // inside a quoted scalar (it may span lines)
	keyPos           bool   // at the key of a flow mapping entry
	plainStart       int    // column where the current plain flow key began, or -1
	blockIndent      int    // inside a block scalar: lines indented more than this; -1 otherwise
	pendingBlock     bool   // the line ended with a block scalar header
	worst, worstLine int
}

func (s *scanner) line(n int, line []byte) *Problem {
	indent := 0
	for indent < len(line) && line[indent] == ' ' {
		indent++
	}
	blank := indent == len(line) || line[indent] == '#' || line[indent] == '\r'
	if s.pendingBlock {
		s.pendingBlock = false
		if !blank {
			s.blockIndent = indent - 1
		}
	}
	if s.blockIndent >= 0 && (blank || indent > s.blockIndent) && s.quote == 0 && len(s.flow) == 0 {
		return nil // a line of a block scalar's text
	}
	s.blockIndent = -1
	indicators := 0
	note := func() {
		if d := len(s.flow) + indent + indicators; d > s.worst {
			s.worst, s.worstLine = d, n
		}
	}
	valueStart := true // a value may begin here: brackets open flow collections
	plainBlock := false
	s.plainStart = -1
	for i := indent; i < len(line); i++ {
		c := line[i]
		col := i + 1
		if s.quote != 0 {
			switch {
			case s.quote == '"' && c == '\\':
				i++
			case c == s.quote:
				if s.quote == '\'' && i+1 < len(line) && line[i+1] == '\'' {
					i++ // '' is an escaped quote
				} else {
					s.quote = 0
				}
			}
			continue
		}
		next := byte('\n')
		if i+1 < len(line) {
			next = line[i+1]
		}
		spaceNext := next == ' ' || next == '\n' || next == '\r' || next == '\t'
		inFlow := len(s.flow) > 0
		switch {
		case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return nil // the rest is a comment
		case plainBlock && !(c == ':' && spaceNext):
			continue // text of a plain scalar in block context
		case (c == '|' || c == '>') && valueStart && !inFlow:
			if rest := bytes.TrimSpace(line[i+1:]); len(rest) == 0 || rest[0] == '#' ||
				bytes.Trim(rest, "+-0123456789") == nil || len(bytes.Trim(rest, "+-0123456789")) == 0 {
				s.pendingBlock = true
				return nil
			}
			plainBlock = true
		case (c == '"' || c == '\'') && (valueStart || inFlow):
			s.quote = c
			s.keyPos = false
		case (c == '[' || c == '{') && (valueStart || inFlow):
			s.flow = append(s.flow, c)
			s.keyPos = c == '{'
			s.plainStart = -1
			valueStart = true
			note()
			continue
		case (c == ']' || c == '}') && inFlow:
			s.flow = s.flow[:len(s.flow)-1]
			s.keyPos = false
		case c == ',' && inFlow:
			s.keyPos = s.flow[len(s.flow)-1] == '{'
			s.plainStart = -1
			valueStart = true
			continue
		case (c == '-' || c == '?' || c == ':') && spaceNext:
			indicators++
			if c == ':' {
				s.keyPos = false
			}
			plainBlock = false
			valueStart = true
			note()
			continue
		case c == ':' && inFlow && s.keyPos && s.plainStart >= 0 && next != ',' && next != '}' && next != ']':
			return &Problem{Line: n, Column: s.plainStart,
				Msg: "a flow mapping key holds ':' followed by a non-space; quote the key (e.g. {\"user:plan\": basic}) or use block style: YAML parsers disagree on this form"}
		case c == ' ' || c == '\t':
			continue
		default:
			if inFlow {
				if s.keyPos && s.plainStart < 0 {
					s.plainStart = col
				}
			} else if valueStart {
				plainBlock = true
			}
		}
		valueStart = false
	}
	return nil
}
