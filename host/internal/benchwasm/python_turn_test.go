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
// instruction counts per turn (cachegrind) and profiles.
func BenchmarkTurnPython(b *testing.B) {
	rt, _ := benchRuntime(b)
	guestTool, goTool, closeTools := turnTools(b, rt, buildPyWeather(b))
	defer closeTools()
	b.Run("wasm", func(b *testing.B) { b.ReportAllocs(); cpuPerOp(b, turn(guestTool)) })
	b.Run("go", func(b *testing.B) { b.ReportAllocs(); cpuPerOp(b, turn(goTool)) })
}

// buildPyWeather builds pyWeather with modbuild.
func buildPyWeather(b testing.TB) []byte {
	dir := b.TempDir()
	src := filepath.Join(dir, "weather.py")
	if err := os.WriteFile(src, []byte(pyWeather), 0o644); err != nil {
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
