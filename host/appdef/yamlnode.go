package appdef

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/adkhost/adkhost/internal/keyorder"
)

// Definitions are read from goccy/go-yaml's AST rather than decoded into
// structs, so that every error can name the file, line, column and dotted
// field path it is about, and several can be reported at once.

// doc is one parsed file of a definition.
type doc struct {
	file    string
	body    ast.Node
	anchors map[string]ast.Node
}

// parseDoc parses one file. A syntax error comes back as an *Error at its
// position.
func parseDoc(file string, data []byte) (*doc, *Error) {
	if e := checkYAMLDepth(file, data); e != nil {
		return nil, e
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		e := &Error{File: file, Msg: "invalid YAML: " + err.Error(), Err: err}
		var ye yaml.Error
		if errors.As(err, &ye) {
			e.Msg = "invalid YAML: " + ye.GetMessage()
			if tk := ye.GetToken(); tk != nil && tk.Position != nil {
				e.Line, e.Column = tk.Position.Line, tk.Position.Column
			}
		}
		return nil, e
	}
	d := &doc{file: file, anchors: map[string]ast.Node{}}
	var bodies []ast.Node
	for _, dn := range f.Docs {
		if dn != nil && dn.Body != nil {
			bodies = append(bodies, dn.Body)
		}
	}
	if len(bodies) > 1 {
		l, c := position(bodies[1])
		return nil, &Error{File: file, Line: l, Column: c, Msg: "a definition file holds one YAML document, this one has several"}
	}
	if len(bodies) == 1 {
		d.body = bodies[0]
		ast.Walk(anchorCollector(d.anchors), d.body)
		if e := checkTree(d); e != nil {
			return nil, e
		}
	}
	return d, nil
}

// anchorCollector records every anchor of a file by name, for aliases.
type anchorCollector map[string]ast.Node

func (a anchorCollector) Visit(n ast.Node) ast.Visitor {
	if an, ok := n.(*ast.AnchorNode); ok && an.Name != nil {
		a[an.Name.GetToken().Value] = an.Value
	}
	return a
}

// val is a value of a file at a field path.
type val struct {
	d    *doc
	n    ast.Node // with anchors, aliases and tags resolved; nil when absent
	path string
}

// at returns the value of node n at path.
func (d *doc) at(n ast.Node, path string) val { return val{d: d, n: d.resolve(n), path: path} }

// resolve strips anchors and tags and follows aliases (bounded, so that a
// self-referencing alias cannot loop).
func (d *doc) resolve(n ast.Node) ast.Node {
	for range 32 {
		switch x := n.(type) {
		case *ast.AnchorNode:
			n = x.Value
		case *ast.TagNode:
			n = x.Value
		case *ast.AliasNode:
			if x.Value == nil {
				return n
			}
			target, ok := d.anchors[x.Value.GetToken().Value]
			if !ok {
				return n
			}
			n = target
		default:
			return n
		}
	}
	return n
}

// child is the value at path.key or path[i].
func (v val) key(k string, n ast.Node) val {
	p := k
	if v.path != "" {
		p = v.path + "." + k
	}
	return v.d.at(n, p)
}

func (v val) index(i int, n ast.Node) val {
	return v.d.at(n, v.path+"["+strconv.Itoa(i)+"]")
}

// errf returns an *Error located at v.
func (v val) errf(format string, args ...any) *Error {
	l, c := position(v.n)
	return &Error{File: v.d.file, Line: l, Column: c, Field: v.path, Msg: fmt.Sprintf(format, args...)}
}

// wrap returns an *Error located at v with cause err.
func (v val) wrap(err error, format string, args ...any) *Error {
	e := v.errf(format, args...)
	e.Err = err
	return e
}

// position is where n starts: for a block mapping its first key, as the
// mapping's own token is the first ':'.
func position(n ast.Node) (line, col int) {
	switch x := n.(type) {
	case nil:
		return 0, 0
	case *ast.MappingNode:
		if len(x.Values) > 0 && !x.IsFlowStyle {
			return position(x.Values[0])
		}
	case *ast.MappingValueNode:
		return position(x.Key)
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return 0, 0
	}
	return tk.Position.Line, tk.Position.Column
}

// entry is one key of a mapping.
type entry struct {
	key string
	// keyAt locates the key itself (for unknown-key errors), val the value.
	keyAt val
	val   val
}

// isNull reports whether v is absent or YAML null.
func (v val) isNull() bool {
	if v.n == nil {
		return true
	}
	_, ok := v.n.(*ast.NullNode)
	return ok
}

// kind names v's YAML type for error messages.
func (v val) kind() string {
	switch v.n.(type) {
	case nil, *ast.NullNode:
		return "null"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.StringNode, *ast.LiteralNode:
		return "a string"
	case *ast.IntegerNode:
		return "an integer"
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "a number"
	case *ast.BoolNode:
		return "a boolean"
	default:
		return v.n.Type().String()
	}
}

