#!/bin/sh
# make test-devui's prerequisites, each installed only when missing:
# Debian's chromium (Playwright's browser download is not used), the pinned
# playwright-core (npm ci), and the google-adk wheel whose dev UI is under
# test (into conformance/.venv, from conformance/python/requirements.txt,
# unless /tmp/adkvenv or conformance/.venv already has it). The UI files
# stay in the venv: they are never copied into the repository.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)

if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
	echo "devui: installing chromium (apt)"
	sudo=; [ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi

# Reinstall when playwright-core is missing or not the version pinned.
if [ ! -f "$here/node_modules/playwright-core/package.json" ] ||
	! grep -q "\"version\": \"$(sed -n 's/.*"playwright-core": "\(.*\)".*/\1/p' "$here/package.json")\"" "$here/node_modules/playwright-core/package.json"; then
	echo "devui: npm ci (playwright-core, no browser download)"
	(cd "$here" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
fi

if [ -z "$("$here/find-ui.sh" 2>/dev/null)" ]; then
	venv=$root/conformance/.venv
	echo "devui: installing google-adk into $venv (pip)"
	[ -x "$venv/bin/pip" ] || python3 -m venv "$venv"
	"$venv/bin/pip" install -q -r "$root/conformance/python/requirements.txt"
	"$here/find-ui.sh" >/dev/null
fi
