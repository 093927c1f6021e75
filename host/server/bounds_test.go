package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/host/appdef"
	"github.com/adkhost/adkhost/sandbox"
	"github.com/adkhost/adkhost/store/bolt"
)

// gatedServer serves app "chat", whose model answers "ok" once gate is
// closed (at once if gate is nil), with limits.
func gatedServer(t *testing.T, limits Limits, gate, started chan struct{}) (*Server, *httptest.Server, *bolt.DB) {
	t.Helper()
	ctx := context.Background()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "adkhost.db"), bolt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	rt, err := sandbox.New(ctx, sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	load := func(_ context.Context, src appdef.Source, _ appdef.Env) (*appdef.App, error) {
		a, err := engine.NewLlmAgent(engine.LlmAgentConfig{Name: "agent", Model: &gateModel{reply: "ok", gate: gate, started: started}})
		if err != nil {
			return nil, err
		}
		return &appdef.App{Name: src.Name, Root: a}, nil
	}
	s, err := New(ctx, Config{DB: db, Runtime: rt, AdminToken: "t", Load: load, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	la, err := s.load(ctx, "chat", 1, time.Now(), definition{Root: defaultRoot, Files: map[string][]byte{defaultRoot: []byte("x")}})
	if err != nil {
		t.Fatal(err)
	}
	s.apps.swap(la)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return s, ts, db
}

func chatRunBody(session string) string {
	return `{"appName":"chat","userId":"u","sessionId":"` + session + `","newMessage":{"parts":[{"text":"hi"}]}}`
}

// metric reads one unlabelled sample from /metrics.
func metric(t *testing.T, ts *httptest.Server, name string) string {
	t.Helper()
	resp, err := ts.Client().Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("/metrics has no %s", name)
	}
	return string(m[1])
}

// spyBody records whether anything read it.
type spyBody struct {
	r    io.Reader
	read bool
}

func (b *spyBody) Read(p []byte) (int, error) { b.read = true; return b.r.Read(p) }
func (b *spyBody) Close() error               { return nil }

// With Limits.MaxRuns runs in flight (an SSE stream and a /run, both
// waiting in their model), a third run is refused with 503, Retry-After
// and the limit to raise, before anything reads its body; the slots come
// back when the runs end, and /metrics shows the count.
func TestMaxRunsRefusesEarly(t *testing.T) {
	gate, started := make(chan struct{}), make(chan struct{}, 8)
	s, ts, db := gatedServer(t, Limits{MaxRuns: 2}, gate, started)
	// Runs still waiting when the test fails must end, or closing the
	// server would wait for them forever.
	var openGate sync.Once
	release := func() { openGate.Do(func() { close(gate) }) }
	t.Cleanup(release)
	ctx := context.Background()
	for _, id := range []string{"s1", "s2", "s3"} {
		if _, err := db.Sessions().Create(ctx, &session.CreateRequest{AppName: "chat", UserID: "u", SessionID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if got := metric(t, ts, "adkhost_runs_max"); got != "2" {
		t.Fatalf("adkhost_runs_max %s, want 2", got)
	}
	done := make(chan string, 2)
	sse, err := ts.Client().Post(ts.URL+"/run_sse", "application/json", strings.NewReader(chatRunBody("s1")))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer sse.Body.Close()
		b, _ := io.ReadAll(bufio.NewReader(sse.Body))
		done <- "sse " + string(b)
	}()
	go func() {
		resp, err := ts.Client().Post(ts.URL+"/run", "application/json", strings.NewReader(chatRunBody("s2")))
		if err != nil {
			done <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		done <- "run " + string(b)
	}()
	<-started
	<-started // both runs wait in their model
	if got := metric(t, ts, "adkhost_runs_in_flight"); got != "2" {
		t.Fatalf("adkhost_runs_in_flight %s, want 2", got)
	}

	// The third, straight into the handler, so the test sees whether its
	// body is read; its context ends, should it start a run anyway.
	rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	body := &spyBody{r: strings.NewReader(chatRunBody("s3"))}
	req := httptest.NewRequestWithContext(rctx, "POST", "/run", body)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("third run: status %d, want 503: %s", rec.Code, rec.Body)
	}
	if body.read {
		t.Error("the refused run's body was read")
	}
	if ra := rec.Header().Get("Retry-After"); ra != "1" {
		t.Errorf("Retry-After %q, want 1", ra)
	}
	var e map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
		t.Fatal(err)
	}
	msg, _ := e["error"].(string)
	if e["limit"] != "max_runs" || e["max_runs"] != float64(2) || !strings.Contains(msg, "--max-runs") || !strings.Contains(msg, "Limits.MaxRuns") || e["detail"] != msg {
		t.Errorf("refusal body %s: want limit max_runs, max_runs 2 and the flag and field named", rec.Body)
	}
	if got := metric(t, ts, "adkhost_runs_refused_total"); got != "1" {
		t.Errorf("adkhost_runs_refused_total %s, want 1", got)
	}
	// The refusal over a real connection, SSE too.
	hreq, _ := http.NewRequestWithContext(rctx, "POST", ts.URL+"/run_sse", strings.NewReader(chatRunBody("s3")))
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := ts.Client().Do(hreq)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("third run over HTTP: %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}

	release()
	for range 2 {
		select {
		case r := <-done:
			if !strings.Contains(r, `"text":"ok"`) {
				t.Fatalf("run in flight: %s", r)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("runs in flight did not finish")
		}
	}
	// A slot is given back when its handler returns, just after the answer.
	for deadline := time.Now().Add(5 * time.Second); metric(t, ts, "adkhost_runs_in_flight") != "0"; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("slots not given back after the runs ended")
		}
	}
	resp, err = ts.Client().Post(ts.URL+"/run", "application/json", strings.NewReader(chatRunBody("s3")))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("run after the others ended: %d", resp.StatusCode)
	}
}

// The state bound (Limits.StateBytes) refuses, with 413 and the scope,
// size and bound, each write that would take a scope past it: PATCH,
// session creation, a run's state delta, over /run and /run_sse; the
// refused write stores nothing.
func TestStateBytesBound(t *testing.T) {
	_, ts, _ := gatedServer(t, Limits{StateBytes: 1000}, nil, nil)
	big := strings.Repeat("x", 600)
	do := func(method, path, body string) (int, map[string]any, string) {
		t.Helper()
		req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return resp.StatusCode, m, string(b)
	}
	refused := func(status int, m map[string]any, raw, scope string) {
		t.Helper()
		msg, _ := m["error"].(string)
		if status != http.StatusRequestEntityTooLarge || m["limit"] != "max_state_bytes" || m["scope"] != scope ||
			m["max_state_bytes"] != float64(1000) || !strings.Contains(msg, "--max-state-bytes") || !strings.Contains(msg, "over its bound of 1000 bytes") {
			t.Fatalf("got %d %s, want 413 refusing the %s scope", status, raw, scope)
		}
	}
	base := "/apps/chat/users/u/sessions"
	if st, _, raw := do("POST", base, `{"sessionId":"s"}`); st != http.StatusOK {
		t.Fatalf("create: %d %s", st, raw)
	}
	if st, _, raw := do("PATCH", base+"/s", `{"stateDelta":{"app:k1":"`+big+`"}}`); st != http.StatusOK {
		t.Fatalf("PATCH within the bound: %d %s", st, raw)
	}
	st, m, raw := do("PATCH", base+"/s", `{"stateDelta":{"app:k2":"`+big+`"}}`)
	refused(st, m, raw, "app")
	if want := float64(len(`{"k1":"` + big + `","k2":"` + big + `"}`)); m["size"] != want {
		t.Errorf("size %v, want %v", m["size"], want)
	}
	// Another user's new session may not add to the app's state either,
	// and is not created.
	st, m, raw = do("POST", "/apps/chat/users/v/sessions", `{"sessionId":"s","state":{"app:k2":"`+big+`"}}`)
	refused(st, m, raw, "app")
	if st, _, _ := do("GET", "/apps/chat/users/v/sessions/s", ""); st != http.StatusNotFound {
		t.Errorf("the refused session exists: GET %d", st)
	}
	st, m, raw = do("POST", "/apps/chat/users/v/sessions/s2", `{"big":"`+big+big+`"}`)
	refused(st, m, raw, "session")

	// Runs: the request's state delta.
	run := `{"appName":"chat","userId":"u","sessionId":"s","newMessage":{"parts":[{"text":"hi"}]},"stateDelta":{"user:a":"` + big + `","user:b":"` + big + `"}}`
	st, m, raw = do("POST", "/run", run)
	refused(st, m, raw, "user")
	st, _, raw = do("POST", "/run_sse", run)
	if st != http.StatusOK || !strings.Contains(raw, `"error"`) || !strings.Contains(raw, "--max-state-bytes") || !strings.Contains(raw, "user state") {
		t.Errorf("run_sse: %d %s, want an error frame naming the bound", st, raw)
	}
	st, m, raw = do("GET", base+"/s", "")
	if st != http.StatusOK {
		t.Fatalf("GET: %d %s", st, raw)
	}
	state, _ := m["state"].(map[string]any)
	if _, ok := state["app:k2"]; ok || state["app:k1"] != big {
		t.Errorf("state after the refusals: %v", state)
	}
	if _, ok := state["user:a"]; ok {
		t.Error("a refused run's state delta was stored")
	}
	// Within the bound, runs write state as before.
	if st, _, raw := do("POST", "/run", `{"appName":"chat","userId":"u","sessionId":"s","newMessage":{"parts":[{"text":"hi"}]},"stateDelta":{"user:a":"small"}}`); st != http.StatusOK {
		t.Fatalf("run within the bound: %d %s", st, raw)
	}
}
