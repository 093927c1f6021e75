# Cost of a sandboxed Go guest (host/internal/benchwasm): a warm tool call
# over the same SDK code run natively, a cold start with the disk
# compilation cache, the memory of an idle C instance, and an engine turn
# with the guest's tool over the same turn with a Go tool. The last line is
# `wasm_call_overhead_us=… cold_start_ms=… instance_kib_c=… turn_ratio_wasm_vs_native=…`;
# before it, the Python row (TestPythonBench, sdk/python: size, first
# compile, load from cache, warm call p50/p99, heap per idle instance, turn
# ratio vs a Go tool), which needs make python-runtime, the Python floor row
# (TestPythonFloorBench: the same for a tool that does no work, the cost of
# any Python call), and the TypeScript
# row measured the same way (TestTypeScriptBench, sdk/typescript), which
# needs make ts-runtime, and the Rust row (TestRustBench, sdk/rust's
# testdata/weather built with sdk/rust/cargo-wasm), and the C row
# (TestCBench, testdata/weather.c against sdk/c, built with clang), and the
# AssemblyScript row (TestAssemblyScriptBench, testdata/weather_as.ts against
# sdk/assemblyscript, built with its asc). The last line gathers the
# issue's summary from those rows: `wasm_turn_ratio_go=… wasm_turn_ratio_c=…
# wasm_turn_ratio_rust=… wasm_turn_ratio_python=… wasm_turn_ratio_ts=…
# go_first_call_ms=…` (n/a where a row failed).
.PHONY: bench-wasm
bench-wasm: python-runtime ts-runtime
	@test -x sdk/assemblyscript/node_modules/.bin/asc || plugins/examples/install-deps.sh as
	@out=$$(mktemp); \
	  ADKHOST_BENCH_WASM=1 $(GO) test -count=1 -run '^(TestWasmBench|TestPythonBench|TestPythonFloorBench|TestTypeScriptBench|TestRustBench|TestCBench|TestAssemblyScriptBench)$$' -v -timeout 20m ./host/internal/benchwasm/ >$$out 2>&1; rc=$$?; \
	  grep -v '^wasm_call_overhead_us=' $$out; grep '^wasm_call_overhead_us=' $$out; \
	  v() { sed -n "s/\(^\|.* \)$$1=\([^ ]*\).*/\2/p" $$out | tail -1 | grep . || echo n/a; }; \
	  echo "wasm_turn_ratio_go=$$(v turn_ratio_wasm_vs_native) wasm_turn_ratio_c=$$(v turn_ratio_c_vs_go) wasm_turn_ratio_rust=$$(v turn_ratio_rust_vs_go) wasm_turn_ratio_python=$$(v turn_ratio_python_vs_go) wasm_turn_ratio_ts=$$(v turn_ratio_typescript_vs_go) go_first_call_ms=$$(v cold_start_ms)"; \
	  rm -f $$out; exit $$rc