// mapping returns v's entries in order, merge keys (<<) expanded, or false
// when v is not a mapping.
func (v val) mapping() ([]entry, bool) {
	var values []*ast.MappingValueNode
	switch x := v.n.(type) {
	case *ast.MappingNode:
		values = x.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{x}
	default:
		return nil, false
	}
	var out []entry
	for _, mv := range values {
		if mv.Key != nil && mv.Key.IsMergeKey() {
			out = append(out, v.merged(mv.Value)...)
			continue
		}
		k := keyString(mv.Key)
		out = append(out, entry{key: k, keyAt: v.key(k, mv.Key), val: v.key(k, mv.Value)})
	}
	return dedupe(out), true
}

// merged returns the entries a merge key brings in: those of one mapping
// or of a list of mappings.
func (v val) merged(n ast.Node) []entry {
	src := val{d: v.d, n: v.d.resolve(n), path: v.path}
	if seq, ok := src.n.(*ast.SequenceNode); ok {
		var out []entry
		for _, item := range seq.Values {
			m, _ := val{d: v.d, n: v.d.resolve(item), path: v.path}.mapping()
			out = append(out, m...)
		}
		return out
	}
	m, _ := src.mapping()
	return m
}

// dedupe keeps the last entry of each key, as a mapping's own keys
// override those merged in before them.
func dedupe(in []entry) []entry {
	last := map[string]int{}
	for i, e := range in {
		last[e.key] = i
	}
	out := in[:0:0]
	for i, e := range in {
		if last[e.key] == i {
			out = append(out, e)
		}
	}
	return out
}

func keyString(k ast.MapKeyNode) string {
	switch x := k.(type) {
	case *ast.StringNode:
		return x.Value
	case *ast.MappingKeyNode:
		if x.Value != nil {
			return x.Value.GetToken().Value
		}
	case nil:
		return ""
	}
	return k.GetToken().Value
}

// list returns v's items, or false when v is not a list.
func (v val) list() ([]val, bool) {
	seq, ok := v.n.(*ast.SequenceNode)
	if !ok {
		return nil, false
	}
	out := make([]val, len(seq.Values))
	for i, n := range seq.Values {
		out[i] = v.index(i, n)
	}
	return out, true
}

// str returns v as a string, or false when it is not one.
func (v val) str() (string, bool) {
	switch x := v.n.(type) {
	case *ast.StringNode:
		return x.Value, true
	case *ast.LiteralNode:
		if x.Value != nil {
			return x.Value.Value, true
		}
		return "", true
	}
	return "", false
}

// boolean returns v as a bool, or false when it is not one.
func (v val) boolean() (b, ok bool) {
	x, ok := v.n.(*ast.BoolNode)
	if !ok {
		return false, false
	}
	return x.Value, true
}

// integer returns v as an int, or false when it is not one.
func (v val) integer() (int64, bool) {
	x, ok := v.n.(*ast.IntegerNode)
	if !ok {
		return 0, false
	}
	switch n := x.Value.(type) {
	case int64:
		return n, true
	case uint64:
		if n > math.MaxInt64 {
			return 0, false
		}
		return int64(n), true
	}
	return 0, false
}

// number returns v as a float64 (an integer or a float), or false.
func (v val) number() (float64, bool) {
	if i, ok := v.integer(); ok {
		return float64(i), true
	}
	switch x := v.n.(type) {
	case *ast.FloatNode:
		return x.Value, true
	case *ast.InfinityNode:
		return x.Value, true
	case *ast.NanNode:
		return math.NaN(), true
	}
	return 0, false
}

// keyOrder is the key-order hint (internal/keyorder) of plain(): the
// order of v's mapping keys as written, which plain's Go maps lose; nil
// when every mapping is sorted.
func (v val) keyOrder() json.RawMessage {
	var skel func(b []byte, v val) []byte
	skel = func(b []byte, v val) []byte {
		if m, ok := v.mapping(); ok {
			b = append(b, '{')
			for i, e := range m {
				if i > 0 {
					b = append(b, ',')
				}
				kb, _ := json.Marshal(e.key)
				b = append(b, kb...)
				b = append(b, ':')
				b = skel(b, e.val)
			}
			return append(b, '}')
		}
		if l, ok := v.list(); ok {
			b = append(b, '[')
			for i, e := range l {
				if i > 0 {
					b = append(b, ',')
				}
				b = skel(b, e)
			}
			return append(b, ']')
		}
		return append(b, '0')
	}
	return keyorder.Of(skel(nil, v))
}

// plain converts v to plain Go values as encoding/json would decode them:
// map[string]any, []any, string, float64, bool, nil.
func (v val) plain() any {
	if m, ok := v.mapping(); ok {
		out := make(map[string]any, len(m))
		for _, e := range m {
			out[e.key] = e.val.plain()
		}
		return out
	}
	if l, ok := v.list(); ok {
		out := make([]any, len(l))
		for i, e := range l {
			out[i] = e.plain()
		}
		return out
	}
	if s, ok := v.str(); ok {
		return s
	}
	if b, ok := v.boolean(); ok {
		return b
	}
	if f, ok := v.number(); ok {
		return f
	}
	return nil
}
