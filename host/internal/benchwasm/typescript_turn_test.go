package benchwasm

import (
	"os"
	"sync"
	"testing"
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
	return buildSource(dir, "weather.ts", tsWeather)
})
