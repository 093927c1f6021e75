#!/bin/sh
# Installs the toolchains `make examples` needs, only those missing, on a
# Debian machine: clang, lld and wasi-libc (with the wasm32 compiler-rt
# builtins) for C, wabt for WAT, npm for AssemblyScript (whose compiler
# goes to calculator-as/node_modules, from its package-lock.json). Go is the repository's own toolchain.
set -eu

missing=""
command -v clang >/dev/null || missing="$missing clang"
command -v wasm-ld >/dev/null || missing="$missing lld"
command -v wat2wasm >/dev/null || missing="$missing wabt"
command -v npm >/dev/null || missing="$missing npm"
if [ ! -e /usr/lib/wasm32-wasi/libc.a ] && [ ! -d /usr/share/wasi-sysroot ]; then
  missing="$missing wasi-libc"
fi
# clang links libclang_rt.builtins-wasm32.a into every wasm32 module.
if ! command -v clang >/dev/null || [ ! -e "$(clang --target=wasm32-wasi -print-libgcc-file-name 2>/dev/null)" ]; then
  missing="$missing libclang-rt-dev-wasm32"
fi

if [ -n "$missing" ]; then
  echo "installing:$missing" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  # shellcheck disable=SC2086
  $sudo apt-get install -y -qq $missing
fi

if [ ! -x "$(dirname "$0")/calculator-as/node_modules/.bin/asc" ]; then
  (cd "$(dirname "$0")/calculator-as" && npm ci --no-audit --no-fund)
fi
