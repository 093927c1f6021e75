# The TypeScript/JavaScript guest runtime (sdk/typescript, `adkhost module
# build x.ts`), built from the registries with pinned versions and checksums
# into $(TS_RUNTIME) (ignored by git, kept between runs: a rerun rebuilds
# only what changed):
#   cargo/       the rquickjs-sys 0.14.0 crate from crates.io (cargo fetch
#                --locked over sdk/typescript/runtime/crate, whose Cargo.lock
#                pins its checksum; checked again below)
#   quickjs/     QuickJS-ng 0.16.2's C sources, from inside that crate, with
#                one edit (js_free_shape asks main.c's js_shape_keep first)
#   tools/       esbuild 0.28.2 (bundles the user's TypeScript with the SDK),
#                wizer 11.0.3 (snapshots the runtime with the bundle
#                evaluated), typescript 5.9.3 (tsc, for the SDK's type test)
#                and zod 4.6.7 (for its test of zod schemas), from npm
#                (package-lock.json integrity)
#   runtime.wasm QuickJS with the ABI v1 layer (sdk/typescript/runtime/main.c),
#                compiled by the zig of the Python runtime (ziglang from PyPI,
#                mk/python.mk)
#   sdk/         the adkhost TypeScript package, copied
# `adkhost module build` looks here (bin/adkhost finds ../build/ts-runtime
# by itself; elsewhere pass --ts-runtime or set ADKHOST_TS_RUNTIME).
TS_RUNTIME ?= build/ts-runtime
TSRT := $(TS_RUNTIME)
TSRT_SRC := sdk/typescript/runtime
CARGO ?= $(firstword $(wildcard $(HOME)/.cargo/bin/cargo) cargo)
# sha256 of rquickjs-sys-0.14.0.crate (crates.io's checksum, as in Cargo.lock).
RQUICKJS_SYS_SHA256 := cee271d0eeba64f0915b846cb7ae02e16faf3dfdffdca91731101d9d30fe3423
QJS_FILES := quickjs.c libregexp.c libunicode.c dtoa.c

.PHONY: ts-runtime ts-runtime-clean
ts-runtime: $(TSRT)/runtime.wasm $(TSRT)/tools/.stamp $(TSRT)/sdk/.stamp
	@echo "ts runtime: $(TSRT)"

# The SDK is copied only when it changed: module builds running meanwhile
# (tests in parallel) read it.
TSRT_SDK_SRC := $(wildcard sdk/typescript/src/*.ts)
$(TSRT)/sdk/.stamp: $(TSRT_SDK_SRC)
	@rm -rf $(TSRT)/sdk.tmp && mkdir -p $(TSRT)/sdk.tmp && \
	  cp sdk/typescript/src/*.ts $(TSRT)/sdk.tmp/ && \
	  touch $(TSRT)/sdk.tmp/.stamp && rm -rf $(TSRT)/sdk && mv $(TSRT)/sdk.tmp $(TSRT)/sdk

$(TSRT)/quickjs/.stamp: $(TSRT_SRC)/crate/Cargo.toml $(TSRT_SRC)/crate/Cargo.lock mk/typescript.mk
	mkdir -p $(TSRT)/cargo
	CARGO_HOME=$(abspath $(TSRT))/cargo $(CARGO) fetch -q --locked --manifest-path $(TSRT_SRC)/crate/Cargo.toml
	crate=$$(ls $(TSRT)/cargo/registry/cache/*/rquickjs-sys-0.14.0.crate) && \
	  echo "$(RQUICKJS_SYS_SHA256)  $$crate" | sha256sum -c --quiet && \
	  rm -rf $(TSRT)/quickjs && mkdir -p $(TSRT)/quickjs && \
	  tar -xzf $$crate -C $(TSRT)/quickjs --strip-components=2 --wildcards \
	    $(addprefix rquickjs-sys-0.14.0/quickjs/,$(QJS_FILES) '*.h' LICENSE)
	grep -q '#define QJS_VERSION_MINOR 16' $(TSRT)/quickjs/quickjs.h
	@# One edit: js_free_shape offers a hashed shape nobody uses to the
	@# runtime (main.c, js_shape_keep) before freeing it; checked below.
	test "$$(grep -c '^        js_free_shape0(rt, sh);$$' $(TSRT)/quickjs/quickjs.c)" = 1
	sed -i 's/^        js_free_shape0(rt, sh);$$/        if (sh->is_hashed \&\& js_shape_keep(rt, sh)) return; \/\* adkhost \*\/\n        js_free_shape0(rt, sh);/' $(TSRT)/quickjs/quickjs.c
	grep -q 'js_shape_keep(rt, sh)) return; /\* adkhost \*/$$' $(TSRT)/quickjs/quickjs.c
	touch $@

$(TSRT)/tools/.stamp: $(TSRT_SRC)/tools/package.json $(TSRT_SRC)/tools/package-lock.json
	mkdir -p $(TSRT)/tools
	cp $^ $(TSRT)/tools/
	cd $(TSRT)/tools && npm install --no-audit --no-fund --loglevel=error
	touch $@

# QuickJS is compiled into main.c (it sets the stack limit and Math.random's
# seed, which QuickJS keeps private); a 1 MiB stack, placed first by zig's
# linker so that an overflow traps; names stripped.
$(TSRT)/runtime.wasm: $(TSRT_SRC)/main.c sdk/c/adkhost.c sdk/c/adkhost.h $(TSRT)/quickjs/.stamp $(PYRT)/zig/.stamp
	ZIG_GLOBAL_CACHE_DIR=$(abspath $(PYRT))/zig-cache ZIG_LOCAL_CACHE_DIR=$(abspath $(TSRT))/zig-cache \
	  $(PYRT_ZIG) cc --target=wasm32-wasi -mexec-model=reactor -O2 -D_GNU_SOURCE \
	  -I $(TSRT)/quickjs -I sdk/c $(TSRT_SRC)/main.c \
	  $(addprefix $(TSRT)/quickjs/,$(filter-out quickjs.c,$(QJS_FILES))) sdk/c/adkhost.c \
	  -lwasi-emulated-signal -lm -Wl,-z,stack-size=1048576 -Wl,--strip-all -o $@.tmp
	mv $@.tmp $@

ts-runtime-clean:
	rm -rf $(TSRT)
