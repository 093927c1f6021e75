# google-adk's dev UI against adkhost (host/server/devui-e2e): `adkhost
# serve --dev-ui` with the demo app, the UI from the google-adk 2.13 wheel
# (never committed) in Debian's headless Chromium via playwright-core;
# it picks the app, asks about the weather in Paris and waits for the
# scripted model's answer. Installs what is missing first (chromium, npm
# ci, google-adk into conformance/.venv) and builds the three example
# modules the demo app uses.
.PHONY: test-devui
test-devui: examples-deps
	host/server/devui-e2e/install-deps.sh
	$(MAKE) --no-print-directory -C plugins/examples GO=$(GO) weather guardrail-c wear-py
	GO=$(GO) host/server/devui-e2e/run.sh
