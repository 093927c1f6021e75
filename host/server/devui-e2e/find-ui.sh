#!/bin/sh
# Prints the dev UI build of an installed google-adk wheel
# (google/adk/cli/browser): $DEVUI_DIR, else /tmp/adkvenv's, else
# conformance/.venv's. Fails when there is none.
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
if [ -n "${DEVUI_DIR:-}" ]; then
	[ -f "$DEVUI_DIR/index.html" ] || { echo "DEVUI_DIR=$DEVUI_DIR has no index.html" >&2; exit 1; }
	echo "$DEVUI_DIR"
	exit 0
fi
for venv in /tmp/adkvenv "$root/conformance/.venv"; do
	for d in "$venv"/lib/python3*/site-packages/google/adk/cli/browser; do
		if [ -f "$d/index.html" ]; then
			echo "$d"
			exit 0
		fi
	done
done
echo "no google-adk dev UI in /tmp/adkvenv or conformance/.venv (pip install google-adk==2.13.0)" >&2
exit 1
