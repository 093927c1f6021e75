package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/session"
)

// sse posts to /run_sse and returns the decoded data frames.
func (h *harness) sse(body map[string]any) (int, []map[string]any) {
	h.t.Helper()
	js, _ := json.Marshal(body)
	resp, err := h.ts.Client().Post(h.ts.URL+"/run_sse", "application/json", bytes.NewReader(js))
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		h.t.Fatalf("content type %q", ct)
	}
	var frames []map[string]any
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			h.t.Fatalf("not an SSE data line: %q", line)
		}
		frames = append(frames, decode[map[string]any](h.t, []byte(data)))
	}
	return resp.StatusCode, frames
}

func TestSessionsCRUD(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	h.setupApp("chat", "v1", false)
	base := "/apps/chat/users/u1/sessions"
	s := decode[map[string]any](t, h.must(http.StatusOK)(h.do("POST", base, map[string]any{"sessionId": "s1", "state": map[string]any{"k": "v"}})))
	if s["id"] != "s1" || s["appName"] != "chat" || s["userId"] != "u1" || s["state"].(map[string]any)["k"] != "v" {
		t.Fatalf("created: %v", s)
	}
	if _, ok := s["events"].([]any); !ok {
		t.Fatalf("events missing: %v", s)
	}
	h.must(http.StatusConflict)(h.do("POST", base, map[string]any{"session_id": "s1"}))
	// No body: a generated id.
	gen := decode[map[string]any](t, h.must(http.StatusOK)(h.do("POST", base, nil)))
	if gen["id"] == "" || gen["id"] == nil {
		t.Fatalf("generated id: %v", gen)
	}
	// The deprecated form: id in the path, state as the body.
	h.must(http.StatusOK)(h.do("POST", base+"/s2", map[string]any{"a": 1}))
	h.must(http.StatusNotFound)(h.do("POST", "/apps/nope/users/u1/sessions", nil))

	list := decode[[]map[string]any](t, h.must(http.StatusOK)(h.do("GET", base, nil)))
	if len(list) != 3 {
		t.Fatalf("list: %v", list)
	}
	patched := decode[map[string]any](t, h.must(http.StatusOK)(h.do("PATCH", base+"/s1", map[string]any{"stateDelta": map[string]any{"k": "w", "n": 2}})))
	if st := patched["state"].(map[string]any); st["k"] != "w" || st["n"] != float64(2) {
		t.Fatalf("patched: %v", patched)
	}
	got := decode[map[string]any](t, h.must(http.StatusOK)(h.do("GET", base+"/s1", nil)))
	evs := got["events"].([]any)
	if len(evs) != 1 || !strings.HasPrefix(evs[0].(map[string]any)["invocationId"].(string), "p-") {
		t.Fatalf("patch event: %v", got)
	}
	h.must(http.StatusUnprocessableEntity)(h.do("PATCH", base+"/s1", map[string]any{}))
	h.must(http.StatusNotFound)(h.do("PATCH", base+"/ghost", map[string]any{"stateDelta": map[string]any{}}))
	h.must(http.StatusOK)(h.do("DELETE", base+"/s1", nil))
	h.must(http.StatusNotFound)(h.do("GET", base+"/s1", nil))
}

