package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/adkhost/adkhost/host/server"
	"github.com/adkhost/adkhost/internal/wasmbuild"
)

// mcpRaw speaks MCP to h's /mcp/tools by hand: it initializes a session
// and returns the headers of its requests.
func mcpRaw(t *testing.T, h *harness) []string {
	t.Helper()
	hdr := []string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream", "Authorization", "Bearer " + runToken}
	req, _ := http.NewRequest("POST", h.ts.URL+"/mcp/tools", strings.NewReader(mcpInit))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	hdr = append(hdr, "Mcp-Session-Id", sid)
	h.must(http.StatusAccepted)(h.do("POST", "/mcp/tools", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr...))
	return hdr
}

// mcpInit is an initialize request of the 2025-03-26 protocol, the last
// that had JSON-RPC batches.
const mcpInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`

type rpcError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestMCPHostileBodies: bodies that are not one JSON-RPC message are
// refused before the SDK sees them, each with a JSON-RPC error naming what
// is wrong; a batch above all, which would fan one request out into as
// many tool calls as a megabyte holds.
func TestMCPHostileBodies(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{runToken: runToken})
	h.must(http.StatusCreated)(h.admin("PUT", "/modules/counter", counterWasm(t)))
	h.must(http.StatusCreated)(h.putBundle("tools", counterApp("add")))
	hdr := mcpRaw(t, h)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"n":1}}}`
	for _, c := range []struct {
		body string
		code int
		msg  string
	}{
		{"[" + call + "," + strings.Replace(call, `"id":1`, `"id":2`, 1) + "]", -32600, "batches are not accepted"},
		{`not json`, -32700, "invalid character"},
		{`{"jsonrpc":"2.0","id":3,"method":"ping"`, -32700, "unexpected end of JSON input"},
		{strings.Repeat("[", 100_000), -32600, "batches are not accepted"},
		{`{"a":` + strings.Repeat("[", 100_000), -32700, "exceeded max depth"},
		{`"ping"`, -32600, "a JSON-RPC message is an object"},
		{"  \n", -32600, "empty"},
	} {
		st, b := h.do("POST", "/mcp/tools", c.body, hdr...)
		var e rpcError
		if err := json.Unmarshal(b, &e); err != nil || st != http.StatusBadRequest || e.JSONRPC != "2.0" || string(e.ID) != "null" || e.Error.Code != c.code || !strings.Contains(e.Error.Message, c.msg) {
			t.Errorf("%.40q: %d %.300s, want 400 and a JSON-RPC error %d (%s)", c.body, st, b, c.code, c.msg)
		}
	}
	// The session is unharmed, and no call of the batch ran.
	st, b := h.do("POST", "/mcp/tools", call, hdr...)
	if st != http.StatusOK || !strings.Contains(string(b), `{\"total\":1}`) {
		t.Errorf("a call after the hostile bodies: %d %s", st, b)
	}
	// Arguments that are not an object are invalid params.
	st, b = h.do("POST", "/mcp/tools", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add","arguments":"n=1"}}`, hdr...)
	if !strings.Contains(string(b), `"code":-32602`) || !strings.Contains(string(b), "arguments must be a JSON object") {
		t.Errorf("string arguments: %d %s, want a JSON-RPC error -32602", st, b)
	}
}

