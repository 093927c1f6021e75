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
test: vet
	@set -o pipefail; { rc=0; $(GO) test -race -count=1 -json ./... || rc=1; \
	  for m in $(GUEST_MODULES); do (cd $$m && $(GO) test -race -count=1 -json ./...) || rc=1; done; \
	  (cd bench && $(GO) vet ./... && $(GO) test -count=1 -json -run Test ./...) || rc=1; \
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

# Session store on bbolt (store/bolt): raw bbolt commit rate on this disk,
# serial and 64-way appends, Get of the last 20 of 100k events. The last
# line is `append_serial_ratio=… append_concurrent_speedup=… get_recent20_us=…`.
.PHONY: bench-store
bench-store:
	@out=$$(mktemp); \
	  ADKHOST_BENCH_STORE=1 $(GO) test -count=1 -run '^TestStoreBench$$' -v -timeout 10m ./store/bolt/ >$$out 2>&1; rc=$$?; \
	  grep -v '^append_serial_ratio=' $$out; grep '^append_serial_ratio=' $$out; rm -f $$out; exit $$rc

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