func TestRunAndRunSSE(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	h.setupApp("wx", "v1", true)
	h.must(http.StatusOK)(h.do("POST", "/apps/wx/users/u/sessions", map[string]any{"sessionId": "s"}))

	events := decode[[]map[string]any](t, h.must(http.StatusOK)(h.do("POST", "/run", runBody("wx", "u", "s", "Paris"))))
	// The call, the Wasm tool's response, the answer.
	if len(events) != 3 {
		t.Fatalf("%d events: %v", len(events), events)
	}
	if got := lastText(t, events); got != "v1: weather in Paris" {
		t.Fatalf("answer %q", got)
	}
	if events[1]["actions"].(map[string]any)["stateDelta"].(map[string]any)["user:last_city"] != "Paris" {
		t.Fatalf("tool's state write missing: %v", events[1])
	}

	st, frames := h.sse(map[string]any{"app_name": "wx", "user_id": "u", "session_id": "s",
		"new_message": map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Rome"}}}})
	if st != http.StatusOK || len(frames) != 3 || !strings.Contains(lastText(t, frames), "Rome") {
		t.Fatalf("run_sse: %d %v", st, frames)
	}
	// streaming: true yields partial events as well, never stored.
	body := runBody("wx", "u", "s", "Oslo")
	body["streaming"] = true
	_, frames = h.sse(body)
	partials := 0
	for _, f := range frames {
		if f["partial"] == true {
			partials++
		}
	}
	if partials == 0 || len(frames) != 3+partials {
		t.Fatalf("streaming frames: %v", frames)
	}
	sess := decode[map[string]any](t, h.must(http.StatusOK)(h.do("GET", "/apps/wx/users/u/sessions/s", nil)))
	if n := len(sess["events"].([]any)); n != 12 {
		t.Fatalf("stored %d events, want 12 (3 turns of user, call, response, answer)", n)
	}
}

func TestRunErrors(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	h.setupApp("chat", "v1", false)
	h.must(http.StatusOK)(h.do("POST", "/apps/chat/users/u/sessions", map[string]any{"sessionId": "s"}))

	h.must(http.StatusNotFound)(h.do("POST", "/run", runBody("nope", "u", "s", "hi")))
	runBodyText := string(h.must(http.StatusNotFound)(h.do("POST", "/run", runBody("chat", "u", "ghost", "hi"))))
	js, _ := json.Marshal(runBody("chat", "u", "ghost", "hi"))
	resp, err := h.ts.Client().Post(h.ts.URL+"/run_sse", "application/json", bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	sseBody, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("run_sse unknown session: %d", resp.StatusCode)
	}
	// One answer for one mistake, whichever route.
	getBody := string(h.must(http.StatusNotFound)(h.do("GET", "/apps/chat/users/u/sessions/ghost", nil)))
	if !strings.Contains(runBodyText, `Session not found: \"ghost\"`) || strings.TrimSpace(string(sseBody)) != strings.TrimSpace(runBodyText) || getBody != runBodyText {
		t.Errorf("unknown session answers differ:\n/run     %s\n/run_sse %s\nGET      %s", runBodyText, sseBody, getBody)
	}
	if st, _ := h.sse(runBody("nope", "u", "s", "hi")); st != http.StatusNotFound {
		t.Fatalf("run_sse unknown app: %d", st)
	}
	h.must(http.StatusBadRequest)(h.do("POST", "/run", map[string]any{"userId": "u", "sessionId": "s"}))
	h.must(http.StatusUnprocessableEntity)(h.do("POST", "/run", "{not json"))
	h.must(http.StatusUnprocessableEntity)(h.do("POST", "/run", map[string]any{"appName": "chat", "userId": "u", "sessionId": "s"}))

	// A model failure: 500 on /run, an error frame on /run_sse after the
	// events already sent.
	b := h.must(http.StatusInternalServerError)(h.do("POST", "/run", runBody("chat", "u", "s", "fail")))
	if e := decode[map[string]any](t, b); !strings.Contains(e["error"].(string), "asked to fail") {
		t.Fatalf("500 body: %s", b)
	}
	st, frames := h.sse(runBody("chat", "u", "s", "fail"))
	if st != http.StatusOK || len(frames) == 0 {
		t.Fatalf("run_sse: %d %v", st, frames)
	}
	last := frames[len(frames)-1]
	if msg, _ := last["error"].(string); !strings.Contains(msg, "asked to fail") || last["error_details"] == nil {
		t.Fatalf("error frame: %v", last)
	}
}

func TestReplaceAppMidConversation(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	h.setupApp("chat", "v1", true)
	h.must(http.StatusOK)(h.do("POST", "/apps/chat/users/u/sessions", map[string]any{"sessionId": "s"}))
	ev := decode[[]map[string]any](t, h.must(http.StatusOK)(h.do("POST", "/run", runBody("chat", "u", "s", "Paris"))))
	if !strings.HasPrefix(lastText(t, ev), "v1: ") {
		t.Fatal(lastText(t, ev))
	}
	h.must(http.StatusOK)(h.putBundle("chat", appFiles("chat", "v2", true)))
	ev = decode[[]map[string]any](t, h.must(http.StatusOK)(h.do("POST", "/run", runBody("chat", "u", "s", "Rome"))))
	if !strings.HasPrefix(lastText(t, ev), "v2: ") {
		t.Fatalf("after replace: %q", lastText(t, ev))
	}
	sess := decode[map[string]any](t, h.must(http.StatusOK)(h.do("GET", "/apps/chat/users/u/sessions/s", nil)))
	if n := len(sess["events"].([]any)); n != 8 {
		t.Fatalf("%d events after two turns across versions", n)
	}
}

func TestRestartKeepsAppsAndSessions(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, dir, harnessOpts{})
	h.setupApp("chat", "v1", true)
	h.must(http.StatusOK)(h.do("POST", "/apps/chat/users/u/sessions", map[string]any{"sessionId": "s", "state": map[string]any{"x": 1}}))
	h.must(http.StatusOK)(h.do("POST", "/run", runBody("chat", "u", "s", "Paris")))
	before := h.must(http.StatusOK)(h.do("GET", "/apps/chat/users/u/sessions/s", nil))
	h.close()

	h2 := newHarness(t, dir, harnessOpts{})
	after := h2.must(http.StatusOK)(h2.do("GET", "/apps/chat/users/u/sessions/s", nil))
	if !bytes.Equal(before, after) {
		t.Fatalf("session changed across restart:\n%s\n%s", before, after)
	}
	ev := decode[[]map[string]any](t, h2.must(http.StatusOK)(h2.do("POST", "/run", runBody("chat", "u", "s", "Rome"))))
	if !strings.HasPrefix(lastText(t, ev), "v1: ") {
		t.Fatalf("after restart: %q", lastText(t, ev))
	}
	if mods := decode[[]any](t, h2.must(http.StatusOK)(h2.admin("GET", "/modules", nil))); len(mods) != 1 {
		t.Fatalf("modules after restart: %v", mods)
	}
}

func TestArtifactRoutes(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	ctx := context.Background()
	k := artifact.Key{AppName: "a", UserID: "u", SessionID: "s", Name: "dir/report.txt"}
	for _, text := range []string{"one", "two"} {
		if _, err := h.db.Artifacts().Save(ctx, k, genai.NewPartFromText(text)); err != nil {
			t.Fatal(err)
		}
	}
	base := "/apps/a/users/u/sessions/s/artifacts"
	if names := decode[[]string](t, h.must(http.StatusOK)(h.do("GET", base, nil))); len(names) != 1 || names[0] != "dir/report.txt" {
		t.Fatalf("names: %v", names)
	}
	if vs := decode[[]int](t, h.must(http.StatusOK)(h.do("GET", base+"/dir/report.txt/versions", nil))); len(vs) != 2 {
		t.Fatalf("versions: %v", vs)
	}
	for path, want := range map[string]string{
		"/dir/report.txt": "two", "/dir/report.txt?version=0": "one",
		"/dir/report.txt/versions/0": "one", "/dir/report.txt/versions/latest": "two",
	} {
		p := decode[map[string]any](t, h.must(http.StatusOK)(h.do("GET", base+path, nil)))
		if p["text"] != want {
			t.Errorf("%s: %v, want %s", path, p, want)
		}
	}
	h.must(http.StatusNotFound)(h.do("GET", base+"/dir/report.txt/versions/7", nil))
	h.must(http.StatusUnprocessableEntity)(h.do("GET", base+"/dir/report.txt/versions/x", nil))
	h.must(http.StatusOK)(h.do("DELETE", base+"/dir/report.txt", nil))
	h.must(http.StatusNotFound)(h.do("GET", base+"/dir/report.txt", nil))
}

func TestHealthAndVersion(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	if b := h.must(http.StatusOK)(h.do("GET", "/health", nil)); !strings.Contains(string(b), `"ok"`) {
		t.Fatal(string(b))
	}
	v := decode[map[string]string](t, h.must(http.StatusOK)(h.do("GET", "/version", nil)))
	if v["version"] != "test" || v["language"] != "go" {
		t.Fatalf("version: %v", v)
	}
	b := h.must(http.StatusNotFound)(h.do("GET", "/no/such/route", nil))
	if e := decode[map[string]any](t, b); e["error"] == nil {
		t.Fatalf("404 body: %s", b)
	}
}

// An app whose definition says `adkhost: {resumable: true}` runs on a
// resumable runner: its invocations write checkpoints, and /run resumes
// one by invocationId without a new message (an LlmAgent root then runs
// again in that invocation, as in google-adk; conformance scenario
// resumable_llm_root_resume_ended). Without it, resuming is refused.
func TestResumableAppFromDefinition(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	files := appFiles("re", "v1", false)
	files["root_agent.yaml"] += "adkhost:\n  resumable: true\n"
	h.must(http.StatusCreated)(h.putBundle("re", files))
	h.setupApp("plain", "v1", false)
	for _, app := range []string{"re", "plain"} {
		h.must(http.StatusOK)(h.do("POST", "/apps/"+app+"/users/u/sessions", map[string]any{"sessionId": "s"}))
	}

	events := decode[[]map[string]any](t, h.must(http.StatusOK)(h.do("POST", "/run", runBody("re", "u", "s", "hello"))))
	if got := lastText(t, events); got != "v1: hello" {
		t.Fatalf("answer %q in %v", got, events)
	}
	ended := false
	for _, ev := range events {
		if a, _ := ev["actions"].(map[string]any); a["endOfAgent"] == true {
			ended = true
		}
	}
	if !ended {
		t.Errorf("a resumable run wrote no end_of_agent checkpoint: %v", events)
	}
	inv := events[0]["invocationId"].(string)
	resume := map[string]any{"appName": "re", "userId": "u", "sessionId": "s", "invocationId": inv}
	again := decode[[]map[string]any](t, h.must(http.StatusOK)(h.do("POST", "/run", resume)))
	if len(again) == 0 || again[0]["invocationId"] != inv {
		t.Errorf("resuming invocation %s yielded %v, want its agent's events", inv, again)
	}

	// google-adk 2.13 runs a root LlmAgent's invocation again by id in an
	// app that is not resumable too (its node runtime does not look at
	// resumability): no end_of_agent checkpoint, the same invocation.
	events = decode[[]map[string]any](t, h.must(http.StatusOK)(h.do("POST", "/run", runBody("plain", "u", "s", "hello"))))
	resume["appName"], resume["invocationId"] = "plain", events[0]["invocationId"]
	again = decode[[]map[string]any](t, h.must(http.StatusOK)(h.do("POST", "/run", resume)))
	if len(again) == 0 || again[0]["invocationId"] != resume["invocationId"] {
		t.Errorf("running invocation %s again in an app that is not resumable yielded %v, want its agent's events", resume["invocationId"], again)
	}
}

// PATCH .../memory adds a session to the memory service, which the
// load_memory built-in of another session's agent then searches.
func TestMemoryRoute(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	files := map[string]string{
		"root_agent.yaml": "name: mem_agent\nmodel: scripted\ninstruction: Answer.\ntools:\n  - name: load_memory\n",
		"scripted_model.yaml": "rules:\n" +
			"  - when: {function_response: load_memory}\n    respond: {text: recalled}\n" +
			"  - when: {user_contains: recall}\n    respond: {function_calls: [{name: load_memory, args: {query: '{{text}}'}}]}\n" +
			"  - respond: {text: 'noted: {{text}}'}\n",
	}
	h.must(http.StatusCreated)(h.putBundle("mem", files))
	for _, s := range []string{"s1", "s2"} {
		h.must(http.StatusOK)(h.do("POST", "/apps/mem/users/u/sessions", map[string]any{"sessionId": s}))
	}
	h.must(http.StatusOK)(h.do("POST", "/run", runBody("mem", "u", "s1", "my favourite colour is teal")))

	if st, b := h.do("PATCH", "/apps/mem/users/u/memory", map[string]any{}); st != http.StatusBadRequest || !strings.Contains(string(b), "Update memory request is invalid.") {
		t.Errorf("no session id: %d %s", st, b)
	}
	if st, b := h.do("PATCH", "/apps/mem/users/u/memory", map[string]any{"sessionId": "nope"}); st != http.StatusNotFound {
		t.Errorf("unknown session: %d %s", st, b)
	}
	h.must(http.StatusOK)(h.do("PATCH", "/apps/mem/users/u/memory", map[string]any{"session_id": "s1"}))

	events := decode[[]map[string]any](t, h.must(http.StatusOK)(h.do("POST", "/run", runBody("mem", "u", "s2", "recall my favourite colour"))))
	if len(events) != 3 || lastText(t, events) != "recalled" {
		t.Fatalf("events %v", events)
	}
	resp, _ := json.Marshal(events[1]["content"])
	if !strings.Contains(string(resp), "my favourite colour is teal") || !strings.Contains(string(resp), `"author":"user"`) {
		t.Errorf("load_memory's response lacks the remembered message: %s", resp)
	}
}

// TestAppWithoutModelBackend: registering an app whose model has no backend
// here succeeds with a warning, and a run ends with google-adk's kind of
// error event (ValueError) naming the missing backend.
func TestAppWithoutModelBackend(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	body := decode[map[string]any](t, h.must(http.StatusCreated)(h.putApp("gem", "name: gem\nmodel: gemini-2.5-flash\ninstruction: x\n")))
	if w, _ := body["warnings"].([]any); len(w) != 1 || !strings.Contains(w[0].(string), "has no backend on this server") {
		t.Fatalf("register answer: %v", body)
	}
	h.must(http.StatusOK)(h.do("POST", "/apps/gem/users/u/sessions/s", map[string]any{}))
	// As google-adk's api_server, a run that raises answers 500 with the
	// reason; the error event is stored.
	msg := string(h.must(http.StatusInternalServerError)(h.do("POST", "/run", runBody("gem", "u", "s", "hi"))))
	if !strings.Contains(msg, `model \"gemini-2.5-flash\" is not available on this server`) {
		t.Errorf("run answer: %s", msg)
	}
	sess := decode[map[string]any](t, h.must(http.StatusOK)(h.do("GET", "/apps/gem/users/u/sessions/s", nil)))
	evs, _ := sess["events"].([]any)
	last, _ := evs[len(evs)-1].(map[string]any)
	if last["errorCode"] != "ValueError" {
		t.Errorf("last event: %v", last)
	}
}

// TestCreateSessionKeepsStateKeyOrder: a dict in the initial state keeps
// the order its keys were sent in (google-adk prints it in instruction
// templates in that order), through both create routes and the store.
func TestCreateSessionKeepsStateKeyOrder(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	h.setupApp("chat", "v1", false)
	h.must(http.StatusOK)(h.do("POST", "/apps/chat/users/u1/sessions",
		`{"sessionId": "s1", "state": {"cart": {"zucchini": 2, "apple": 1}, "plain": {"a": 1, "b": 2}}}`, "Content-Type", "application/json"))
	h.must(http.StatusOK)(h.do("POST", "/apps/chat/users/u1/sessions/s2",
		`{"cart": {"zucchini": 2, "apple": 1}}`, "Content-Type", "application/json"))
	for _, id := range []string{"s1", "s2"} {
		s, err := h.db.Sessions().Get(t.Context(), &session.GetRequest{AppName: "chat", UserID: "u1", SessionID: id})
		if err != nil {
			t.Fatal(err)
		}
		if got := string(s.StateKeyOrder("cart")); got != `{"zucchini":0,"apple":0}` {
			t.Errorf("%s: key order of cart = %s", id, got)
		}
		if got := s.StateKeyOrder("plain"); got != nil {
			t.Errorf("%s: key order of a sorted dict = %s, want none", id, got)
		}
	}
}

// TestRunRefusedMessage checks that a new message the Runner refuses (a
// function response answering no call) is the client's error, 400 with
// google-adk's reason, not a server failure.
func TestRunRefusedMessage(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	h.setupApp("plain", "v1", false)
	h.must(http.StatusOK)(h.do("POST", "/apps/plain/users/u/sessions", map[string]any{"sessionId": "s"}))
	body := map[string]any{"appName": "plain", "userId": "u", "sessionId": "s", "newMessage": map[string]any{"role": "user",
		"parts": []any{map[string]any{"functionResponse": map[string]any{"id": "nope", "name": "f", "response": map[string]any{}}}}}}
	st, b := h.do("POST", "/run", body)
	if st != http.StatusBadRequest || !strings.Contains(string(b), "new message refused") {
		t.Errorf("a function response answering no call: %d %s, want 400", st, b)
	}
}
