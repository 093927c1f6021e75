package server_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/host/server"
)

// fakeDevUI writes a stand-in for google-adk's browser/ build: the tests
// must not depend on the wheel (make test-devui runs the real one). A
// runtime-config.json on disk checks that the generated one wins, as in
// google-adk; secret.txt beside the directory must never be served.
func fakeDevUI(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "browser")
	files := map[string]string{
		"index.html":                        "<!doctype html><title>Agent Development Kit Dev UI</title>",
		"main-ABC.js":                       "console.log('ui')",
		"styles-ABC.css":                    "body{}",
		"assets/ADK-512-color.svg":          "<svg/>",
		"assets/config/runtime-config.json": `{"backendUrl":"http://stale"}`,
		"nested/index.html":                 "nested index",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "secret.txt"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// rawDo sends a request without following redirects and returns the response
// with its body read.
func rawDo(t *testing.T, h *harness, method, path, body string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, h.ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	c := *h.ts.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestDevUIOffByDefault(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	for _, p := range []string{"/", "/dev-ui/", "/dev-ui/assets/config/runtime-config.json", "/config/telemetry", "/dev/apps/x/eval_sets"} {
		if resp, body := rawDo(t, h, "GET", p, ""); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s without a dev UI: %d %s, want 404", p, resp.StatusCode, body)
		}
	}
}

func TestDevUIStaticFiles(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{devUIDir: fakeDevUI(t)})

	for _, p := range []string{"/", "/dev-ui"} {
		resp, _ := rawDo(t, h, "GET", p, "")
		if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != "/dev-ui/" {
			t.Errorf("GET %s: %d Location %q, want 307 to /dev-ui/", p, resp.StatusCode, resp.Header.Get("Location"))
		}
	}

	cases := []struct{ path, ctype, body string }{
		{"/dev-ui/", "text/html", "Agent Development Kit Dev UI"},
		{"/dev-ui/main-ABC.js", "javascript", "console.log('ui')"},
		{"/dev-ui/styles-ABC.css", "text/css", "body{}"},
		{"/dev-ui/assets/ADK-512-color.svg", "image/svg+xml", "<svg/>"},
		{"/dev-ui/nested/", "text/html", "nested index"},
	}
	for _, c := range cases {
		resp, body := rawDo(t, h, "GET", c.path, "")
		if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Type"), c.ctype) || body != c.body && !strings.Contains(body, c.body) {
			t.Errorf("GET %s: %d %q %q, want 200 %s %q", c.path, resp.StatusCode, resp.Header.Get("Content-Type"), body, c.ctype, c.body)
		}
	}

	// As Starlette's StaticFiles: unknown paths are 404, not index.html,
	// and nothing outside the directory is reachable.
	for _, p := range []string{"/dev-ui/missing.js", "/dev-ui/some/route", "/dev-ui/%2e%2e/secret.txt", "/dev-ui/..%2fsecret.txt", "/dev-ui/nested/../../secret.txt"} {
		resp, body := rawDo(t, h, "GET", p, "")
		if resp.StatusCode != http.StatusNotFound || strings.Contains(body, "secret") && !strings.Contains(body, "Not Found") {
			t.Errorf("GET %s: %d %s, want 404", p, resp.StatusCode, body)
		}
	}
}

func TestDevUIConfigEndpoints(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{devUIDir: fakeDevUI(t)})

	resp, body := rawDo(t, h, "GET", "/dev-ui/assets/config/runtime-config.json", "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("runtime-config: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if got := decode[map[string]any](t, []byte(body)); got["backendUrl"] != "" || got["telemetry"] != false {
		t.Errorf("runtime-config = %v, want backendUrl \"\" (this origin) and telemetry false (no consent dialog)", got)
	}
	if _, body := rawDo(t, h, "GET", "/dev-ui/config", ""); !strings.Contains(body, `"logo_text":null`) {
		t.Errorf("/dev-ui/config = %s", body)
	}

	if _, body := rawDo(t, h, "GET", "/config/telemetry", ""); strings.TrimSpace(body) != `{"telemetry":false}` {
		t.Errorf("GET /config/telemetry = %s", body)
	}
	if resp, body := rawDo(t, h, "POST", "/config/telemetry", `{"telemetry":true}`, "Content-Type", "application/json"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("POST /config/telemetry without x-adk-telemetry-request: %d %s, want 400", resp.StatusCode, body)
	}
	resp, body = rawDo(t, h, "POST", "/config/telemetry", `{"telemetry":false}`, "Content-Type", "application/json", "x-adk-telemetry-request", "true")
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(body) != `{"telemetry":false}` {
		t.Errorf("POST /config/telemetry: %d %s", resp.StatusCode, body)
	}
}

