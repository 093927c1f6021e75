package conformance

import (
	"encoding/json"
	"fmt"
	"github.com/adkhost/adkhost/internal/keyorder"
	"github.com/adkhost/adkhost/internal/yamlscan"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// A scenario file is parsed into a tree of nodes that keep their position
// (for error messages) and the order of mapping keys (tool parameters and
// schema properties are ordered). Plain scalars are resolved with the YAML
// 1.2 core schema, as FORMAT.md §1.1 requires, independently of how the YAML
// library would resolve them.

type nodeKind int

const (
	kindNull nodeKind = iota
	kindBool
	kindInt
	kindFloat
	kindString
	kindMap
	kindList
)

func (k nodeKind) String() string {
	return [...]string{"null", "bool", "int", "float", "string", "mapping", "list"}[k]
}

// node is one YAML value with its position.
type node struct {
	kind      nodeKind
	file      string
	line, col int

	b bool
	i int64
	f float64
	s string

	keys  []string // kindMap, in document order
	vals  []*node
	items []*node // kindList
}

func (n *node) pos() string { return fmt.Sprintf("%s:%d:%d", n.file, n.line, n.col) }

// get returns the value of key in a mapping, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != kindMap {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

func (n *node) has(key string) bool { return n.get(key) != nil }

// scenarioError is a malformed scenario (a harness failure).
type scenarioError struct{ msg string }

func (e *scenarioError) Error() string { return e.msg }

// failf aborts decoding with a positioned error; decode functions recover it.
func failf(n *node, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if n != nil {
		msg = n.pos() + ": " + msg
	}
	panic(&scenarioError{msg})
}

// catch turns a failf panic into an error.
func catch(err *error) {
	if r := recover(); r != nil {
		if se, ok := r.(*scenarioError); ok {
			*err = se
			return
		}
		panic(r)
	}
}

func parseYAMLFile(path string) (*node, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseYAML(path, data)
}

func parseYAML(file string, data []byte) (root *node, err error) {
	// The same guard as app definitions: goccy/go-yaml misreads a flow
	// mapping key such as {user:plan: basic}.
	if p := yamlscan.Check(data, 10000); p != nil {
		return nil, fmt.Errorf("%s:%d:%d: %s", file, p.Line, p.Column, p.Msg)
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: YAML error: %v", file, err)
	}
	if len(f.Docs) != 1 || f.Docs[0].Body == nil {
		return nil, fmt.Errorf("%s: expected exactly one YAML document", file)
	}
	defer catch(&err)
	c := &yamlConv{file: file, anchors: map[string]*node{}}
	return c.conv(f.Docs[0].Body), nil
}

type yamlConv struct {
	file    string
	anchors map[string]*node
}

var (
	reNull  = regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)
	reBool  = regexp.MustCompile(`^(?:true|True|TRUE|false|False|FALSE)$`)
	reInt   = regexp.MustCompile(`^[-+]?[0-9]+$`)
	reFloat = regexp.MustCompile(`^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
)

func (c *yamlConv) at(tk *token.Token) *node {
	n := &node{file: c.file}
	if tk != nil && tk.Position != nil {
		n.line, n.col = tk.Position.Line, tk.Position.Column
	}
	return n
}

// resolvePlain applies the YAML 1.2 core schema to a plain scalar.
func (c *yamlConv) resolvePlain(n *node, s string) *node {
	switch {
	case reNull.MatchString(s):
		n.kind = kindNull
	case reBool.MatchString(s):
		n.kind, n.b = kindBool, s[0] == 't' || s[0] == 'T'
	case reInt.MatchString(s):
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			failf(n, "integer %s out of range", s)
		}
		n.kind, n.i = kindInt, v
	case reFloat.MatchString(s):
		n.kind = kindFloat
		l := strings.ToLower(s)
		switch {
		case strings.HasSuffix(l, ".inf"):
			n.f = math.Inf(1)
			if strings.HasPrefix(l, "-") {
				n.f = math.Inf(-1)
			}
		case l == ".nan":
			n.f = math.NaN()
		default:
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				failf(n, "bad float %s", s)
			}
			n.f = v
		}
	default:
		n.kind, n.s = kindString, s
	}
	return n
}

func (c *yamlConv) conv(an ast.Node) *node {
	switch v := an.(type) {
	case *ast.MappingNode:
		n := c.at(v.GetToken())
		if len(v.Values) > 0 {
			n = c.at(v.Values[0].Key.GetToken())
		}
		n.kind = kindMap
		for _, mv := range v.Values {
			c.addPair(n, mv)
		}
		return n
	case *ast.MappingValueNode:
		n := c.at(v.Key.GetToken())
		n.kind = kindMap
		c.addPair(n, v)
		return n
	case *ast.SequenceNode:
		n := c.at(v.GetToken())
		n.kind = kindList
		for _, it := range v.Values {
			n.items = append(n.items, c.conv(it))
		}
		if n.items == nil {
			n.items = []*node{}
		}
		return n
	case *ast.AnchorNode:
		n := c.conv(v.Value)
		c.anchors[v.Name.GetToken().Value] = n
		return n
	case *ast.AliasNode:
		name := v.Value.GetToken().Value
		n, ok := c.anchors[name]
		if !ok {
			failf(c.at(v.GetToken()), "unknown alias *%s", name)
		}
		return n
	case *ast.TagNode:
		n := c.at(v.GetToken())
		if v.Start.Value == "!!str" {
			inner := c.conv(v.Value)
			if inner.kind == kindMap || inner.kind == kindList {
				failf(n, "!!str on a collection")
			}
			n.kind, n.s = kindString, scalarText(v.Value)
			return n
		}
		failf(n, "YAML tag %s is not supported", v.Start.Value)
	case *ast.LiteralNode:
		n := c.at(v.GetToken())
		n.kind, n.s = kindString, v.Value.Value
		return n
	case *ast.StringNode:
		n := c.at(v.GetToken())
		switch v.GetToken().Type {
		case token.SingleQuoteType, token.DoubleQuoteType:
			n.kind, n.s = kindString, v.Value
			return n
		}
		return c.resolvePlain(n, v.Value)
	case *ast.NullNode, *ast.BoolNode, *ast.IntegerNode, *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		tk := an.GetToken()
		n := c.at(tk)
		if tk == nil {
			n.kind = kindNull
			return n
		}
		return c.resolvePlain(n, tk.Value)
	case nil:
		return &node{file: c.file, kind: kindNull}
	}
	failf(c.at(an.GetToken()), "unsupported YAML construct %T", an)
	return nil
}

func scalarText(an ast.Node) string {
	switch v := an.(type) {
	case *ast.StringNode:
		return v.Value
	case *ast.LiteralNode:
		return v.Value.Value
	}
	if tk := an.GetToken(); tk != nil {
		return tk.Value
	}
	return ""
}

func (c *yamlConv) addPair(m *node, mv *ast.MappingValueNode) {
	if mv.Key.IsMergeKey() {
		failf(c.at(mv.Key.GetToken()), "merge keys (<<) are not supported")
	}
	k := c.conv(mv.Key)
	var key string
	switch k.kind {
	case kindString:
		key = k.s
	case kindInt, kindBool, kindFloat, kindNull:
		failf(k, "mapping keys must be strings, got %s", k.kind)
	default:
		failf(k, "mapping keys must be strings")
	}
	if m.has(key) {
		failf(k, "duplicate key %q", key)
	}
	m.keys = append(m.keys, key)
	m.vals = append(m.vals, c.conv(mv.Value))
}

// value converts a node to a plain Go value: nil, bool, int64, float64,
// string, []any, map[string]any. This is what scenario data (state, args,
// returns) looks like once it reaches the engine.
func (n *node) value() any {
	if n == nil {
		return nil
	}
	switch n.kind {
	case kindNull:
		return nil
	case kindBool:
		return n.b
	case kindInt:
		return n.i
	case kindFloat:
		return n.f
	case kindString:
		return n.s
	case kindList:
		out := make([]any, len(n.items))
		for i, it := range n.items {
			out[i] = it.value()
		}
		return out
	case kindMap:
		out := make(map[string]any, len(n.keys))
		for i, k := range n.keys {
			out[k] = n.vals[i].value()
		}
		return out
	}
	return nil
}

// keyOrder is the key-order hint (internal/keyorder) of the value of n:
// the order of its mappings' keys in the document, which value()'s Go maps
// lose and Python's dicts keep. nil when every mapping is sorted already.
func (n *node) keyOrder() json.RawMessage {
	var skel func(b []byte, n *node) []byte
	skel = func(b []byte, n *node) []byte {
		switch {
		case n == nil:
			return append(b, '0')
		case n.kind == kindMap:
			b = append(b, '{')
			for i, k := range n.keys {
				if i > 0 {
					b = append(b, ',')
				}
				kb, _ := json.Marshal(k)
				b = append(b, kb...)
				b = append(b, ':')
				b = skel(b, n.vals[i])
			}
			return append(b, '}')
		case n.kind == kindList:
			b = append(b, '[')
			for i, it := range n.items {
				if i > 0 {
					b = append(b, ',')
				}
				b = skel(b, it)
			}
			return append(b, ']')
		}
		return append(b, '0')
	}
	return keyorder.Of(skel(nil, n))
}
