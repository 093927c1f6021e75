#!/bin/sh
# guestprof.sh [CALLS] [turns]: where the Go guest's time goes. Samples
# warm get_weather calls (TestGuestLoop), or with "turns" as many engine
# turns with the guest's tool, where the guest runs with the CPU's caches
# cold from the host's work, with perf, and attributes the samples in the
# guest's machine code to its functions (guestprof.py), in µs per call.
# Needs perf, wasm-objdump (Debian wabt) and python3; run from anywhere in
# the checkout.
set -eu
cd "$(dirname "$0")"
calls=${1:-40000}
turns=0
if [ "${2:-}" = turns ]; then
	turns=1
fi
hz=4000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/bench.test" .
ADKHOST_GUEST_LOOP=$calls ADKHOST_GUEST_TURNS=$turns perf record -q -F $hz -o "$tmp/perf.data" "$tmp/bench.test" -test.run '^TestGuestLoop$' -test.count 1 >"$tmp/out.txt"
perf script -i "$tmp/perf.data" -F ip 2>/dev/null >"$tmp/ips.txt"
python3 guestprof.py "$tmp/out.txt" "$tmp/ips.txt" $hz
