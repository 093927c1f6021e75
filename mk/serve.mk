# Run API throughput (host/server/internal/benchserve): 64 concurrent
# clients post turns to /run over loopback against bbolt, the appdef
# reactive scripted model and one Wasm tool call per turn, a new session
# every 10 turns. The last line is
# `run_turns_per_s=… p99_ms=…`. BENCHSERVE_FLAGS passes flags (e.g.
# -store memory for store/mem, -cpuprofile FILE).
BENCHSERVE_FLAGS ?=
.PHONY: bench-serve
bench-serve:
	$(GO) run ./host/server/internal/benchserve $(BENCHSERVE_FLAGS)

# store/postgres against google-adk and bbolt (store/postgres/internal/benchpg)
# on a throwaway PostgreSQL cluster with fsync on: one writer's appends,
# adkhost's SessionService vs google-adk 2.13's DatabaseSessionService
# (asyncpg) on one database; turns over /run (16 clients, scripted model,
# one Wasm tool call per turn) on bbolt, on PostgreSQL with one replica and
# with two, with every process's CPU per turn; three alternating rounds of
# each. The last line, the ratios of the medians, is
# `pg_append_vs_adk_python=… pg_cpu_per_turn_2rep_vs_1=… pg_vs_bolt_turns=…`.
.PHONY: bench-postgres
bench-postgres: python-venv-postgres
	$(GO) run ./store/postgres/internal/benchpg -python $(abspath $(CONFORMANCE_VENV))/bin/python
