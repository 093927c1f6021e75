package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sandbox"
)

// benchArgs is a tool call of a realistic size: a few hundred bytes of
// JSON each way.
var benchArgs = map[string]any{
	"city": "Zürich", "days": 3.0, "units": "metric",
	"fields": []any{"temperature", "wind", "humidity", "pressure"},
	"note":   "Plan a hike on the Uetliberg if the weather holds; otherwise, museums.",
}

// BenchmarkToolCall compares a warm call of the Go guest's echo tool (the
// host encodes the input, the guest decodes it and encodes its output, the
// host decodes that strictly) with the same JSON work done in Go.
func BenchmarkToolCall(b *testing.B) {
	ctx := context.Background()
	r := newRuntime(b)
	gp := pool(b, r, load(b, r, goGuest(b, "goguest")), sandbox.PoolConfig{Grants: goGrants(b), Limits: sandbox.Limits{MaxInstances: 1}})
	in := toolCall("echo", benchArgs)

	b.Run("go-guest", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, err := sandbox.Invoke[abi.ToolCallOutput](ctx, gp, abi.HookToolCall, in, nil)
			if err != nil || out.Result == nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go-native", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			data, _ := abi.Encode(in) // host
			var gin abi.ToolCallInput // guest
			if err := json.Unmarshal(data, &gin); err != nil {
				b.Fatal(err)
			}
			res, _ := abi.Encode(&abi.ToolCallOutput{Result: gin.Args})
			var out abi.ToolCallOutput // host
			if err := abi.Decode(res, &out, 0); err != nil || out.Result == nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go-guest-raw", func(b *testing.B) {
		// The transport and the guest's work, without the host's JSON.
		data, _ := abi.Encode(in)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := gp.Call(ctx, abi.HookToolCall, data, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("wat-echo-raw", func(b *testing.B) {
		// The floor: alloc, write, call, read, free twice, in a guest that
		// does no work.
		wp := pool(b, r, load(b, r, watFile(b, "misbehave.wat")), sandbox.PoolConfig{Limits: sandbox.Limits{MaxInstances: 1}})
		data, _ := abi.Encode(in)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := wp.Call(ctx, abi.HookToolCall, data, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkInstance measures a new instance of the Go guest: the time to
// instantiate it (its _initialize included) and run a first call, and the
// Go heap a live instance holds, its linear memory included.
func BenchmarkInstance(b *testing.B) {
	ctx := context.Background()
	r := newRuntime(b)
	m := load(b, r, goGuest(b, "goguest"))
	grants := goGrants(b)
	in := toolCall("echo", benchArgs)
	first := func(owner string) *sandbox.Pool {
		p, err := r.Pool(ctx, m, sandbox.PoolConfig{Owner: owner, Grants: grants, Limits: sandbox.Limits{MaxInstances: 1}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := sandbox.Invoke[abi.ToolCallOutput](ctx, p, abi.HookToolCall, in, nil); err != nil {
			b.Fatal(err)
		}
		return p
	}
	for i := 0; b.Loop(); i++ {
		first(fmt.Sprint("owner-", i)).Close(ctx)
	}
	b.StopTimer()

	// The heap of live instances.
	const live = 8
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	pools := make([]*sandbox.Pool, live)
	for i := range pools {
		pools[i] = first(fmt.Sprint("live-", i))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/live/(1<<20), "MiB/instance")
	for _, p := range pools {
		p.Close(ctx)
	}
}
