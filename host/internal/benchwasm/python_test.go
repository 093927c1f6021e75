package benchwasm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/modbuild"
	"github.com/adkhost/adkhost/sandbox"
)

// pyWeather is the benchmark's get_weather in Python, as its Go twin
// (getWeather) behaves.
const pyWeather = `import adkhost
from adkhost import tool, ToolContext

adkhost.capabilities("state")


@tool
def get_weather(city: str, days: int = 1, tool_context: ToolContext = None) -> dict:
    """Returns the weather forecast of a city."""
    city = city.strip()
    days = max(days, 1)
    if days > 3:
        raise ValueError(f"at most 3 days, not {days}")
    tool_context.state["user:last_city"] = city
    return {"city": city, "days": [{"summary": "sunny", "highC": 21.0 + i} for i in range(days)]}
`

// TestPythonBench is the Python row of make bench-wasm: module size, first
// compile, load from the compile cache (a new runtime in this process),
// warm call p50/p99, linear memory and Go heap per idle instance, and one
// engine turn with the Python tool over the same turn with a Go tool. It
// needs the Python runtime (make python-runtime).
func TestPythonBench(t *testing.T) {
	enabled(t)
	sourceRow(t, "python", "weather.py", pyWeather)
}

// sourceRow builds file (source) with modbuild, as `adkhost module build`
// does, and prints the language's row of make bench-wasm.
func sourceRow(t *testing.T, lang, file, source string) {
	start := time.Now()
	wasm, err := buildSource(t.TempDir(), file, source)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: build %.1f s (module build, runtime already built)", lang, time.Since(start).Seconds())
	row(t, lang, wasm)
}

// buildSource writes source to dir/file and builds it with modbuild, as
// `adkhost module build` does.
func buildSource(dir, file, source string) ([]byte, error) {
	src := filepath.Join(dir, file)
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		return nil, err
	}
	out := filepath.Join(dir, "weather.wasm")
	var log bytes.Buffer
	if err := modbuild.Build(context.Background(), modbuild.Options{Source: src, Output: out, Stderr: &log}); err != nil {
		return nil, fmt.Errorf("%v\n%s", err, log.String())
	}
	return os.ReadFile(out)
}

// row measures a get_weather module and prints the language's row of make
// bench-wasm: size, first compile, load from the compile cache (a new
// runtime in this process), warm call p50/p99, Go heap per idle instance,
// and one engine turn with the tool over the same turn with a Go tool.
func row(t *testing.T, lang string, wasm []byte) {
	ctx := context.Background()
	cache := filepath.Join(t.TempDir(), "cache")
	load := func() (*sandbox.Runtime, *sandbox.Module, float64) {
		rt, err := sandbox.New(ctx, sandbox.Config{CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		m, err := rt.Load(ctx, wasm)
		if err != nil {
			t.Fatal(err)
		}
		return rt, m, float64(time.Since(start).Microseconds()) / 1e3
	}
	rt1, _, firstMs := load()
	rt1.Close(ctx)
	rt, m, cachedMs := load()
	defer rt.Close(ctx)

	p, err := rt.Pool(ctx, m, sandbox.PoolConfig{Owner: lang, Grants: sandbox.Grants{State: true}})
	if err != nil {
		t.Fatal(err)
	}
	h := &stateHost{state: map[string]json.RawMessage{}}
	call := func() {
		out, err := sandbox.Invoke[abi.ToolCallOutput](ctx, p, abi.HookToolCall, input(), h)
		if err != nil || out.Error != "" {
			t.Fatalf("call: %v %+v", err, out)
		}
	}
	call()
	lat := make([]float64, 0, 3000)
	for range cap(lat) {
		s := time.Now()
		call()
		lat = append(lat, float64(time.Since(s).Nanoseconds())/1e3)
	}
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]

	// Idle instances: n pools of one instance each, after one call.
	const n = 10
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	pools := make([]*sandbox.Pool, n)
	for i := range pools {
		pi, err := rt.Pool(ctx, m, sandbox.PoolConfig{Owner: fmt.Sprint("idle-", i), Grants: sandbox.Grants{State: true}, Limits: sandbox.Limits{MaxInstances: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sandbox.Invoke[abi.ToolCallOutput](ctx, pi, abi.HookToolCall, input(), h); err != nil {
			t.Fatal(err)
		}
		pools[i] = pi
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	instMiB := float64(after.HeapAlloc-before.HeapAlloc) / n / (1 << 20)
	for _, pi := range pools {
		pi.Close(ctx)
	}
	ratio := turnRatio(t, rt, wasm)
	fmt.Printf("%s_size_mib=%.1f first_compile_ms=%.0f cache_load_ms=%.0f call_p50_us=%.1f call_p99_us=%.1f instance_heap_mib=%.1f turn_ratio_%s_vs_go=%.2f\n",
		lang, float64(len(wasm))/(1<<20), firstMs, cachedMs, p50, p99, instMiB, lang, ratio)
}
