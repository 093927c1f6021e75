package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/host/server"
)

// A run's engine bounds come from the server's Limits (--max-llm-calls,
// --max-events, --max-function-calls). An app whose scripted model asks
// for a call the agent does not have, again and again, looped until
// max_llm_calls; one asking for thousands of calls in one answer ran them
// all at once.
func TestRunEngineBounds(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{limits: server.Limits{MaxFunctionCalls: 2, MaxEvents: 5, MaxLLMCalls: -1}})
	root := "name: looper\nmodel: scripted\ninstruction: Loop.\n"
	script := "rules:\n" +
		"  - when: {user_contains: many}\n    respond: {function_calls: [{name: a}, {name: b}, {name: c}]}\n" +
		"  - respond: {function_calls: [{name: nope}]}\n"
	h.must(http.StatusCreated)(h.putBundle("looper", map[string]string{"root_agent.yaml": root, "scripted_model.yaml": script}))
	h.must(http.StatusOK)(h.do("POST", "/apps/looper/users/u/sessions/s1", map[string]any{}))
	h.must(http.StatusOK)(h.do("POST", "/apps/looper/users/u/sessions/s2", map[string]any{}))

	st, body := h.do("POST", "/run", runBody("looper", "u", "s1", "many calls"))
	if st != http.StatusUnprocessableEntity || !strings.Contains(string(body), "asks for 3 function calls, over the limit of 2 in one response") || !strings.Contains(string(body), "--max-function-calls") ||
		!strings.Contains(string(body), `"limit":"max_function_calls"`) {
		t.Errorf("many calls: %d %s", st, body)
	}
	st, body = h.do("POST", "/run", runBody("looper", "u", "s2", "loop"))
	if st != http.StatusUnprocessableEntity || !strings.Contains(string(body), "limit of 5 events") || !strings.Contains(string(body), "--max-events") ||
		!strings.Contains(string(body), `"limit":"max_events"`) {
		t.Errorf("loop: %d %s", st, body)
	}
	// The user's message and the 5 events the bound let through.
	sess := decode[map[string]any](t, h.must(http.StatusOK)(h.do("GET", "/apps/looper/users/u/sessions/s2", nil)))
	if evs, _ := sess["events"].([]any); len(evs) != 6 {
		t.Errorf("stored %d events, want 6", len(evs))
	}
}

// --max-run-bytes bounds what a run produces: past it the run stops with
// 413 naming the bound (an error frame on /run_sse), what came before it
// is stored, and the session takes the next run.
func TestRunBytesBound(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{limits: server.Limits{MaxRunBytes: 4000}})
	root := "name: echo\nmodel: scripted\ninstruction: Echo.\n"
	script := "rules:\n  - respond: {text: 'echo: {{text}}'}\n"
	h.must(http.StatusCreated)(h.putBundle("echo", map[string]string{"root_agent.yaml": root, "scripted_model.yaml": script}))
	h.must(http.StatusOK)(h.do("POST", "/apps/echo/users/u/sessions/s1", map[string]any{}))
	long := strings.Repeat("y", 5000)
	st, body := h.do("POST", "/run", runBody("echo", "u", "s1", long))
	if st != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "limit of 4000 bytes") || !strings.Contains(string(body), `"limit":"max_run_bytes"`) {
		t.Errorf("/run past the bound: %d %.400s", st, body)
	}
	st, body = h.do("POST", "/run_sse", runBody("echo", "u", "s1", long))
	if st != http.StatusOK || !strings.Contains(string(body), "limit of 4000 bytes") || !strings.Contains(string(body), "--max-run-bytes") {
		t.Errorf("/run_sse past the bound: %d %.400s", st, body)
	}
	st, body = h.do("POST", "/run", runBody("echo", "u", "s1", "short"))
	if st != http.StatusOK || !strings.Contains(string(body), "echo: short") {
		t.Errorf("a run within the bound: %d %.400s", st, body)
	}
}

// Values a client sends that nest deeper than session.DefaultMaxValueDepth
// are refused with 422 before they are stored: encoding/json reads 10,000
// levels, Python's json stops near 1,000, and google-adk could no longer
// load a session it shares with adkhost.
func TestDeepValuesRefused(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	h.must(http.StatusCreated)(h.putBundle("chat", appFiles("chat", "ok", false)))
	deep := strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000)
	ok := strings.Repeat(`{"a":`, 50) + "1" + strings.Repeat("}", 50)
	for _, tc := range []struct{ name, method, path, body string }{
		{"initial state", "POST", "/apps/chat/users/u/sessions", `{"sessionId":"s1","state":{"k":` + deep + `}}`},
		{"state patch", "PATCH", "/apps/chat/users/u/sessions/s0", `{"stateDelta":{"k":` + deep + `}}`},
		{"run state delta", "POST", "/run", `{"appName":"chat","userId":"u","sessionId":"s0","newMessage":{"role":"user","parts":[{"text":"hi"}]},"stateDelta":{"k":` + deep + `}}`},
		{"function response", "POST", "/run", `{"appName":"chat","userId":"u","sessionId":"s0","newMessage":{"role":"user","parts":[{"functionResponse":{"name":"t","response":` + deep + `}}]}}`},
	} {
		h.must(http.StatusOK)(h.do("POST", "/apps/chat/users/u/sessions/s0", map[string]any{"k": json.RawMessage(ok)}))
		st, body := h.do(tc.method, tc.path, tc.body, "Content-Type", "application/json")
		if st != http.StatusUnprocessableEntity || !strings.Contains(string(body), `"max_value_depth":100`) || !strings.Contains(string(body), "more than 100 levels") {
			t.Errorf("%s: %d %.300s", tc.name, st, body)
		}
		sess := decode[map[string]any](t, h.must(http.StatusOK)(h.do("GET", "/apps/chat/users/u/sessions/s0", nil)))
		if evs, _ := sess["events"].([]any); len(evs) != 0 {
			t.Errorf("%s: stored %d events", tc.name, len(evs))
		}
		h.must(http.StatusOK)(h.do("DELETE", "/apps/chat/users/u/sessions/s0", nil))
	}
}

// A run's customMetadata is copied into every event it stores: 1 MiB of it
// and a run of thousands of events stored gigabytes. It is bounded at
// 64 KiB of JSON; within the bound every event carries it.
func TestRunCustomMetadataBounded(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{limits: server.Limits{RequestBytes: 1 << 20}})
	h.must(http.StatusCreated)(h.putBundle("chat", appFiles("chat", "ok", false)))
	h.must(http.StatusOK)(h.do("POST", "/apps/chat/users/u/sessions/s", map[string]any{}))
	body := runBody("chat", "u", "s", "hi")
	body["customMetadata"] = map[string]any{"blob": strings.Repeat("x", 64<<10)}
	st, out := h.do("POST", "/run", body)
	if st != http.StatusRequestEntityTooLarge || !strings.Contains(string(out), "customMetadata is 65547 bytes of JSON, over the limit of 65536") {
		t.Errorf("%d %.300s", st, out)
	}
	body["customMetadata"] = map[string]any{"tag": "x"}
	evs := decode[[]map[string]any](t, h.must(http.StatusOK)(h.do("POST", "/run", body)))
	for _, ev := range evs {
		if md, _ := ev["customMetadata"].(map[string]any); md["tag"] != "x" {
			t.Errorf("event without the run's metadata: %v", ev)
		}
	}
}
