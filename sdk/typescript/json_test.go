package typescript_test

import (
	"encoding/json"
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
