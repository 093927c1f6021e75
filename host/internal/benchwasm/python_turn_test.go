package benchwasm

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/adkhost/adkhost/modbuild"
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
	dir := b.TempDir()
	src := filepath.Join(dir, "weather.py")
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(dir, "weather.wasm")
	var log bytes.Buffer
	if err := modbuild.Build(context.Background(), modbuild.Options{Source: src, Output: out, Stderr: &log}); err != nil {
		b.Fatalf("%v\n%s", err, log.String())
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		b.Fatal(err)
	}
	return wasm
}
