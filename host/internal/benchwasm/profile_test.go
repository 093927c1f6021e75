package benchwasm

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sandbox"
	"github.com/adkhost/adkhost/sdk/go/adkhost"
)

// The benchmarks below are the pieces of make bench-wasm as Go benchmarks,
// for profiles and benchstat comparisons of the call path:
//
//	go test -run '^$' -bench 'Turn|ToolCall' -count 8 ./host/internal/benchwasm/ -cpuprofile cpu.out

// cpuPerOp runs fn and reports the process's CPU time per op (cpu-ns/op),
// which a machine shared with other work disturbs less than wall time.
func cpuPerOp(b *testing.B, fn func(b *testing.B)) {
	before := cpuNs()
	fn(b)
	b.ReportMetric(float64(cpuNs()-before)/float64(b.N), "cpu-ns/op")
}

func cpuNs() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// benchCacheDir is the compilation cache the benchmarks share.
func benchCacheDir() string { return filepath.Join(os.TempDir(), "adkhost-benchwasm-cache") }

func benchRuntime(b testing.TB) (*sandbox.Runtime, []byte) {
	wasm := buildWeather(b)
	ctx := context.Background()
	// A cache shared by runs, so profiles show calls, not compilation.
	rt, err := sandbox.New(ctx, sandbox.Config{CacheDir: benchCacheDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rt.Close(ctx) })
	return rt, wasm
}

// BenchmarkTurn is one engine turn with the guest's get_weather (wasm) and
// with the same tool written in Go (go).
func BenchmarkTurn(b *testing.B) {
	rt, wasm := benchRuntime(b)
	benchTurns(b, rt, wasm)
}

// benchTurns runs one engine turn with the get_weather of the guest
// module wasm (wasm) and with the same tool written in Go (go).
func benchTurns(b *testing.B, rt *sandbox.Runtime, wasm []byte) {
	guestTool, goTool, closeTools := turnTools(b, rt, wasm)
	defer closeTools()
	b.Run("wasm", func(b *testing.B) { b.ReportAllocs(); cpuPerOp(b, turn(guestTool)) })
	b.Run("go", func(b *testing.B) { b.ReportAllocs(); cpuPerOp(b, turn(goTool)) })
}

// BenchmarkToolCall is a warm get_weather call through sandbox.Invoke
// (wasm), the same SDK code natively with the same host-side encode and
// decode (native), and the transport alone (floor).
func BenchmarkToolCall(b *testing.B) {
	ctx := context.Background()
	rt, wasm := benchRuntime(b)
	m, err := rt.Load(ctx, wasm)
	if err != nil {
		b.Fatal(err)
	}
	p, err := rt.Pool(ctx, m, sandbox.PoolConfig{Owner: "bench", Grants: sandbox.Grants{State: true}, Limits: sandbox.Limits{MaxInstances: 1}})
	if err != nil {
		b.Fatal(err)
	}
	h := &stateHost{state: map[string]json.RawMessage{}}
	in := input()
	check := func(b *testing.B, out *abi.ToolCallOutput) {
		if out.Error != "" || len(out.Result.(map[string]any)["days"].([]any)) != 3 {
			b.Fatalf("output %+v", out)
		}
	}
	b.Run("wasm", func(b *testing.B) {
		b.ReportAllocs()
		cpuPerOp(b, func(b *testing.B) {
			for b.Loop() {
				out, err := sandbox.Invoke[abi.ToolCallOutput](ctx, p, abi.HookToolCall, in, h)
				if err != nil {
					b.Fatal(err)
				}
				check(b, out)
			}
		})
	})
	b.Run("native", func(b *testing.B) {
		restore := adkhost.UseHost(h)
		defer restore()
		b.ReportAllocs()
		cpuPerOp(b, func(b *testing.B) {
			for b.Loop() {
				data, err := abi.Encode(in)
				if err != nil {
					b.Fatal(err)
				}
				raw := adkhost.Handle(abi.HookToolCall, data)
				var out abi.ToolCallOutput
				if err := abi.Decode(raw, &out, 0); err != nil {
					b.Fatal(err)
				}
				check(b, &out)
			}
		})
	})
	b.Run("floor", func(b *testing.B) {
		b.ReportAllocs()
		cpuPerOp(b, func(b *testing.B) {
			for b.Loop() {
				p.Call(ctx, abi.HookToolCall, nil, h)
			}
		})
	})
}

// BenchmarkToolCallC is BenchmarkToolCall's wasm and floor with the C
// guest, whose own work is small: what is left is mostly the host's.
func BenchmarkToolCallC(b *testing.B) {
	ctx := context.Background()
	rt, _ := benchRuntime(b)
	m, err := rt.Load(ctx, buildCWeather(b))
	if err != nil {
		b.Fatal(err)
	}
	p, err := rt.Pool(ctx, m, sandbox.PoolConfig{Owner: "bench", Grants: sandbox.Grants{State: true}, Limits: sandbox.Limits{MaxInstances: 1}})
	if err != nil {
		b.Fatal(err)
	}
	h := &stateHost{state: map[string]json.RawMessage{}}
	in := input()
	b.Run("wasm", func(b *testing.B) {
		b.ReportAllocs()
		cpuPerOp(b, func(b *testing.B) {
			for b.Loop() {
				out, err := sandbox.Invoke[abi.ToolCallOutput](ctx, p, abi.HookToolCall, in, h)
				if err != nil {
					b.Fatal(err)
				}
				if out.Error != "" || len(out.Result.(map[string]any)["days"].([]any)) != 3 {
					b.Fatalf("output %+v", out)
				}
			}
		})
	})
	b.Run("floor", func(b *testing.B) {
		b.ReportAllocs()
		cpuPerOp(b, func(b *testing.B) {
			for b.Loop() {
				p.Call(ctx, abi.HookToolCall, nil, h)
			}
		})
	})
}

// BenchmarkInstanceStart is what a new instance of the Go guest costs
// before and during its first get_weather call: instantiation (memory,
// data segments), the guest's _initialize (the Go runtime and the package
// inits, the SDK's tool registration among them), the call, and closing
// the instance. A compiled module is shared, as in a process whose
// module is loaded: the cold start's Load is not in it.
func BenchmarkInstanceStart(b *testing.B) {
	ctx := context.Background()
	rt, wasm := benchRuntime(b)
	m, err := rt.Load(ctx, wasm)
	if err != nil {
		b.Fatal(err)
	}
	h := &stateHost{state: map[string]json.RawMessage{}}
	in := input()
	b.ReportAllocs()
	i := 0
	cpuPerOp(b, func(b *testing.B) {
		for b.Loop() {
			i++
			p, err := rt.Pool(ctx, m, sandbox.PoolConfig{Owner: "start-" + strconv.Itoa(i), Grants: sandbox.Grants{State: true}, Limits: sandbox.Limits{MaxInstances: 1}})
			if err != nil {
				b.Fatal(err)
			}
			out, err := sandbox.Invoke[abi.ToolCallOutput](ctx, p, abi.HookToolCall, in, h)
			if err != nil || out.Error != "" {
				b.Fatalf("first call: %v %+v", err, out)
			}
			p.Close(ctx)
		}
	})
}
