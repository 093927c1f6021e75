package server_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/adkhost/adkhost/host/server"
	"github.com/adkhost/adkhost/internal/wasmbuild"
)

const runToken = "run-secret"

var counter struct {
	once sync.Once
	wasm []byte
	err  error
}

// counterWasm builds testdata/counter (add, note, fail, spin).
func counterWasm(t testing.TB) []byte {
	t.Helper()
	counter.once.Do(func() {
		root, err := wasmbuild.ModuleRoot()
		if err != nil {
			counter.err = err
			return
		}
		counter.wasm, counter.err = wasmbuild.Build(wasmbuild.Spec{Dir: root, Package: "./host/server/testdata/counter",
			Sources: []string{"host/server/testdata/counter", "sdk/go/adkhost", "abi"}, Cache: "adkhost-server-guests"})
	})
	if counter.err != nil {
		t.Fatalf("building the counter guest: %v", counter.err)
	}
	return counter.wasm
}

// counterApp is an app whose agent has the counter module's tools (all of
// them, or those named) and its before_tool callback, with state and
// artifacts granted and a short time limit (long enough for a busy two-core CI machine: 300ms failed a call under load).
func counterApp(tools ...string) map[string]string {
	y := "name: tools_agent\nmodel: scripted\ninstruction: Use the tools.\ntools:\n"
	if len(tools) == 0 {
		y += "  - module: counter\n"
	}
	for _, t := range tools {
		y += "  - {module: counter, tool: " + t + "}\n"
	}
	y += "before_tool_callbacks:\n  - {module: counter, hook: before_tool}\n"
	y += "adkhost:\n  modules:\n    counter:\n      grants: {state: true, artifacts: true}\n      limits: {timeout: 1500ms}\n"
	return map[string]string{"root_agent.yaml": y, "scripted_model.yaml": "rules:\n  - respond: {text: unused}\n"}
}

// bearerTransport adds a bearer token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func (h *harness) mcpConnect(t *testing.T, app, token string) (*mcp.ClientSession, error) {
	return mcpConnectTo(t, h.ts.URL, app, token, nil)
}

