# The quickstart: example modules, `adkhost serve` on bbolt, the demo app
# registered over the admin API and a conversation over the run API
# (plugins/examples/demo/demo.sh). Offline unless a Gemini key is set.
.PHONY: demo
demo:
	GO=$(GO) MAKE=$(MAKE) plugins/examples/demo/demo.sh
