package typescript_test

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/host"
	"github.com/adkhost/adkhost/internal/testkit"
)

// TestJSONStringify: the runtime's JSON.stringify (a fast path over plain
// objects and arrays in runtime/main.c, QuickJS's own for the rest) answers
// as Node does for every value of tests/json_cases.js, inside a tool call:
// escapes, key order with index keys, toJSON on objects, arrays and
// prototypes, getters, proxies, sparse arrays, cycles, replacers.
func TestJSONStringify(t *testing.T) {
	wasm := buildModule(t, "tests/json_stringify.ts")
	want, err := os.ReadFile("tests/json_stringify.golden")
	if err != nil {
		t.Fatal(err)
	}
	m := load(t, newRuntime(t), wasm, host.ModuleConfig{})
	w := testkit.NewWorld(t, engine.LlmAgentConfig{Tools: m.Tools()}, nil,
		testkit.Calls(testkit.Call("c1", "stringify", map[string]any{})), testkit.Reply("ok"))
	var got struct{ Lines []string }
	if err := json.Unmarshal([]byte(response(t, w.MustTurn("go"), 1)), &got); err != nil {
		t.Fatal(err)
	}
	wantLines := strings.Split(strings.TrimSuffix(string(want), "\n"), "\n")
	if len(got.Lines) != len(wantLines) {
		t.Fatalf("%d lines, want %d:\n%s", len(got.Lines), len(wantLines), strings.Join(got.Lines, "\n"))
	}
	for i, l := range got.Lines {
		if l != wantLines[i] {
			t.Errorf("line %d\n got %s\nwant %s", i, l, wantLines[i])
		}
	}
}

// TestInputParse: the runtime's parser of a hook's input (runtime/main.c)
// gives the tool the values JSON.parse gives for the same JSON: key order
// with index keys, __proto__ as an own key, escapes, UTF-8, -0, numbers
// past int32 and float64's, deep nesting (left to QuickJS).
func TestInputParse(t *testing.T) {
	wasm := buildModule(t, "tests/input_parse.ts")
	m := load(t, newRuntime(t), wasm, host.ModuleConfig{})
	deep := any("bottom")
	for range 80 {
		deep = []any{deep}
	}
	values := map[string]any{
		"empty":   map[string]any{},
		"keys":    map[string]any{"b": 1, "a": 2, "10": 3, "2": 4, "": 5, "__proto__": map[string]any{"x": 1}, "toString": "s", "4294967295": 6},
		"strings": []any{"", "plain", `quote" back\ slash/`, "\n\r\t\b\f\x00\x1f\x7f", "<html>&", "é € 😀 ÿ", "\u2028\u2029", strings.Repeat("é", 500)},
		"numbers": []any{0, math.Copysign(0, -1), 1, -1, 2147483647, 2147483648, -2147483649, 999999999, 1000000000, 9007199254740993, 1e21, 1e-7, 0.1, -1.5e300, 5e-324},
		"others":  []any{true, false, nil, []any{}, []any{[]any{}}, map[string]any{"é€😀": []any{1, "x"}}},
		"deep":    deep,
	}
	for name, v := range values {
		text, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		w := testkit.NewWorld(t, engine.LlmAgentConfig{Tools: m.Tools()}, nil,
			testkit.Calls(testkit.Call("c1", "compare", map[string]any{"value": v, "text": string(text)})), testkit.Reply("ok"))
		if got := response(t, w.MustTurn("go"), 1); got != `{"diff":""}` {
			t.Errorf("%s: %s", name, got)
		}
	}
}