// TestMCPSessionBoundHoldsUnderConcurrency: initialize requests arriving
// together do not all pass the bound on sessions before any of them has
// made its session.
func TestMCPSessionBoundHoldsUnderConcurrency(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{runToken: runToken, mcpMaxSessions: 3})
	h.must(http.StatusCreated)(h.admin("PUT", "/modules/counter", counterWasm(t)))
	h.must(http.StatusCreated)(h.putBundle("tools", counterApp("add")))
	hdr := []string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream", "Authorization", "Bearer " + runToken}
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for range 40 {
		wg.Go(func() {
			st, _ := h.do("POST", "/mcp/tools", mcpInit, hdr...)
			mu.Lock()
			codes[st]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[http.StatusOK] != 3 || codes[http.StatusServiceUnavailable] != 37 {
		t.Errorf("40 initializes at once with a bound of 3: %v, want 3 sessions and 37 refusals", codes)
	}
	if b := h.must(http.StatusOK)(h.do("GET", "/metrics", nil)); !strings.Contains(string(b), "adkhost_mcp_sessions 3\n") {
		t.Error("/metrics does not count 3 MCP sessions")
	}
}

// TestMCPErrorsAreJSONRPC: what the SDK alone answers in plain text (a
// method no handler takes, a session the server does not know, a request
// it cannot take) is a JSON-RPC error to the request's id (null for an
// unknown session), with the SDK's HTTP status and text; the go-sdk's
// client still takes the 404 for its session's end.
func TestMCPErrorsAreJSONRPC(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{runToken: runToken})
	h.must(http.StatusCreated)(h.admin("PUT", "/modules/counter", counterWasm(t)))
	h.must(http.StatusCreated)(h.putBundle("tools", counterApp("add")))
	hdr := mcpRaw(t, h)
	unknown := append(append([]string{}, hdr[:len(hdr)-2]...), "Mcp-Session-Id", "no-such-session")
	for _, c := range []struct {
		name, method, body string
		hdr                []string
		status, code       int
		id, msg            string
	}{
		{"unknown method", "POST", `{"jsonrpc":"2.0","id":7,"method":"nope"}`, hdr, 400, -32601, "7", `"nope" unsupported`},
		{"a client's method", "POST", `{"jsonrpc":"2.0","id":"s","method":"sampling/createMessage","params":{}}`, hdr, 400, -32601, `"s"`, "sampling/createMessage"},
		{"unknown session", "POST", `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`, unknown, 404, -32001, "null", "session not found"},
		{"unknown session, GET", "GET", "", append(unknown, "Accept", "text/event-stream"), 404, -32001, "null", "session not found"},
		{"unknown session, DELETE", "DELETE", "", unknown, 404, -32001, "null", "session not found"},
		{"call without params", "POST", `{"jsonrpc":"2.0","id":9,"method":"tools/call"}`, hdr, 400, -32600, "9", "params"},
	} {
		st, b := h.do(c.method, "/mcp/tools", c.body, c.hdr...)
		var e rpcError
		if err := json.Unmarshal(b, &e); err != nil || st != c.status || e.JSONRPC != "2.0" || string(e.ID) != c.id || e.Error.Code != c.code || !strings.Contains(e.Error.Message, c.msg) {
			t.Errorf("%s: %d %.300s, want %d and a JSON-RPC error %d to id %s (%s)", c.name, st, b, c.status, c.code, c.id, c.msg)
		}
	}
	// Answers that are not errors pass as they were.
	st, b := h.do("POST", "/mcp/tools", `{"jsonrpc":"2.0","id":10,"method":"tools/list"}`, hdr...)
	if st != http.StatusOK || !strings.Contains(string(b), `"name":"add"`) {
		t.Errorf("tools/list: %d %.300s", st, b)
	}
	// The go-sdk's client still takes the 404 for its session's end (it
	// would take one with its request's id for a refused request). Without
	// the standalone stream, whose end would otherwise race the call.
	c := mcp.NewClient(&mcp.Implementation{Name: "adkhost-test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: h.ts.URL + "/mcp/tools",
		HTTPClient: &http.Client{Transport: bearerTransport{runToken}}, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	h.must(http.StatusNoContent)(h.do("DELETE", "/mcp/tools", "", append(append([]string{}, hdr[:len(hdr)-2]...), "Mcp-Session-Id", cs.ID())...))
	if _, err := cs.ListTools(t.Context(), nil); !errors.Is(err, mcp.ErrSessionMissing) {
		t.Errorf("a call in a deleted session: %v, want ErrSessionMissing", err)
	}
}

// An MCP tool call is a run: it counts against --max-runs with /run and
// /run_sse. MCP calls were not counted, so --mcp-max-sessions sessions
// each running a call added up to 1024 runs past the bound. Past it a call
// is the JSON-RPC error -32000 naming the bound, and a /run while the MCP
// call holds the only slot is refused as usual.
func TestMCPToolCallsCountAgainstMaxRuns(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{runToken: runToken, limits: server.Limits{MaxRuns: 1}})
	h.must(http.StatusCreated)(h.admin("PUT", "/modules/counter", counterWasm(t)))
	h.must(http.StatusCreated)(h.putBundle("tools", counterApp("add", "spin")))
	spinning, err := h.mcpConnect(t, "tools", runToken)
	if err != nil {
		t.Fatal(err)
	}
	defer spinning.Close()
	other, err := h.mcpConnect(t, "tools", runToken)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		spinning.CallTool(context.Background(), &mcp.CallToolParams{Name: "spin", Arguments: map[string]any{}})
	}()
	// The spin holds the slot until the sandbox stops it (1.5 s).
	for !strings.Contains(string(h.must(http.StatusOK)(h.do("GET", "/metrics", nil))), "adkhost_runs_in_flight 1\n") {
		select {
		case <-done:
			t.Fatal("the spin ended before another call could be refused")
		case <-time.After(5 * time.Millisecond):
		}
	}
	_, err = other.CallTool(context.Background(), &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"n": 1}})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != -32000 || !strings.Contains(je.Message, "too many runs in flight: the server runs at most 1 at once (--max-runs") {
		t.Errorf("a second call: err = %v, want JSON-RPC error -32000 naming --max-runs", err)
	}
	if st, body := h.do("POST", "/run", runBody("tools", "u", "s", "hi"), "Authorization", "Bearer "+runToken); st != http.StatusServiceUnavailable {
		t.Errorf("/run during the MCP call: %d %s, want 503", st, body)
	}
	<-done
	// The slot is free again.
	if res := callTool(t, other, "add", map[string]any{"n": 1}); res.IsError {
		t.Errorf("after the spin: %s", resultText(res))
	}
}

