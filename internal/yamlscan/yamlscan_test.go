package yamlscan

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"ordinary config", "name: a\nmodel: m\nsub_agents:\n  - config_path: b.yaml\nstate: {user:plan: x}\n", "flow mapping key holds ':'"},
		{"prefixed key, block style", "state:\n  user:plan: basic\n", ""},
		{"prefixed key, quoted", "state: {\"user:plan\": basic, 'app:x': 1}\n", ""},
		{"url value in a flow mapping", "x: {url: http://a.b/c, n: 1}\n", ""},
		{"prefixed key after a comma", "x: {a: 1, temp:k: 2}\n", "flow mapping key holds ':'"},
		{"colon in a comment", "x: {a: 1} # {user:plan: basic}\n", ""},
		{"colon in a quoted value", "x: {a: \"b:c: d\"}\n", ""},
		{"deep flow", "x: " + strings.Repeat("[", 600) + strings.Repeat("]", 600), "nests too deep"},
		{"deep compact sequences", "x:\n" + strings.Repeat("- ", 600) + "y\n", "nests too deep"},
		{"brackets in a plain value", "instruction: Use {user:plan} and [x] please\n", ""},
		{"brackets in a block scalar", "description: >\n  template {temp:scratch: x}\n  more {a:b: c}\nname: x\n", ""},
		{"literal block with chomping", "d: |-\n  {user:plan: basic}\nx: {user:plan: basic}\n", "flow mapping key holds ':'"},
		{"flow after a block scalar", "d: >\n  text\nx: {user:plan: 1}\n", "flow mapping key holds ':'"},
		{"moderate nesting", "x: " + strings.Repeat("[", 50) + strings.Repeat("]", 50), ""},
	} {
		p := Check([]byte(tc.yaml), 500)
		switch {
		case tc.want == "" && p != nil:
			t.Errorf("%s: %d:%d %s", tc.name, p.Line, p.Column, p.Msg)
		case tc.want != "" && (p == nil || !strings.Contains(p.Msg, tc.want)):
			t.Errorf("%s: %+v, want %q", tc.name, p, tc.want)
		}
	}
}
