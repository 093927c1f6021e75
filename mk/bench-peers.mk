# The server against the servers users would run instead (bench/cmd/peers):
# google-adk 2.13's `adk api_server` (in-memory sessions, and its default
# SQLite file), adk-go v2's REST server (bench/cmd/adkgoserver) and
# `adkhost serve` with the Go weather module, one load generator for all,
# 64 clients over loopback, alternating runs. google-adk comes from PyPI
# into bench/.venv-adk. Last line: `serve_vs_adk_python=… serve_vs_adkgo=…
# serve_python_tool_vs_go_tool=…`. PEERS_FLAGS passes flags (e.g.
# -duration 5s -runs 1). The Python row serves the same tool built from
# plugins/examples/weather-py (which needs make python-runtime); set
# PEERS_PYTHON_MODULE= (empty) to leave that row out.
BENCH_VENV ?= bench/.venv-adk
PEERS_FLAGS ?=
PEERS_PYTHON_MODULE ?= plugins/examples/build/weather-py.wasm
.PHONY: bench-peers
bench-peers: build-bin
	@test -x $(BENCH_VENV)/bin/adk || { python3 -m venv $(BENCH_VENV) && $(BENCH_VENV)/bin/pip install -q -r bench/peers/adkpy/requirements.txt; }
	cd bench && $(GO) build -o ../bin/adkgoserver ./cmd/adkgoserver && $(GO) build -o ../bin/peers ./cmd/peers
	$(MAKE) --no-print-directory -C plugins/examples weather $(if $(PEERS_PYTHON_MODULE),weather-py) GO=$(GO) >/dev/null
	bin/peers -adkhost bin/adkhost -adkgo bin/adkgoserver -adk $(BENCH_VENV)/bin/adk -peers bench/peers \
	  -go-module plugins/examples/build/weather.wasm $(if $(PEERS_PYTHON_MODULE),-python-module $(PEERS_PYTHON_MODULE)) $(PEERS_FLAGS)