// schemaWAT is a module of fixed tools (describe's tools, JSON) whose
// every call answers {"ok": true}.
func schemaWAT(t *testing.T, name, tools string) []byte {
	t.Helper()
	describe := `{"abiVersion":1,"name":"` + name + `","hooks":["tool_call"],"tools":` + tools + `}`
	answer := `{"abiVersion":1,"result":{"ok":true}}`
	q := func(s string) string { return strings.ReplaceAll(s, `"`, `\"`) }
	const at = 8192
	return wasmbuild.WAT(t, fmt.Sprintf(`(module
  (memory (export "memory") 4)
  (data (i32.const 16) "%s")
  (data (i32.const %d) "%s")
  (func (export "adkhost_abi_version_1"))
  (func (export "adkhost_alloc") (param $n i32) (result i32)
    (select (i32.const 65536) (i32.const 0) (i32.le_u (local.get $n) (i32.const 131072))))
  (func (export "adkhost_free") (param i32 i32))
  (func (export "adkhost_describe") (param i32 i32) (result i64)
    (i64.const %d))
  (func (export "adkhost_tool_call") (param i32 i32) (result i64)
    (i64.const %d)))`, q(describe), at, q(answer), int64(16)<<32|int64(len(describe)), int64(at)<<32|int64(len(answer))))
}

// TestMCPToolSchemaTheSDKRefuses: a module tool whose parameters schema
// the MCP SDK refuses (here an x-mcp-header annotation on an object
// property, which go-sdk's AddTool panics on) is left out of the app's MCP
// tools; its other tools are served, and re-registering the app, which
// re-syncs the tool list of an app with MCP clients, still works. The
// panic made every MCP request to the app a 500, and a replica syncing
// the app from the registry (a goroutine of its own) died of it.
func TestMCPToolSchemaTheSDKRefuses(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{runToken: runToken})
	tools := `[{"name":"bad","description":"b","parameters":{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"X-A"}}}},` +
		`{"name":"dup","description":"d","parameters":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X-A"},"b":{"type":"string","x-mcp-header":"x-a"}}}},` +
		`{"name":"good","description":"g","parameters":{"type":"object","properties":{"a":{"type":"string"}}}}]`
	h.must(http.StatusCreated)(h.admin("PUT", "/modules/hdr", schemaWAT(t, "hdr", tools)))
	app := map[string]string{
		"root_agent.yaml":     "name: tools_agent\nmodel: scripted\ninstruction: Use the tools.\ntools:\n  - module: hdr\n",
		"scripted_model.yaml": "rules:\n  - respond: {text: unused}\n",
	}
	h.must(http.StatusCreated)(h.putBundle("tools", app))
	cs, err := h.mcpConnect(t, "tools", runToken)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	ctx := context.Background()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{"good"}) {
		t.Errorf("tools = %v, want [good]", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "good", Arguments: map[string]any{"a": "x"}})
	if err != nil || res.IsError {
		t.Fatalf("call good: %v %+v", err, res)
	}
	// A new version while a client is connected re-syncs at once.
	app["root_agent.yaml"] = strings.Replace(app["root_agent.yaml"], "Use the tools.", "Use them.", 1)
	h.must(http.StatusOK)(h.putBundle("tools", app))
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list after re-registration: %v", err)
	}
}