func TestDevUIDevEndpoints(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{devUIDir: fakeDevUI(t)})
	h.must(http.StatusCreated)(h.putBundle("ui_app", appFiles("ui_app", "hello", false)))

	resp, body := rawDo(t, h, "GET", "/dev/apps/ui_app/build_graph", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("build_graph: %d %s", resp.StatusCode, body)
	}
	g := decode[map[string]any](t, []byte(body))
	root, _ := g["root_agent"].(map[string]any)
	if g["name"] != "ui_app" || root["name"] != "ui_app_agent" || root["description"] != "test agent" {
		t.Errorf("build_graph = %s", body)
	}
	if resp, body := rawDo(t, h, "GET", "/dev/apps/nope/build_graph", ""); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "App not found: nope") {
		t.Errorf("build_graph of an unknown app: %d %s", resp.StatusCode, body)
	}

	want := map[string]string{
		"/dev/apps/ui_app/build_graph_image?dark_mode=true":           "{}",
		"/dev/apps/ui_app/builder?ts=1":                               "",
		"/dev/apps/ui_app/eval_sets":                                  "[]",
		"/dev/apps/ui_app/eval_results":                               "[]",
		"/dev/apps/ui_app/eval-sets":                                  `{"evalSetIds":[]}`,
		"/dev/apps/ui_app/eval-results":                               `{"evalResultIds":[]}`,
		"/dev/apps/ui_app/tests":                                      "[]",
		"/dev/apps/ui_app/debug/trace/session/s1":                     "[]",
		"/dev/apps/ui_app/users/u/sessions/s1/events/e1/graph":        "{}",
		"/dev/apps/ui_app/build_graph_image?dark_mode=false&node=sub": "{}",
	}
	for p, w := range want {
		resp, body := rawDo(t, h, "GET", p, "")
		if resp.StatusCode != http.StatusOK || strings.TrimSpace(body) != w {
			t.Errorf("GET %s: %d %q, want 200 %q", p, resp.StatusCode, body, w)
		}
	}
	if resp, body := rawDo(t, h, "GET", "/dev/apps/ui_app/debug/trace/ev1", ""); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "Trace not found") {
		t.Errorf("trace of an event: %d %s, want google-adk's 404", resp.StatusCode, body)
	}
}

// The page is open (a browser cannot send a bearer token with it); the
// UI's API calls are run API calls and need the token like the rest.
func TestDevUIRunToken(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{devUIDir: fakeDevUI(t), runToken: "run-secret"})
	if resp, _ := rawDo(t, h, "GET", "/dev-ui/", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /dev-ui/ with a run token set: %d, want 200", resp.StatusCode)
	}
	for _, p := range []string{"/config/telemetry", "/dev/apps/x/eval_sets"} {
		if resp, _ := rawDo(t, h, "GET", p, ""); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without the run token: %d, want 401", p, resp.StatusCode)
		}
		if resp, _ := rawDo(t, h, "GET", p, "", "Authorization", "Bearer run-secret"); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s with the run token: %d, want 200", p, resp.StatusCode)
		}
	}
}

// TestDevUIRequestSequence replays the calls google-adk 2.13's dev UI makes
// to load, pick an app, create a session, send a message and show the
// reply (recorded from the UI in Chromium against `adk web`; make
// test-devui drives the real UI), so that CI without a browser still
// catches a route or a shape the UI depends on going away.
func TestDevUIRequestSequence(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{devUIDir: fakeDevUI(t)})
	h.must(http.StatusCreated)(h.putBundle("ui_app", appFiles("ui_app", "It is sunny", false)))

	for _, p := range []string{"/dev-ui/", "/dev-ui/assets/config/runtime-config.json", "/version", "/config/telemetry",
		"/dev/apps/ui_app/build_graph", "/dev/apps/ui_app/build_graph_image?dark_mode=false",
		"/dev/apps/ui_app/build_graph_image?dark_mode=true", "/dev/apps/ui_app/builder?ts=1795330508769",
		"/dev/apps/ui_app/eval_sets", "/dev/apps/ui_app/eval_results"} {
		if resp, body := rawDo(t, h, "GET", p, ""); resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", p, resp.StatusCode, body)
		}
	}
	_, body := rawDo(t, h, "GET", "/list-apps?relative_path=./", "")
	if apps := decode[[]string](t, []byte(body)); len(apps) != 1 || apps[0] != "ui_app" {
		t.Fatalf("list-apps = %s", body)
	}

	resp, body := rawDo(t, h, "POST", "/apps/ui_app/users/user/sessions",
		`{"state":{"__session_metadata__":{"displayName":"What's the weather in Paris?"}}}`, "Content-Type", "application/json")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("create session: %d %s", resp.StatusCode, body)
	}
	sess := decode[map[string]any](t, []byte(body))
	id, _ := sess["id"].(string)
	if id == "" || sess["appName"] != "ui_app" || sess["userId"] != "user" {
		t.Fatalf("session = %s", body)
	}

	run, _ := json.Marshal(map[string]any{"appName": "ui_app", "userId": "user", "sessionId": id,
		"newMessage": map[string]any{"role": "user", "parts": []any{map[string]any{"text": "What's the weather in Paris?"}}},
		"streaming":  false, "stateDelta": nil})
	resp, body = rawDo(t, h, "POST", "/run_sse", string(run), "Content-Type", "application/json")
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("run_sse: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	var reply string
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		ev := decode[map[string]any](t, []byte(data))
		if ev["error"] != nil {
			t.Fatalf("error frame: %s", data)
		}
		// What the UI renders: content.parts[].text of the model's events.
		c, _ := ev["content"].(map[string]any)
		parts, _ := c["parts"].([]any)
		for _, p := range parts {
			if s, _ := p.(map[string]any)["text"].(string); s != "" && c["role"] == "model" {
				reply = s
			}
		}
	}
	if !strings.HasPrefix(reply, "It is sunny") {
		t.Fatalf("reply %q in %s", reply, body)
	}
	if resp, body := rawDo(t, h, "GET", "/dev/apps/ui_app/debug/trace/session/"+id, ""); resp.StatusCode != http.StatusOK || strings.TrimSpace(body) != "[]" {
		t.Errorf("session trace: %d %s", resp.StatusCode, body)
	}
}

func TestCheckDevUIDir(t *testing.T) {
	if err := server.CheckDevUIDir(fakeDevUI(t)); err != nil {
		t.Errorf("a UI build: %v", err)
	}
	if err := server.CheckDevUIDir(filepath.Join(t.TempDir(), "missing")); err == nil || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing directory: %v, want a wrapped not-exist error", err)
	}
	if err := server.CheckDevUIDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no index.html") {
		t.Errorf("a directory without index.html: %v", err)
	}
}
