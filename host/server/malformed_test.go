package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestMalformedRequestsNever500: every malformed request to every route
// gets a 4xx with a message, never a 5xx: ids too long or unaddressable,
// bodies of the wrong shape, new messages no agent can take.
func TestMalformedRequestsNever500(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	h.setupApp("chat", "v1", false)
	h.must(http.StatusOK)(h.do("POST", "/apps/chat/users/u/sessions", map[string]any{"sessionId": "s"}))
	long := strings.Repeat("x", 100_000)
	run := func(user, sess string, msg any) map[string]any {
		return map[string]any{"appName": "chat", "userId": user, "sessionId": sess, "newMessage": msg}
	}
	text := map[string]any{"role": "user", "parts": []any{map[string]any{"text": "hi"}}}
	type req struct {
		method, path string
		body         any
		admin        bool
		ctype        string
	}
	for _, tc := range []req{
		{"POST", "/run", run("u", long, text), false, ""},
		{"POST", "/run", run(long, "s", text), false, ""},
		{"POST", "/run", run("u", "a/b", text), false, ""},
		{"POST", "/run", run("u", "s\x00", text), false, ""},
		{"POST", "/run", run("u", "s", map[string]any{"role": "user", "parts": []any{}}), false, ""},
		{"POST", "/run", run("u", "s", map[string]any{"role": "model", "parts": []any{map[string]any{"text": "x"}}}), false, ""},
		{"POST", "/run", run("u", "s", map[string]any{"role": "user", "parts": []any{nil}}), false, ""},
		{"POST", "/run", run("u", "s", "not a content"), false, ""},
		{"POST", "/run", `{"appName":`, false, "application/json"},
		{"POST", "/run", `[1,2]`, false, "application/json"},
		{"POST", "/run", `null`, false, "application/json"},
		{"POST", "/run_sse", run("u", long, text), false, ""},
		{"POST", "/run_sse", run("u", "s", map[string]any{"role": "user"}), false, ""},
		{"POST", "/apps/chat/users/u/sessions", map[string]any{"sessionId": long}, false, ""},
		{"POST", "/apps/chat/users/u/sessions", map[string]any{"sessionId": "a/b"}, false, ""},
		{"POST", "/apps/chat/users/u/sessions", `{"state": 5}`, false, "application/json"},
		{"POST", "/apps/chat/users/" + long + "/sessions", map[string]any{}, false, ""},
		{"POST", "/apps/chat/users/u/sessions/" + long, map[string]any{}, false, ""},
		{"POST", "/apps/chat/users/u/sessions/s2", `[1]`, false, "application/json"},
		{"GET", "/apps/chat/users/u/sessions/" + long, nil, false, ""},
		{"PATCH", "/apps/chat/users/u/sessions/s", `{"stateDelta": [1]}`, false, "application/json"},
		{"PATCH", "/apps/chat/users/u/memory", `{"sessionId": 7}`, false, "application/json"},
		{"PATCH", "/apps/chat/users/u/memory", map[string]any{"sessionId": long}, false, ""},
		{"GET", "/apps/chat/users/u/sessions/s/artifacts/" + long, nil, false, ""},
		{"GET", "/apps/chat/users/u/sessions/s/artifacts/a/versions/x", nil, false, ""},
		{"DELETE", "/apps/chat/users/u/sessions/" + long, nil, false, ""},
		{"PUT", "/modules/" + long, []byte("\x00asm"), true, "application/wasm"},
		{"PUT", "/modules/m", []byte("not wasm at all"), true, "application/wasm"},
		{"PUT", "/apps/" + long, "name: a", true, "application/yaml"},
		{"PUT", "/apps/a", "name: [", true, "application/yaml"},
		{"PUT", "/apps/a", "x: " + strings.Repeat("[", 30000), true, "application/yaml"},
		{"PUT", "/apps/a", "{}", true, "application/json"},
		{"GET", "/modules/" + long, nil, true, ""},
		{"DELETE", "/apps/" + long, nil, true, ""},
	} {
		var status int
		var body []byte
		hdr := []string{}
		if tc.ctype != "" {
			hdr = append(hdr, "Content-Type", tc.ctype)
		}
		if tc.admin {
			status, body = h.admin(tc.method, tc.path, tc.body, hdr...)
		} else {
			status, body = h.do(tc.method, tc.path, tc.body, hdr...)
		}
		name := tc.method + " " + tc.path
		if len(name) > 80 {
			name = name[:80] + "…"
		}
		if status < 400 || status >= 500 {
			t.Errorf("%s: status %d, want 4xx: %.300s", name, status, body)
		} else if !strings.Contains(string(body), `"error"`) && !strings.Contains(string(body), `"detail"`) {
			t.Errorf("%s: %d without a message: %.300s", name, status, body)
		}
	}
}
