// Package benchwasm holds `make bench-wasm` (mk/bench-wasm.mk): the cost of
// running a tool in a sandboxed Go guest instead of in Go. Its main code is
// TestWasmBench, which runs when ADKHOST_BENCH_WASM=1 and prints, last,
//
//		wasm_call_overhead_us=… cold_start_ms=… instance_kib_c=… turn_ratio_wasm_vs_native=…
//
//	  - wasm_call_overhead_us: a warm call of get_weather in the Go SDK
//	    example (sdk/go/examples/weather) through sandbox.Pool, minus the
//	    same call done natively: the same SDK code (adkhost.Handle) and the
//	    same tool function, compiled for the host, on the same encoded input,
//	    with the same host-side encode and strict decode. The difference is
//	    the transport plus Go-on-Wasm being slower than Go.
//	  - cold_start_ms: a fresh process with a warm compilation cache: New,
//	    read the module, Load, Pool and the first get_weather call.
//	  - instance_kib_c: Go heap per idle instance of the C example
//	    (plugins/examples/guardrail-c), its linear memory included.
//	  - turn_ratio_wasm_vs_native: one engine turn (user message, model asks
//	    for get_weather, tool, model answers; scripted model, in-memory
//	    session) with the guest's tool over the same turn with the tool
//	    written in Go: the median of five pairs of one-second runs, each
//	    pair's ratio taken on its own, since the machine's speed drifts.
//	    Every language's row (row) reports its turn ratio so.
//
// The same pieces are Go benchmarks for profiles and benchstat comparisons
// (BenchmarkTurn, BenchmarkTurnC, BenchmarkTurnRust, BenchmarkTurnPython,
// BenchmarkTurnTS, BenchmarkToolCall; they also report cpu-ns/op, the
// process's CPU time, steadier than wall time on a shared machine):
//
//	go test -run '^$' -bench 'Turn|ToolCall' -count 8 ./host/internal/benchwasm/
//
// guestprof.sh [CALLS] [turns] profiles the guest itself: it samples warm
// calls (TestGuestLoop), or with "turns" as many engine turns, with perf
// and attributes the samples that land in the guest's machine code to its
// functions, in µs per call (guestprof.py reads where each function starts
// from wazero's compilation cache and the names from the module's name
// section). A Go CPU profile shows that code only as runtime._ExternalCode.
// Profile turns: between two tool calls of a turn the host's own work
// evicts the guest's code from the CPU's caches (wazero makes about 16 MB
// of machine code of the weather module), and the same call then costs the
// guest about 1.7 times what it costs in a loop of calls, which
// BenchmarkToolCall measures. The eviction also runs the other way:
// BenchmarkTurnShadowC calls the C guest inside the Go tool's turn and
// throws the result away, so the engine's work is the Go turn's. A call
// that costs about 5 µs in a loop then adds about 21 µs to the turn: some
// 8 µs of guest code and the host's encode, decode and pooling, and about
// 13 µs of the Go runtime's allocator and the engine running slower after
// it (a perf profile of both turns, function by function).
package benchwasm
