# The Python `mcp` package (PyPI, pinned in
# cmd/adkhost/testdata/mcp-requirements.txt) in build/mcp-venv, for the test
# that calls Wasm tools through `adkhost serve`'s MCP endpoint with it
# (cmd/adkhost TestServeMCPPythonClient). Does nothing when the pinned
# version is already there.
MCP_VENV ?= build/mcp-venv
MCP_REQUIREMENTS := cmd/adkhost/testdata/mcp-requirements.txt

.PHONY: mcp-venv
mcp-venv:
	@want=$$(sed -n 's/^mcp==//p' $(MCP_REQUIREMENTS)); \
	  $(MCP_VENV)/bin/python -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$$want')" 2>/dev/null || { \
	  python3 -m venv $(MCP_VENV) && $(MCP_VENV)/bin/pip install -q -r $(MCP_REQUIREMENTS); }
