#!/bin/sh
# guestprof.sh [CALLS]: where the Go guest's time goes. Samples warm
# get_weather calls (TestGuestLoop) with perf and attributes the samples in
# the guest's machine code to its functions (guestprof.py). Needs perf,
# wasm-objdump (Debian wabt) and python3; run from anywhere in the checkout.
set -eu
cd "$(dirname "$0")"
calls=${1:-40000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/bench.test" .
ADKHOST_GUEST_LOOP=$calls perf record -q -F 4000 -o "$tmp/perf.data" "$tmp/bench.test" -test.run '^TestGuestLoop$' -test.count 1 >"$tmp/out.txt"
perf script -i "$tmp/perf.data" -F ip 2>/dev/null >"$tmp/ips.txt"
python3 guestprof.py "$tmp/out.txt" "$tmp/ips.txt"