// mcpConnectTo connects the go-sdk's client to base/mcp/app; it opens the
// standalone stream for server messages, as clients do by default.
func mcpConnectTo(t *testing.T, base, app, token string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "adkhost-test", Version: "1"}, opts)
	return c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp/" + app,
		HTTPClient: &http.Client{Transport: bearerTransport{token}}, MaxRetries: -1}, nil)
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func TestMCPServesModuleTools(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{runToken: runToken})
	h.must(http.StatusCreated)(h.admin("PUT", "/modules/counter", counterWasm(t)))
	h.must(http.StatusCreated)(h.putBundle("tools", counterApp()))

	// The endpoint needs the token, and the app must exist.
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`
	mcpHdr := []string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream"}
	if st, b := h.do("POST", "/mcp/tools", init, mcpHdr...); st != http.StatusUnauthorized {
		t.Errorf("without a token: %d %s, want 401", st, b)
	}
	if st, b := h.do("POST", "/mcp/tools", init, append(mcpHdr, "Authorization", "Bearer wrong")...); st != http.StatusUnauthorized {
		t.Errorf("with a wrong token: %d %s, want 401", st, b)
	}
	if st, b := h.do("POST", "/mcp/nope", init, append(mcpHdr, "Authorization", "Bearer "+runToken)...); st != http.StatusNotFound || !strings.Contains(string(b), "App not found: nope") {
		t.Errorf("unknown app: %d %s, want 404", st, b)
	}
	big := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"` + strings.Repeat("a", server.DefaultRequestBytes) + `"}}`
	if st, b := h.do("POST", "/mcp/tools", big, append(mcpHdr, "Authorization", "Bearer "+runToken)...); st != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over the limit: %d %.200s, want 413", st, b)
	}
	if _, err := h.mcpConnect(t, "tools", "wrong"); err == nil {
		t.Error("the go-sdk client connected with a wrong token")
	}

	listChanged := make(chan struct{}, 16)
	cs, err := mcpConnectTo(t, h.ts.URL, "tools", runToken, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { listChanged <- struct{}{} }})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// (The go-sdk lists tools by name.)
	if got := toolNames(t, cs); !slices.Equal(got, []string{"add", "fail", "note", "spin"}) {
		t.Errorf("tools = %v", got)
	}
	lt, _ := cs.ListTools(context.Background(), nil)
	schema, _ := json.Marshal(lt.Tools[0].InputSchema)
	if !strings.Contains(string(schema), `"n":{"description":"how much to add","type":"integer"}`) || lt.Tools[0].Description == "" {
		t.Errorf("add is declared as %s (%q)", schema, lt.Tools[0].Description)
	}

	// State persists across the calls of one MCP session...
	for i, want := range []string{`{"total":2}`, `{"total":5}`} {
		res := callTool(t, cs, "add", map[string]any{"n": 2 + i})
		if res.IsError || resultText(res) != want {
			t.Errorf("add #%d: isError=%v %s, want %s", i+1, res.IsError, resultText(res), want)
		}
		if sc, _ := json.Marshal(res.StructuredContent); string(sc) != want {
			t.Errorf("add #%d: structuredContent %s, want %s", i+1, sc, want)
		}
	}
	// Concurrent calls of one session run one after the other, each on
	// the state the previous one left.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if res := callTool(t, cs, "add", map[string]any{"n": 10}); res.IsError {
				t.Errorf("concurrent add: %s", resultText(res))
			}
		})
	}
	wg.Wait()
	if res := callTool(t, cs, "add", map[string]any{"n": -40}); resultText(res) != `{"total":5}` {
		t.Errorf("after 4 concurrent adds of 10 and one of -40: %s, want a total of 5", resultText(res))
	}
	// The agent's before_tool callback answers for the tool, as in a run.
	if res := callTool(t, cs, "add", map[string]any{"n": 5000}); res.IsError || resultText(res) != `{"refused":"n over 1000"}` {
		t.Errorf("add of 5000: isError=%v %s, want the callback's refusal", res.IsError, resultText(res))
	}
	// Arguments must be an object.
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "add", Arguments: []any{1}}); err == nil || !strings.Contains(err.Error(), "JSON object") {
		t.Errorf("array arguments: err = %v, want a protocol error", err)
	}
	if res := callTool(t, cs, "note", map[string]any{"text": "hello"}); res.IsError || resultText(res) != `{"version":0}` {
		t.Errorf("note: isError=%v %s", res.IsError, resultText(res))
	}
	// ...and is stored as an adkhost session of the app, readable over
	// the run API.
	user := server.MCPUserID(runToken)
	auth := []string{"Authorization", "Bearer " + runToken}
	sess := decode[map[string]any](t, h.must(http.StatusOK)(h.do("GET", "/apps/tools/users/"+user+"/sessions/"+cs.ID(), nil, auth...)))
	if st, _ := json.Marshal(sess["state"]); string(st) != `{"count":5}` {
		t.Errorf("session state = %s", st)
	}
	if evs, _ := sess["events"].([]any); len(evs) != 18 {
		t.Errorf("session has %d events, want 18 (call and response per tool call)", len(evs))
	} else if md, _ := json.Marshal(evs[1].(map[string]any)["customMetadata"]); !strings.Contains(string(md), `"adkhost_mcp_client":"adkhost-test"`) {
		t.Errorf("customMetadata = %s", md)
	}
	if b := h.must(http.StatusOK)(h.do("GET", "/apps/tools/users/"+user+"/sessions/"+cs.ID()+"/artifacts", nil, auth...)); string(b) != `["note.txt"]`+"\n" && string(b) != `["note.txt"]` {
		t.Errorf("artifacts = %s", b)
	}

	// Another MCP session is another adkhost session.
	if b := h.must(http.StatusOK)(h.do("GET", "/metrics", nil)); !strings.Contains(string(b), "adkhost_mcp_sessions 1\n") {
		t.Error("/metrics does not count the one MCP session open")
	}
	cs2, err := h.mcpConnect(t, "tools", runToken)
	if err != nil {
		t.Fatal(err)
	}
	defer cs2.Close()
	if res := callTool(t, cs2, "add", map[string]any{"n": 1}); resultText(res) != `{"total":1}` {
		t.Errorf("add in a second session: %s, want a total of 1", resultText(res))
	}

	// Failures are isError results the client's model can read: the
	// guest's error, and the sandbox's time limit.
	if res := callTool(t, cs, "fail", map[string]any{"message": "boom"}); !res.IsError || !strings.Contains(resultText(res), "failed as asked: boom") {
		t.Errorf("fail: isError=%v %s", res.IsError, resultText(res))
	}
	start := time.Now()
	if res := callTool(t, cs, "spin", nil); !res.IsError || !strings.Contains(resultText(res), "time") {
		t.Errorf("spin: isError=%v %s", res.IsError, resultText(res))
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("spin took %v: the 1.5s limit was not applied", d)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ghost"}); err == nil {
		t.Error("calling an unknown tool succeeded")
	}

	// A new version of the app is picked up by the open session, which
	// hears of it on its stream before it asks.
	h.must(http.StatusOK)(h.putBundle("tools", counterApp("add")))
	select {
	case <-listChanged:
	case <-time.After(10 * time.Second):
		t.Error("no notifications/tools/list_changed after the app changed")
	}
	if got := toolNames(t, cs); !slices.Equal(got, []string{"add"}) {
		t.Errorf("after the app changed, tools = %v, want [add]", got)
	}
	if res := callTool(t, cs, "add", map[string]any{"n": 1}); resultText(res) != `{"total":6}` {
		t.Errorf("add after the app changed: %s, want a total of 6", resultText(res))
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "note", Arguments: map[string]any{"text": "x"}}); err == nil {
		t.Error("a tool the new version dropped was called")
	}

	// A deleted app is gone for MCP too: its sessions are closed.
	h.must(http.StatusNoContent)(h.admin("DELETE", "/apps/tools", nil))
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"n": 1}}); err == nil {
		t.Error("a tool of a deleted app was called")
	}
	if st, b := h.do("POST", "/mcp/tools", init, append(mcpHdr, "Authorization", "Bearer "+runToken)...); st != http.StatusNotFound {
		t.Errorf("deleted app: %d %s, want 404", st, b)
	}
}

