package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/host/server"
	"github.com/adkhost/adkhost/internal/wasmbuild"
	"github.com/adkhost/adkhost/sandbox"
	"github.com/adkhost/adkhost/store/bolt"
	"github.com/adkhost/adkhost/store/registry"
)

const adminToken = "admin-secret"

// cacheDir keeps compiled modules between test runs: compiling the Go
// weather guest takes tens of seconds under -race, loading it from the
// cache a fraction of a second.
var cacheDir = filepath.Join(os.TempDir(), "adkhost-server-test-cache")

var weather struct {
	once sync.Once
	wasm []byte
	err  error
}

// weatherWasm builds sdk/go/examples/weather (get_weather, asks for state).
func weatherWasm(t testing.TB) []byte {
	t.Helper()
	weather.once.Do(func() {
		root, err := wasmbuild.ModuleRoot()
		if err != nil {
			weather.err = err
			return
		}
		weather.wasm, weather.err = wasmbuild.Build(wasmbuild.SDKExample(root, "weather", "adkhost-server-guests"))
	})
	if weather.err != nil {
		t.Fatalf("building the weather guest: %v", weather.err)
	}
	return weather.wasm
}

// harness is a server over httptest on a bbolt store in dir.
type harness struct {
	t   testing.TB
	dir string
	db  *bolt.DB
	rt  *sandbox.Runtime
	srv *server.Server
	ts  *httptest.Server
}

type harnessOpts struct {
	runToken string
	limits   server.Limits
	tracer   trace.TracerProvider
	devUIDir string
	// mcpMaxSessions is Config.MCPMaxSessions.
	mcpMaxSessions int
	// allowStdioMCP is Config.AllowStdioMCP.
	allowStdioMCP bool
	// wrapRegistry, when set, wraps the store's registry (Config.Stores).
	wrapRegistry func(registry.Registry) registry.Registry
	// wrapSessions, when set, wraps the store's sessions (Config.Stores).
	wrapSessions func(session.Service) session.Service
}

