package python_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sandbox"
)

// TestPlainDumps: the runtime writes the ABI's JSON of plain values in C
// (_adkhost.dumps), byte for byte as the json module does, and leaves
// everything else (enums, Obj, sets, non-str keys, subclasses, NaN, lone
// surrogates, deep nesting, cycles) to the json module's path, which
// converts or refuses it as before.
func TestPlainDumps(t *testing.T) {
	ctx := context.Background()
	p := toolPool(t, "tests/json_plain.py")
	raw, err := p.Call(ctx, abi.HookToolCall, []byte(`{"tool":"check","args":{}}`), abi.UnavailableHost{})
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Error  string          `json:"error"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Error != "" {
		t.Fatalf("%s (%v)", raw, err)
	}
	if got := string(out.Result); got != `{"plain":18,"left":13}` {
		t.Errorf("check: %s", got)
	}
}

// toolPool builds the Python module src and returns a pool of it with no
// grants, closed with the test.
func toolPool(t testing.TB, src string) *sandbox.Pool {
	t.Helper()
	wasm := buildModule(t, src)
	ctx := context.Background()
	rt, err := sandbox.New(ctx, sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	m, err := rt.Load(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	p, err := rt.Pool(ctx, m, sandbox.PoolConfig{Owner: "t"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(ctx) })
	return p
}
