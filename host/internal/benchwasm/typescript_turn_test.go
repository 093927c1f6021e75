package benchwasm

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/adkhost/adkhost/modbuild"
)

// BenchmarkTurnTS is BenchmarkTurn with the TypeScript guest (tsWeather),
// the turn of TestTypeScriptBench's ratio. It needs the TypeScript runtime
// (make ts-runtime).
func BenchmarkTurnTS(b *testing.B) {
	rt, _ := benchRuntime(b)
	benchTurns(b, rt, buildTSWeather(b))
}

// buildTSWeather builds tsWeather with modbuild, as `adkhost module build`
// does, once per process.
func buildTSWeather(t testing.TB) []byte {
	t.Helper()
	wasm, err := tsWeatherModule()
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}

var tsWeatherModule = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "adkhost-bench-ts-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "weather.ts")
	if err := os.WriteFile(src, []byte(tsWeather), 0o644); err != nil {
		return nil, err
	}
	out := filepath.Join(dir, "weather.wasm")
	var log bytes.Buffer
	if err := modbuild.Build(context.Background(), modbuild.Options{Source: src, Output: out, Stderr: &log}); err != nil {
		return nil, fmt.Errorf("%v\n%s", err, log.String())
	}
	return os.ReadFile(out)
})
