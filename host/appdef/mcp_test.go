package appdef_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
	"github.com/adkhost/adkhost/host/appdef"
)

// TestMCPToolsetConfigErrors: google-adk's McpToolsetConfig checks, the
// stdio gate and what adkhost does not support, each located.
func TestMCPToolsetConfigErrors(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{`{stdio_server_params: {command: npx, args: [-y, some-server]}}`, "Stdio MCP servers are not allowed in app definitions"},
		{`{stdio_connection_params: {server_params: {command: npx}, timeout: 10}}`, "--allow-stdio-mcp (or ADK_ALLOW_CONFIG_STDIO_MCP_SERVERS=1)"},
		{`{tool_filter: [a]}`, "Exactly one of stdio_server_params, stdio_connection_params, sse_connection_params, streamable_http_connection_params must be set."},
		{`{sse_connection_params: {url: "https://a.example/sse"}, streamable_http_connection_params: {url: "https://a.example/mcp"}}`, "Exactly one of"},
		{`{streamable_http_connection_params: {url: "file:///etc/passwd"}}`, "want an absolute http or https URL"},
		{`{streamable_http_connection_params: {url: "https://user:pw@a.example/mcp"}}`, "without user info"},
		{`{streamable_http_connection_params: {url: "https://a.example/mcp", headers: {"Bad Name": x}}}`, `"Bad Name" is not a valid HTTP header name`},
		{`{streamable_http_connection_params: {url: "https://a.example/mcp", headers: {X-A: "a\nb"}}}`, "line breaks"},
		{`{streamable_http_connection_params: {url: "https://a.example/mcp", timeout: -1}}`, "want a positive number of seconds"},
		{`{streamable_http_connection_params: {url: "https://a.example/mcp", httpx_client_factory: x}}`, "not supported: Python code references"},
		{`{streamable_http_connection_params: {url: "https://a.example/mcp"}, tool_filtr: [a]}`, `unknown field "tool_filtr" (did you mean tool_filter?)`},
		{`{streamable_http_connection_params: {url: "https://a.example/mcp"}, auth_scheme: {type: http}}`, "not supported: auth_scheme"},
		{`{streamable_http_connection_params: {url: "https://a.example/mcp"}, use_mcp_resources: true}`, "not supported: use_mcp_resources"},
	} {
		fs := files("root_agent.yaml", "name: a\nmodel: scripted\ninstruction: x\ntools:\n  - name: MCPToolset\n    args: "+c.args+"\n", "scripted_model.yaml", "responses: []\n")
		_, err := appdef.Load(t.Context(), appdef.Source{Name: "a", Files: fs}, noModules())
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "root_agent.yaml:") {
			t.Errorf("args %s: got %v, want %q", c.args, err, c.want)
		}
	}
	fs := files("root_agent.yaml", "name: a\nmodel: scripted\ninstruction: x\nadkhost:\n  mcp: {hots: [a]}\n", "scripted_model.yaml", "responses: []\n")
	if _, err := appdef.Load(t.Context(), appdef.Source{Name: "a", Files: fs}, noModules()); err == nil || !strings.Contains(err.Error(), `unknown field "hots" (did you mean hosts?)`) {
		t.Errorf("adkhost.mcp: %v", err)
	}
}

// TestMCPToolsetADKStdioShape: a config shaped like google-adk's stdio
// sample (tool_mcp_stdio_notion_config) loads unchanged once stdio servers
// are allowed; nothing runs until the tools are listed.
func TestMCPToolsetADKStdioShape(t *testing.T) {
	fs := files("root_agent.yaml", `
name: notion_agent
model: scripted
instruction: |
  You are my workspace assistant. Use the provided tools to read Notion pages.
tools:
- name: MCPToolset
  args:
    stdio_server_params:
      command: "npx"
      args:
      - "-y"
      - "@notionhq/notion-mcp-server"
      env:
        OPENAPI_MCP_HEADERS: '{"Authorization": "Bearer <your_notion_token>", "Notion-Version": "2022-06-28"}'
`, "scripted_model.yaml", "responses: []\n")
	e := noModules()
	e.AllowStdioMCP = true
	app := load(t, "notion", fs, e)
	if len(app.Toolsets) != 1 || app.Toolsets[0].Name() != "MCP server npx -y @notionhq/notion-mcp-server" {
		t.Fatalf("toolsets: %v", app.Toolsets)
	}
	a := app.Root.(*engine.LlmAgent)
	if ts, ok := tool.SetOf(a.Config().Tools[0]); !ok || ts != app.Toolsets[0] {
		t.Errorf("the agent's tool is not the toolset: %v", a.Config().Tools)
	}
}

