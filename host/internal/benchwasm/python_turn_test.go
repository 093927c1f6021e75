package benchwasm

import (
	"context"
	"testing"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sandbox"
)

// BenchmarkTurnPython is BenchmarkTurn with the Python guest (pyWeather,
// built as `adkhost module build` builds it; needs make python-runtime):
// the engine turn of make bench-wasm's turn_ratio_python_vs_go, for
// instruction counts per turn (cachegrind) and profiles; floor is the
// turn with pyFloor, the runtime's and the SDK's share of it.
func BenchmarkTurnPython(b *testing.B) {
	rt, _ := benchRuntime(b)
	guestTool, goTool, closeTools := turnTools(b, rt, buildPy(b, pyWeather))
	defer closeTools()
	floorTool, _, closeFloor := turnTools(b, rt, buildPy(b, pyFloor))
	defer closeFloor()
	b.Run("wasm", func(b *testing.B) { b.ReportAllocs(); cpuPerOp(b, turn(guestTool)) })
	b.Run("floor", func(b *testing.B) { b.ReportAllocs(); cpuPerOp(b, turn(floorTool)) })
	b.Run("go", func(b *testing.B) { b.ReportAllocs(); cpuPerOp(b, turn(goTool)) })
}

// pyFloor is TestPythonFloorBench's get_weather: no context, no state, a
// constant result the turn accepts.
const pyFloor = `from adkhost import tool


@tool
def get_weather(city: str, days: int = 1) -> dict:
    """Returns the weather forecast of a city."""
    return {"days": []}
`

// buildPy builds the Python module source with modbuild.
func buildPy(b testing.TB, source string) []byte {
	wasm, err := buildSource(b.TempDir(), "weather.py", source)
	if err != nil {
		b.Fatal(err)
	}
	return wasm
}

// BenchmarkPyFloorCall is a warm call of pyFloor through the pool, the
// guest's own share without the engine: with the input a turn sends
// (its context with the user's content; full), and the same without the
// context (bare), which the runtime then has no member to cut out.
// Cachegrind, 2026-12-02: full 60k instructions a call, 56k of them in
// the guest; bare 50k, 44k in the guest: finding where the 390-byte
// context ends costs the guest about 11k (about 26 instructions a byte;
// scanning eight bytes at a time did not help: the context's strings are
// short, a quote every few bytes).
func BenchmarkPyFloorCall(b *testing.B) {
	ctx := context.Background()
	rt, _ := benchRuntime(b)
	m, err := rt.Load(ctx, buildPy(b, pyFloor))
	if err != nil {
		b.Fatal(err)
	}
	p, err := rt.Pool(ctx, m, sandbox.PoolConfig{Owner: "bench", Limits: sandbox.Limits{MaxInstances: 1}})
	if err != nil {
		b.Fatal(err)
	}
	in := input()
	in.Context.UserContent = &abi.Content{Role: "user", Parts: []*abi.Part{{Text: "Weather in Paris?"}}}
	full, err := abi.AppendEncode(nil, in)
	if err != nil {
		b.Fatal(err)
	}
	bare := []byte(`{"abiVersion":1,"tool":"get_weather","args":{"city":"Paris","days":3}}`)
	for _, c := range []struct {
		name string
		in   []byte
	}{{"full", full}, {"bare", bare}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				out, err := p.Call(ctx, abi.HookToolCall, c.in, abi.UnavailableHost{})
				if err != nil || string(out) != `{"result":{"days":[]},"abiVersion":1}` {
					b.Fatalf("%s %v", out, err)
				}
			}
		})
	}
}