func TestMCPNeedsAToken(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	h.must(http.StatusCreated)(h.admin("PUT", "/modules/counter", counterWasm(t)))
	h.must(http.StatusCreated)(h.putBundle("tools", counterApp("add")))
	// No run token and no MCP token: there is no MCP endpoint at all.
	if st, b := h.do("POST", "/mcp/tools", `{}`, "Content-Type", "application/json"); st != http.StatusNotFound {
		t.Errorf("without any token configured: %d %s, want 404", st, b)
	}
}

func TestMCPBoundsSessions(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{runToken: runToken, mcpMaxSessions: 2})
	h.must(http.StatusCreated)(h.admin("PUT", "/modules/counter", counterWasm(t)))
	h.must(http.StatusCreated)(h.putBundle("tools", counterApp("add")))
	for i := range 2 {
		cs, err := h.mcpConnect(t, "tools", runToken)
		if err != nil {
			t.Fatalf("session %d: %v", i+1, err)
		}
		defer cs.Close()
	}
	if _, err := h.mcpConnect(t, "tools", runToken); err == nil || !strings.Contains(err.Error(), "503") && !strings.Contains(err.Error(), "Service Unavailable") {
		t.Errorf("a third session: err = %v, want a 503 refusal", err)
	}
}

// TestMCPShutdownEndsStreams: a client's open stream must not hold the
// drain at shutdown until its timeout.
func TestMCPShutdownEndsStreams(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{runToken: runToken})
	h.must(http.StatusCreated)(h.admin("PUT", "/modules/counter", counterWasm(t)))
	h.must(http.StatusCreated)(h.putBundle("tools", counterApp("add")))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.srv.Serve(ctx, ln, time.Minute) }()
	cs, err := mcpConnectTo(t, "http://"+ln.Addr().String(), "tools", runToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if res := callTool(t, cs, "add", map[string]any{"n": 1}); resultText(res) != `{"total":1}` {
		t.Fatalf("add: %s", resultText(res))
	}
	stop()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve still draining after 30s: the MCP stream held it open")
	}
}