// invCtx is a ReadonlyContext for listing outside a run.
type invCtx struct {
	context.Context
	inv string
}

func (c invCtx) InvocationID() string        { return c.inv }
func (c invCtx) AgentName() string           { return "a" }
func (c invCtx) Branch() string              { return "a" }
func (c invCtx) UserContent() *genai.Content { return nil }
func (c invCtx) Session() *session.Session   { return nil }
func (c invCtx) AppName() string             { return "a" }
func (c invCtx) UserID() string              { return "u" }

// toolCtx is enough of a ToolContext for an MCP tool's Run.
type toolCtx struct {
	callbacks.ToolContext
	c context.Context
}

func (c toolCtx) Err() error                  { return c.c.Err() }
func (c toolCtx) Done() <-chan struct{}       { return c.c.Done() }
func (c toolCtx) Value(k any) any             { return c.c.Value(k) }
func (c toolCtx) Deadline() (time.Time, bool) { return c.c.Deadline() }

// goSDKServer is an MCP server of the Go SDK with one tool, over
// streamable HTTP on loopback.
func goSDKServer(t *testing.T) *httptest.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "ping", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil
	})
	mux := http.NewServeMux()
	mux.Handle("/", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	mux.Handle("/sse", mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func httpApp(t *testing.T, url, mcpBlock string) *appdef.App {
	t.Helper()
	root := "name: a\nmodel: scripted\ninstruction: x\ntools:\n  - name: MCPToolset\n    args: {streamable_http_connection_params: {url: \"" + url + "\"}}\n"
	if mcpBlock != "" {
		root += "adkhost:\n  mcp: " + mcpBlock + "\n"
	}
	return load(t, "a", files("root_agent.yaml", root, "scripted_model.yaml", "responses: []\n"), noModules())
}

// TestMCPToolsetNetworkRules: a network server is reached as a module's
// HTTP grant allows: loopback refused unless adkhost.mcp.allow_private, and
// a redirect to a host the definition does not list refused.
func TestMCPToolsetNetworkRules(t *testing.T) {
	srv := goSDKServer(t)
	app := httpApp(t, srv.URL, "")
	if len(app.Warnings) != 1 || !strings.Contains(app.Warnings[0], "root_agent.yaml:6:53: tools[0].args.streamable_http_connection_params.url: ") || !strings.Contains(app.Warnings[0], "127.0.0.1 is a loopback or private address") {
		t.Errorf("warnings: %q", app.Warnings)
	}
	_, err := app.Toolsets[0].Tools(invCtx{Context: t.Context(), inv: "1"})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1 is not a public address") || !strings.Contains(err.Error(), "adkhost.mcp.allow_private: true") {
		t.Errorf("loopback without allow_private: %v", err)
	}
	app = httpApp(t, srv.URL, "{allow_private: true}")
	if len(app.Warnings) != 0 {
		t.Errorf("warnings with allow_private: %q", app.Warnings)
	}
	tools, err := app.Toolsets[0].Tools(invCtx{Context: t.Context(), inv: "1"})
	if err != nil || len(tools) != 1 || tools[0].Name() != "ping" {
		t.Fatalf("allow_private: %v %v", tools, err)
	}
	redirect := httptest.NewServer(http.RedirectHandler(srv.URL, http.StatusTemporaryRedirect))
	defer redirect.Close()
	_, err = httpApp(t, redirect.URL, "{allow_private: true}").Toolsets[0].Tools(invCtx{Context: t.Context(), inv: "1"})
	if err == nil || !strings.Contains(err.Error(), "redirect to "+strings.TrimPrefix(srv.URL, "http://")) {
		t.Errorf("redirect to another host: %v", err)
	}
	// Listed under adkhost.mcp.hosts, the redirect is followed.
	tools, err = httpApp(t, redirect.URL, "{allow_private: true, hosts: [\""+strings.TrimPrefix(srv.URL, "http://")+"\"]}").Toolsets[0].Tools(invCtx{Context: t.Context(), inv: "1"})
	if err != nil || len(tools) != 1 {
		t.Errorf("redirect to a listed host: %v %v", tools, err)
	}
	// sse_connection_params: the HTTP+SSE transport, under the same rules.
	sse := load(t, "a", files("root_agent.yaml", "name: a\nmodel: scripted\ninstruction: x\ntools:\n  - name: MCPToolset\n    args: {sse_connection_params: {url: \""+srv.URL+"/sse\", sse_read_timeout: 10}}\nadkhost:\n  mcp: {allow_private: true}\n", "scripted_model.yaml", "responses: []\n"), noModules())
	tools, err = sse.Toolsets[0].Tools(invCtx{Context: t.Context(), inv: "1"})
	if err != nil || len(tools) != 1 {
		t.Fatalf("SSE: %v %v", tools, err)
	}
	if res, err := tools[0].Run(toolCtx{c: t.Context()}, nil); err != nil || jsonOf(res) != `{"content":[{"text":"pong","type":"text"}],"isError":false}` {
		t.Errorf("SSE call: %s %v", jsonOf(res), err)
	}
	// Bounds from adkhost.mcp.
	_, err = httpApp(t, srv.URL, "{allow_private: true, max_tools: 1, max_response_bytes: 10}").Toolsets[0].Tools(invCtx{Context: t.Context(), inv: "1"})
	if err == nil || !strings.Contains(err.Error(), "10 bytes") {
		t.Errorf("max_response_bytes: %v", err)
	}
}

// repoRoot is the repository's root, where build/ holds the servers that
// make mcp-venv and make mcp-everything install.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(b), "module github.com/adkhost/adkhost\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no repository root above the test's directory")
		}
		dir = parent
	}
}