func newHarness(t testing.TB, dir string, o harnessOpts) *harness {
	t.Helper()
	ctx := context.Background()
	db, err := bolt.Open(filepath.Join(dir, "adkhost.db"), bolt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := sandbox.New(ctx, sandbox.Config{CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	var stores server.Stores
	if o.wrapRegistry != nil || o.wrapSessions != nil {
		stores = server.Stores{Sessions: db.Sessions(), Artifacts: db.Artifacts(), Registry: db.Registry()}
		if o.wrapRegistry != nil {
			stores.Registry = o.wrapRegistry(db.Registry())
		}
		if o.wrapSessions != nil {
			stores.Sessions = o.wrapSessions(db.Sessions())
		}
	}
	srv, err := server.New(ctx, server.Config{
		DB: db, Stores: stores, Runtime: rt, AdminToken: adminToken, RunToken: o.runToken,
		Limits: o.limits, Tracer: o.tracer, Version: "test", DevUIDir: o.devUIDir, MCPMaxSessions: o.mcpMaxSessions,
		AllowStdioMCP: o.allowStdioMCP,
	})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, dir: dir, db: db, rt: rt, srv: srv, ts: httptest.NewServer(srv.Handler())}
	t.Cleanup(h.close)
	return h
}

// close stops the server and closes its store and runtime; idempotent.
func (h *harness) close() {
	if h.ts == nil {
		return
	}
	h.ts.Close()
	h.srv.Close()
	h.rt.Close(context.Background())
	h.db.Close()
	h.ts = nil
}

// do sends a request; a non-nil body that is not []byte or string is JSON.
func (h *harness) do(method, path string, body any, hdr ...string) (int, []byte) {
	h.t.Helper()
	var r io.Reader
	ctype := ""
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	case string:
		r = strings.NewReader(b)
	default:
		js, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		r, ctype = bytes.NewReader(js), "application/json"
	}
	req, err := http.NewRequest(method, h.ts.URL+path, r)
	if err != nil {
		h.t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := h.ts.Client().Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.StatusCode, out
}

// admin sends an admin request with the token.
func (h *harness) admin(method, path string, body any, hdr ...string) (int, []byte) {
	h.t.Helper()
	return h.do(method, "/admin/v1"+path, body, append([]string{"Authorization", "Bearer " + adminToken}, hdr...)...)
}

// must returns a check that fails the test unless the status is want and
// returns the body; use it as h.must(200)(h.do(...)).
func (h *harness) must(want int) func(int, []byte) []byte {
	return func(status int, body []byte) []byte {
		h.t.Helper()
		if status != want {
			h.t.Fatalf("status %d, want %d: %s", status, want, body)
		}
		return body
	}
}

// setupApp uploads the weather module and registers app name, whose
// answers start with reply.
func (h *harness) setupApp(name, reply string, withTool bool) {
	h.t.Helper()
	st, b := h.admin("PUT", "/modules/weather", weatherWasm(h.t))
	if st != http.StatusCreated && st != http.StatusOK {
		h.t.Fatalf("upload: %d %s", st, b)
	}
	h.must(http.StatusCreated)(h.putBundle(name, appFiles(name, reply, withTool)))
}

func (h *harness) putApp(name, yaml string) (int, []byte) {
	return h.admin("PUT", "/apps/"+name, yaml, "Content-Type", "application/yaml")
}

// putBundle registers an app from a multipart bundle of files.
func (h *harness) putBundle(name string, files map[string]string) (int, []byte) {
	h.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for p, content := range files {
		fw, err := mw.CreateFormFile(p, p)
		if err != nil {
			h.t.Fatal(err)
		}
		fw.Write([]byte(content))
	}
	mw.Close()
	return h.admin("PUT", "/apps/"+name, buf.Bytes(), "Content-Type", mw.FormDataContentType())
}

// appFiles is an appdef bundle: agent <name>_agent on the reactive
// scripted model. With the tool, a user message makes it call get_weather
// (the weather module) with the text as the city, and the response makes
// it answer "<reply>: weather in <city>"; without, it answers
// "<reply>: <text>". "fail" makes the model fail.
func appFiles(name, reply string, withTool bool) map[string]string {
	root := "name: " + name + "_agent\nmodel: scripted\ndescription: test agent\ninstruction: Answer.\n"
	script := "rules:\n  - when: {user_contains: fail}\n    respond: {error: asked to fail}\n"
	if withTool {
		root += "tools:\n  - module: weather\nadkhost:\n  modules:\n    weather:\n      grants: {state: true}\n      write_user_state: true\n"
		script += "  - when: {function_response: get_weather}\n    respond: {text: '" + reply + ": weather in {{response.city}}'}\n" +
			"  - respond: {function_calls: [{name: get_weather, args: {city: '{{text}}'}}]}\n"
	} else {
		script += "  - respond: {text: '" + reply + ": {{text}}'}\n"
	}
	return map[string]string{"root_agent.yaml": root, "scripted_model.yaml": script}
}

// decode unmarshals body into v or fails.
func decode[T any](t testing.TB, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	return v
}

// runBody is a /run request body.
func runBody(app, user, sess, text string) map[string]any {
	return map[string]any{"appName": app, "userId": user, "sessionId": sess,
		"newMessage": map[string]any{"role": "user", "parts": []any{map[string]any{"text": text}}}}
}

// lastText returns the text of the last event that has some.
func lastText(t testing.TB, events []map[string]any) string {
	t.Helper()
	for i := len(events) - 1; i >= 0; i-- {
		c, _ := events[i]["content"].(map[string]any)
		parts, _ := c["parts"].([]any)
		for _, p := range parts {
			if s, _ := p.(map[string]any)["text"].(string); s != "" {
				return s
			}
		}
	}
	t.Fatalf("no text in %v", events)
	return ""
}
