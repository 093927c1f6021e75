package mcptool

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// rawPeer is a hostile MCP server over streamable HTTP, written by hand:
// it shakes hands properly, then answers tools/list and tools/call with
// whatever answer returns (a body, and whether to send it as an event
// stream). It has no standalone stream.
func rawPeer(t *testing.T, answer func(method string, id json.RawMessage) (body string, sse bool)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
			return
		case http.MethodGet:
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var body string
		var sse bool
		switch {
		case msg.ID == nil: // a notification
			w.WriteHeader(http.StatusAccepted)
			return
		case msg.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "evil-session")
			body = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"evil","version":"1"}}}`, msg.ID, msg.Params.ProtocolVersion)
		default:
			body, sse = answer(msg.Method, msg.ID)
		}
		if sse {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", body)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestDeepJSON pins the SDK's depth check: a server answering with JSON
// nested a hundred thousand levels deep (in a body, and in an event) is
// refused before the SDK's recursive decoder (segmentio's, without a depth
// limit of its own) sees it; four megabytes of "[" would overflow its
// goroutine stack and kill the process.
func TestDeepJSON(t *testing.T) {
	deep := strings.Repeat("[", 100_000)
	for _, sse := range []bool{false, true} {
		url := rawPeer(t, func(method string, id json.RawMessage) (string, bool) {
			return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"tools":` + deep, sse
		})
		_, err := newToolset(t, Config{HTTP: &HTTPServer{URL: url}}).Tools(roCtx{Context: t.Context(), inv: "i"})
		if err == nil || !strings.Contains(err.Error(), "maximum nesting depth") {
			t.Errorf("sse=%v: err = %v, want the depth refused", sse, err)
		}
	}
}

// TestHostileToolNames: a listed name no model API would take (which would
// fail every model request of the agent), or a name listed twice (whose
// second declaration would fail it too, and take the first's calls), is
// skipped; the other tools are served.
func TestHostileToolNames(t *testing.T) {
	var tools []string
	for _, n := range []string{"ok", "ok", "bad name", strings.Repeat("x", 65), "9lives", "dotted.name", "", "ünïcode", "x\u0000y"} {
		b, _ := json.Marshal(n)
		tools = append(tools, `{"name":`+string(b)+`,"inputSchema":{"type":"object"}}`)
	}
	url := rawPeer(t, func(method string, id json.RawMessage) (string, bool) {
		return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"tools":[` + strings.Join(tools, ",") + `]}}`, false
	})
	got, err := newToolset(t, Config{HTTP: &HTTPServer{URL: url}}).Tools(roCtx{Context: t.Context(), inv: "i"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range got {
		names = append(names, tl.Name())
	}
	if strings.Join(names, ",") != "dotted.name,ok" {
		t.Errorf("tools = %q, want dotted.name and ok", names)
	}
	// With a prefix, the limit on length counts it.
	got, err = newToolset(t, Config{HTTP: &HTTPServer{URL: url}, ToolNamePrefix: strings.Repeat("p", 60)}).Tools(roCtx{Context: t.Context(), inv: "i"})
	if err != nil || len(got) != 1 || got[0].(*Tool).RemoteName() != "ok" {
		t.Errorf("with a 60-byte prefix: %v %v, want only ok", got, err)
	}
}

// TestListingBytesBounded: MaxResponseBytes bounds a tool listing as a
// whole, not only each page: a server paging one large tool at a time is
// refused once the tools it listed pass the bound, without asking for
// more pages or retrying. Before, every page was read and kept (up to
// MaxTools of them: 1000 x 4 MiB for each invocation, which every model
// request of the agent then carried).
func TestListingBytesBounded(t *testing.T) {
	desc := strings.Repeat("d", 256<<10)
	var pages atomic.Int32
	url := rawPeer(t, func(method string, id json.RawMessage) (string, bool) {
		n := pages.Add(1)
		cursor := fmt.Sprintf("%q", fmt.Sprint("p", n))
		if n >= 50 {
			cursor = `""`
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"t%d","description":%q,"inputSchema":{"type":"object"}}],"nextCursor":%s}}`, id, n, desc, cursor), false
	})
	_, err := newToolset(t, Config{HTTP: &HTTPServer{URL: url}, MaxResponseBytes: 1 << 20}).Tools(roCtx{Context: t.Context(), inv: "i"})
	if err == nil || !strings.Contains(err.Error(), "more than 1048576 bytes") {
		t.Errorf("err = %v, want the listing's size refused", err)
	}
	if n := pages.Load(); n != 4 {
		t.Errorf("%d pages asked for, want 4 (the fourth passes 1 MiB)", n)
	}
}