// need fails the test under CI=true, and skips it otherwise, when a server
// it runs is not installed.
func need(t *testing.T, ok bool, what string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and %s", what)
	}
	t.Skipf("%s (skipping; CI=true makes this a failure)", what)
}

// everythingServer is the entry point of @modelcontextprotocol/server-everything.
func everythingServer(t *testing.T) (node, js string) {
	js = filepath.Join(repoRoot(t), "build", "mcp-everything", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	_, err := os.Stat(js)
	need(t, err == nil, "no @modelcontextprotocol/server-everything in build/mcp-everything (make mcp-everything installs it)")
	node, err = exec.LookPath("node")
	need(t, err == nil, "no node on PATH")
	return node, js
}

// pythonServer is the python of build/mcp-venv and the test server.
func pythonServer(t *testing.T) (python, script string) {
	venv := filepath.Join(repoRoot(t), "build", "mcp-venv")
	python = filepath.Join(venv, "bin", "python")
	pkgs, _ := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages", "mcp", "server", "mcpserver"))
	need(t, len(pkgs) == 1, "no mcp 2.x package in build/mcp-venv (make mcp-venv installs it)")
	script, err := filepath.Abs(filepath.Join("testdata", "mcp", "python_server.py"))
	if err != nil {
		t.Fatal(err)
	}
	return python, script
}

// freePort returns a loopback port no one listens on.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startHTTPServer runs a server process and waits until its port accepts.
func startHTTPServer(t *testing.T, port int, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not listen on %d: %s", name, port, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// runMCPApp loads a definition whose scripted model calls one tool with
// args when the user says "go", runs that turn and returns the tool's
// function response.
func runMCPApp(t *testing.T, e appdef.Env, toolsEntry, extra, call, args string) map[string]any {
	t.Helper()
	fs := files("root_agent.yaml", "name: mcp_agent\nmodel: scripted\ninstruction: Use the MCP tools.\ntools:\n"+toolsEntry+extra,
		"scripted_model.yaml", fmt.Sprintf(`
rules:
  - when: {function_response: '*'}
    respond: {text: done}
  - when: {user_matches: go}
    respond: {function_calls: [{name: %s, args: %s}]}
`, call, args))
	app := load(t, "mcp_app", fs, e)
	r, _ := newRunner(t, app)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var resp map[string]any
	var decls []string
	for ev, err := range r.Run(ctx, "u", "s", genai.NewContentFromText("go", genai.RoleUser), engine.RunConfig{}) {
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		for _, fr := range ev.FunctionResponses() {
			resp = fr.Response
		}
	}
	_ = decls
	if resp == nil {
		t.Fatalf("no function response from %s", call)
	}
	return resp
}

func stdioEntry(command string, args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = fmt.Sprintf("%q", a)
	}
	// A generous timeout: the machine running the tests may be busy.
	return fmt.Sprintf("  - name: MCPToolset\n    args:\n      stdio_connection_params:\n        server_params:\n          command: %q\n          args: [%s]\n        timeout: 30\n", command, strings.Join(q, ", "))
}

func httpEntry(url string) string {
	return fmt.Sprintf("  - name: MCPToolset\n    args:\n      streamable_http_connection_params:\n        url: %q\n        timeout: 20\n", url)
}

const allowLoopback = "adkhost:\n  mcp: {allow_private: true}\n"

// TestMCPEverythingServer: @modelcontextprotocol/server-everything over
// stdio and streamable HTTP answers tool calls made by the model, and its
// results become function responses as google-adk shapes them.
func TestMCPEverythingServer(t *testing.T) {
	node, js := everythingServer(t)
	stdio := noModules()
	stdio.AllowStdioMCP = true
	got := runMCPApp(t, stdio, stdioEntry(node, js, "stdio"), "", "echo", "{message: hi}")
	if s := jsonOf(got); s != `{"content":[{"text":"Echo: hi","type":"text"}],"isError":false}` {
		t.Errorf("echo over stdio: %s", s)
	}
	// google-adk's sample shape (TestMCPToolsetADKStdioShape: command,
	// args, env) with a tool prefix and filter; under stdio_connection_params
	// for a timeout longer than stdio_server_params' fixed 5 s, which a busy
	// test machine can exceed while node starts.
	sample := fmt.Sprintf("- name: MCPToolset\n  args:\n    stdio_connection_params:\n      server_params:\n        command: %q\n        args:\n        - %q\n        - stdio\n        env:\n          ADKHOST_TEST: sample\n      timeout: 30\n    tool_filter: [get-env]\n    tool_name_prefix: everything\n", node, js)
	got = runMCPApp(t, stdio, sample, "", "everything_get-env", "{}")
	if s := jsonOf(got); !strings.Contains(s, `ADKHOST_TEST`) || !strings.Contains(s, `sample`) || !strings.Contains(s, `"isError":false`) {
		t.Errorf("get-env over stdio: %s", s)
	}
	port := freePort(t)
	startHTTPServer(t, port, []string{fmt.Sprintf("PORT=%d", port)}, node, js, "streamableHttp")
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	got = runMCPApp(t, noModules(), httpEntry(url), allowLoopback, "get-sum", "{a: 2, b: 40}")
	if s := jsonOf(got); s != `{"content":[{"text":"The sum of 2 and 40 is 42.","type":"text"}],"isError":false}` {
		t.Errorf("get-sum over streamable HTTP: %s", s)
	}
	got = runMCPApp(t, noModules(), httpEntry(url), allowLoopback, "get-tiny-image", "{}")
	if s := jsonOf(got); !strings.Contains(s, `"type":"image"`) || !strings.Contains(s, `"mimeType":"image/png"`) {
		t.Errorf("get-tiny-image: %s", s)
	}
	// Arguments the server refuses.
	got = runMCPApp(t, noModules(), httpEntry(url), allowLoopback, "get-sum", "{a: x}")
	if s := jsonOf(got); !strings.Contains(s, `"isError":true`) && !strings.Contains(s, `"error":"MCP tool execution failed`) {
		t.Errorf("get-sum with bad args: %s", s)
	}
}

// TestMCPPythonServer: a server made with the Python mcp package, over
// stdio and streamable HTTP.
func TestMCPPythonServer(t *testing.T) {
	python, script := pythonServer(t)
	stdio := noModules()
	stdio.AllowStdioMCP = true
	got := runMCPApp(t, stdio, stdioEntry(python, script), "", "multiply", "{a: 6, b: 7}")
	if s := jsonOf(got); !strings.HasPrefix(s, `{"content":[{"text":"42","type":"text"}],"isError":false`) || !strings.Contains(s, `"structuredContent":{"result":42}`) {
		t.Errorf("multiply over stdio: %s", s)
	}
	port := freePort(t)
	startHTTPServer(t, port, nil, python, script, "http", fmt.Sprint(port))
	got = runMCPApp(t, noModules(), httpEntry(fmt.Sprintf("http://127.0.0.1:%d/mcp", port)), allowLoopback, "refuse", "{reason: nope}")
	if s := jsonOf(got); !strings.HasPrefix(s, `{"content":[{"text":"Error executing tool refuse","type":"text"}],"isError":true`) {
		t.Errorf("refuse over streamable HTTP: %s", s)
	}
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestMCPToolsetMatchesADK: the same server's tools through adkhost as
// through google-adk 2.13's McpToolset (testdata/mcp/adk_golden.json,
// written by adk_golden.py): the declarations and system instruction the
// model gets, and the function responses of a call that succeeds and one
// that fails.
func TestMCPToolsetMatchesADK(t *testing.T) {
	python, script := pythonServer(t)
	var golden struct {
		Declarations      []any  `json:"declarations"`
		SystemInstruction string `json:"system_instruction"`
		Responses         []struct {
			Name     string         `json:"name"`
			Response map[string]any `json:"response"`
		} `json:"responses"`
	}
	b, err := os.ReadFile(filepath.Join("testdata", "mcp", "adk_golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatal(err)
	}
	e := noModules()
	e.AllowStdioMCP = true
	entry := strings.Replace(stdioEntry(python, script), "    args:\n", "    args:\n      tool_name_prefix: py\n", 1)
	fs := files("root_agent.yaml", "name: mcp_agent\nmodel: scripted\ninstruction: Use the MCP tools.\ntools:\n"+entry, "scripted_model.yaml", `
responses:
  - function_calls: [{name: py_multiply, args: {a: 6, b: 7}}]
  - function_calls: [{name: py_refuse, args: {reason: nope}}]
  - text: done
`)
	app := load(t, "a", fs, e)
	r, _ := newRunner(t, app)
	var got []map[string]any
	for ev, err := range r.Run(t.Context(), "u", "s", genai.NewContentFromText("go", genai.RoleUser), engine.RunConfig{}) {
		if err != nil {
			t.Fatal(err)
		}
		for _, fr := range ev.FunctionResponses() {
			got = append(got, map[string]any{"name": fr.Name, "response": fr.Response})
		}
	}
	if g, w := jsonOf(got), jsonOf(golden.Responses); g != w {
		t.Errorf("function responses\n got %s\nwant %s", g, w)
	}
	reqs := app.Root.(*engine.LlmAgent).Config().Model.(interface{ Requests() []*model.Request }).Requests()
	if len(reqs) == 0 {
		t.Fatal("no model request")
	}
	req := reqs[0]
	var decls []any
	for _, tl := range req.Config.Tools {
		for _, d := range tl.FunctionDeclarations {
			var v any
			json.Unmarshal([]byte(jsonOf(d)), &v)
			decls = append(decls, v)
		}
	}
	if g, w := jsonOf(decls), jsonOf(golden.Declarations); g != w {
		t.Errorf("declarations\n got %s\nwant %s", g, w)
	}
	if g := req.SystemInstructionText(); g != golden.SystemInstruction {
		t.Errorf("system instruction\n got %q\nwant %q", g, golden.SystemInstruction)
	}
}
