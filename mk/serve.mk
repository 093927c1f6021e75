# Run API throughput (host/server/internal/benchserve): 64 concurrent
# clients post turns to /run over loopback against bbolt, the appdef
# reactive scripted model and one Wasm tool call per turn, a new session
# every 10 turns. The last line is
# `run_turns_per_s=… p99_ms=…`.
.PHONY: bench-serve
bench-serve:
	$(GO) run ./host/server/internal/benchserve
