# adkhost build and test entry points. `make test` is what CI runs.
GO ?= go
SHELL := bash

.PHONY: test vet build bench-turn fmt

# The repository holds four Go modules: the host (.), abi and sdk/go (each
# a module of its own, so a guest depends on them alone) and bench.
GUEST_MODULES := abi sdk/go

# Every module's tests through internal/testreport, which prints what go
# test prints for packages and failures, then which tests skipped and why
# (a missing toolchain skips outside CI, and fails under CI=true), and a
# closing "tests: N passed, N failed, N skipped".
# -timeout 30m: packages that build every example guest from source pass 10
# minutes on a loaded 2-core machine (seen with -race at load 20); CI has
# 90 minutes and an idle machine takes about 6 for everything.
test: vet
	@set -o pipefail; { rc=0; $(GO) test -race -count=1 -timeout 30m -json ./... || rc=1; \
	  for m in $(GUEST_MODULES); do (cd $$m && $(GO) test -race -count=1 -timeout 30m -json ./...) || rc=1; done; \
	  (cd bench && $(GO) vet ./... && $(GO) test -count=1 -timeout 30m -json -run Test ./...) || rc=1; \
	  exit $$rc; } | $(GO) run ./internal/testreport

vet:
	$(GO) vet ./...
	for m in $(GUEST_MODULES); do (cd $$m && $(GO) vet ./...) || exit 1; done
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# bin/adkhost, stamped with the checkout's version (adkhost version).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
.PHONY: build-bin install
build-bin:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o bin/adkhost ./cmd/adkhost

# Installs adkhost into $(go env GOPATH)/bin.
install:
	$(GO) install -ldflags "-X main.version=$(VERSION)" ./cmd/adkhost

build: build-bin
	$(GO) build ./...
	for m in $(GUEST_MODULES); do (cd $$m && $(GO) build ./...) || exit 1; done

fmt:
	gofmt -w $$(git ls-files '*.go')

# One user turn, adkhost vs adk-go (google.golang.org/adk/v2), in the
# separate bench module; the last line is the ratio summary.
bench-turn:
	cd bench && $(GO) run ./cmd/turnratio

# Conformance harness (conformance/): scenarios run on google-adk (goldens)
# and on adkhost. `make test` compares every scenario with its golden
# (conformance/conformance_test.go); `make conformance` prints each failing
# scenario's first difference, last line `conformance: N passed, M failed`.
CONFORMANCE_VENV ?= conformance/.venv

.PHONY: conformance conformance-golden

conformance:
	$(GO) run ./conformance/cmd/adkconf

# Regenerates conformance/golden/ with the Python runner (google-adk 2.13).
conformance-golden:
	python3 -m venv $(CONFORMANCE_VENV)
	$(CONFORMANCE_VENV)/bin/pip install -q -r conformance/python/requirements.txt
	$(CONFORMANCE_VENV)/bin/python conformance/python/run_scenario.py --dir conformance/scenarios --out conformance/golden

# Session stores (make bench-store): adkhost's bbolt against the stores users
# would pick instead, google-adk 2.13's DatabaseSessionService (SQLite,
# aiosqlite) and SqliteSessionService, and adk-go v2's database service on
# SQLite (bench/cmd/storepeers, bench/peers/store_bench.py; google-adk from
# PyPI into bench/.venv-adk): one writer, 64 writers on distinct sessions,
# Get of a 1,000-event session. First, as information, the raw-bbolt ratios
# of store/bolt (append_serial_ratio=… append_concurrent_speedup=…
# get_recent20_us=…). The last line is `append_vs_adk_sqlite=…
# append64_vs_adk_sqlite=… append_vs_adkgo=… get1000_vs_adk_sqlite=…`.
.PHONY: bench-store
bench-store:
	@test -x $(BENCH_VENV)/bin/python -a -x $(BENCH_VENV)/bin/adk || { python3 -m venv $(BENCH_VENV) && $(BENCH_VENV)/bin/pip install -q -r bench/peers/adkpy/requirements.txt; }
	@out=$$(mktemp); \
	  ADKHOST_BENCH_STORE=1 $(GO) test -count=1 -run '^TestStoreBench$$' -v -timeout 10m ./store/bolt/ >$$out 2>&1; rc=$$?; \
	  grep -v '^append_serial_ratio=' $$out; grep '^append_serial_ratio=' $$out; rm -f $$out; [ $$rc -eq 0 ] || exit $$rc
	cd bench && $(GO) run ./cmd/storepeers -python $(abspath $(BENCH_VENV))/bin/python -script peers/store_bench.py

# Example modules (plugins/examples/): builds each from source into
# plugins/examples/build/<name>.wasm, first installing the toolchains that
# are missing (plugins/examples/install-deps.sh: clang, lld, wasi-libc,
# wabt on Debian). `make test` runs their end-to-end test.
.PHONY: examples examples-deps
examples: examples-deps
	$(MAKE) -C plugins/examples GO=$(GO)

examples-deps:
	plugins/examples/install-deps.sh
conformance-wasm: ; $(GO) run ./conformance/cmd/adkconf -wasm

# Further targets, one file per area (bench-wasm, bench-serve, demo, ...).
-include mk/*.mk
