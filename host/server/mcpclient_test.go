package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestStdioMCPServersNeedTheFlag: a definition declaring a stdio MCP
// server (a process outside the sandbox) is refused at registration unless
// the server allows them (serve --allow-stdio-mcp); allowed, it registers
// without starting anything. A network MCP server on loopback registers
// with a warning saying its calls will be refused.
func TestStdioMCPServersNeedTheFlag(t *testing.T) {
	const def = "name: mcp_app\nmodel: scripted\ninstruction: x\ntools:\n  - name: MCPToolset\n    args:\n      stdio_server_params: {command: /bin/false}\n"
	bundle := func(root string) map[string]string {
		return map[string]string{"root_agent.yaml": root, "scripted_model.yaml": "responses: []\n"}
	}
	h := newHarness(t, t.TempDir(), harnessOpts{})
	st, b := h.putBundle("mcp_app", bundle(def))
	if st != http.StatusBadRequest && st != http.StatusUnprocessableEntity || !strings.Contains(string(b), "Stdio MCP servers are not allowed") || !strings.Contains(string(b), "--allow-stdio-mcp") {
		t.Errorf("without the flag: %d %s", st, b)
	}
	h = newHarness(t, t.TempDir(), harnessOpts{allowStdioMCP: true})
	h.must(http.StatusCreated)(h.putBundle("mcp_app", bundle(def)))

	b = h.must(http.StatusCreated)(h.putBundle("http_app", bundle("name: http_app\nmodel: scripted\ninstruction: x\ntools:\n  - name: MCPToolset\n    args: {streamable_http_connection_params: {url: \"http://localhost:9/mcp\"}}\n")))
	if !strings.Contains(string(b), "localhost is a loopback or private address") {
		t.Errorf("loopback MCP server: no warning in %s", b)
	}
}
