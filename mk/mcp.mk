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

# The official MCP Inspector's CLI (npm, pinned; its postinstall, which
# builds the web UI's clients, is not run) in build/mcp-inspector, for
# TestServeMCPInspectorCLI. It runs offline.
MCP_INSPECTOR_DIR ?= build/mcp-inspector
MCP_INSPECTOR_VERSION := 2.12.0

.PHONY: mcp-inspector
mcp-inspector:
	@grep -qs '"version": "$(MCP_INSPECTOR_VERSION)"' $(MCP_INSPECTOR_DIR)/node_modules/@modelcontextprotocol/inspector/package.json || { \
	  mkdir -p $(MCP_INSPECTOR_DIR) && \
	  npm install --prefix $(MCP_INSPECTOR_DIR) --no-audit --no-fund --ignore-scripts --no-save @modelcontextprotocol/inspector@$(MCP_INSPECTOR_VERSION); }

# @modelcontextprotocol/server-everything (npm, pinned) in build/mcp-everything,
# for host/appdef's MCPToolset tests against a real server over stdio and
# streamable HTTP. Does nothing when the pinned version is already there.
MCP_EVERYTHING ?= build/mcp-everything
MCP_EVERYTHING_VERSION := 2026.8.31

.PHONY: mcp-everything
mcp-everything:
	@grep -qs '"version": "$(MCP_EVERYTHING_VERSION)"' $(MCP_EVERYTHING)/node_modules/@modelcontextprotocol/server-everything/package.json || \
	  npm install --no-audit --no-fund --no-save --prefix $(MCP_EVERYTHING) @modelcontextprotocol/server-everything@$(MCP_EVERYTHING_VERSION)
