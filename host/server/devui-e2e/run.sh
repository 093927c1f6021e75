#!/bin/sh
# make test-devui: google-adk's dev UI (from the installed wheel, see
# find-ui.sh) served by `adkhost serve --dev-ui` holds a conversation with
# the demo app in headless Chromium (devui.mjs). This script builds
# adkhost, starts it on a fresh data directory and a free port, uploads
# the demo's modules and registers the demo app over the admin API, runs
# the browser test and stops the server. install-deps.sh and the example
# modules (plugins/examples/build) come first; mk/devui.mk does both.
# On failure the screenshot, page text, request log and server log stay in
# the directory printed.
set -eu
GO=${GO:-go}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
cd "$root"

ui=$("$here/find-ui.sh")
"$GO" build -o bin/adkhost ./cmd/adkhost

work=$(mktemp -d "${TMPDIR:-/tmp}/adkhost-devui.XXXXXX")
token=devui-token-$$
pid=
ok=
cleanup() {
	if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$work/data"
	if [ -n "$ok" ]; then rm -rf "$work"; else echo "devui: artifacts and server log in $work" >&2; fi
}
trap cleanup EXIT INT TERM

bin/adkhost serve --addr 127.0.0.1:0 --data "$work/data" --admin-token "$token" \
	--dev-ui "$ui" --log-level warn 2>"$work/server.log" &
pid=$!
i=0
until addr=$(sed -n 's/^adkhost serving on //p' "$work/server.log") && [ -n "$addr" ]; do
	i=$((i + 1))
	if [ "$i" -gt 300 ] || ! kill -0 "$pid" 2>/dev/null; then
		echo "devui: the server did not start:" >&2
		cat "$work/server.log" >&2
		exit 1
	fi
	sleep 0.1
done
server=http://$addr
admin="--server $server --token $token"

# The modules the demo app names (`module: NAME`), each from
# plugins/examples/build/NAME.wasm as demo.sh uploads them.
app=plugins/examples/demo
for m in $(sed -n 's/.*module: *\([A-Za-z0-9_.-]*\).*/\1/p' "$app/root_agent.yaml" | sort -u); do
	wasm=plugins/examples/build/$m.wasm
	[ -f "$wasm" ] || { echo "devui: $wasm missing (make examples)" >&2; exit 1; }
	bin/adkhost module upload "$wasm" --name "$m" $admin >/dev/null
done
bin/adkhost app register "$app" --name weather_assistant $admin >/dev/null
echo "devui: adkhost on $server serving the dev UI from $ui"

DEVUI_URL=$server DEVUI_APP=weather_assistant DEVUI_ARTIFACTS=$work \
	DEVUI_MESSAGE="What's the weather in Paris?" DEVUI_REPLY="It is sunny in Paris" \
	node "$here/devui.mjs"
ok=1
