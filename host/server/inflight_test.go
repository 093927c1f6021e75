package server

import (
	"bytes"
	"context"
	"encoding/json"
	"iter"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/host/appdef"
	"github.com/adkhost/adkhost/sandbox"
	"github.com/adkhost/adkhost/store/bolt"
)

// gateModel answers "<reply>" once gate is closed (or at once if gate is
// nil), signalling started when called.
type gateModel struct {
	reply   string
	gate    chan struct{}
	started chan struct{}
}

func (m *gateModel) Name() string { return "gate" }

func (m *gateModel) GenerateContent(ctx context.Context, _ *model.Request, _ bool) iter.Seq2[*model.Response, error] {
	return func(yield func(*model.Response, error) bool) {
		if m.gate != nil {
			m.started <- struct{}{}
			select {
			case <-m.gate:
			case <-ctx.Done():
				yield(nil, ctx.Err())
				return
			}
		}
		yield(&model.Response{Content: genai.NewContentFromText(m.reply, genai.RoleModel)}, nil)
	}
}

// TestReplacedVersionFinishesInFlightRuns replaces an app while a run of
// the old version waits in its model: new runs get the new version at
// once, the old run finishes on the old one, which closes only then.
func TestReplacedVersionFinishesInFlightRuns(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := bolt.Open(filepath.Join(dir, "adkhost.db"), bolt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rt, err := sandbox.New(ctx, sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	gate, started := make(chan struct{}), make(chan struct{}, 1)
	load := func(_ context.Context, src appdef.Source, _ appdef.Env) (*appdef.App, error) {
		text := string(src.Files[defaultRoot])
		m := &gateModel{reply: strings.TrimSpace(text)}
		if strings.Contains(text, "slow") {
			m.gate, m.started = gate, started
		}
		a, err := engine.NewLlmAgent(engine.LlmAgentConfig{Name: "agent", Model: m})
		if err != nil {
			return nil, err
		}
		return &appdef.App{Name: src.Name, Root: a}, nil
	}
	s, err := New(ctx, Config{DB: db, Runtime: rt, AdminToken: "t", Load: load})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()

	put := func(body string) {
		req, _ := http.NewRequest("PUT", ts.URL+"/admin/v1/apps/chat", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer t")
		req.Header.Set("Content-Type", "text/yaml")
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			t.Fatalf("PUT: %d", resp.StatusCode)
		}
	}
	run := func(sess string) (string, error) {
		js, _ := json.Marshal(map[string]any{"appName": "chat", "userId": "u", "sessionId": sess,
			"newMessage": map[string]any{"parts": []any{map[string]any{"text": "hi"}}}})
		resp, err := ts.Client().Post(ts.URL+"/run", "application/json", bytes.NewReader(js))
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		var evs []struct {
			Content genai.Content `json:"content"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&evs); err != nil || len(evs) == 0 {
			return "", err
		}
		return evs[len(evs)-1].Content.Parts[0].Text, nil
	}
	put("v1 slow")
	// Two sessions: runs of one session at the same time would be stale
	// writers of each other.
	for _, id := range []string{"s1", "s2"} {
		if _, err := db.Sessions().Create(ctx, &session.CreateRequest{AppName: "chat", UserID: "u", SessionID: id}); err != nil {
			t.Fatal(err)
		}
	}
	old := s.apps.get("chat")
	type result struct {
		text string
		err  error
	}
	done := make(chan result, 1)
	go func() { text, err := run("s1"); done <- result{text, err} }()
	<-started // the v1 run is in its model call

	put("v2")
	if text, err := run("s2"); err != nil || text != "v2" {
		t.Fatalf("new run: %q %v", text, err)
	}
	if old.closed.Load() {
		t.Fatal("the old version closed with a run in flight")
	}
	close(gate)
	select {
	case r := <-done:
		if r.err != nil || r.text != "v1 slow" {
			t.Fatalf("in-flight run: %q %v", r.text, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("in-flight run did not finish")
	}
	// The handler releases the version just after writing the answer.
	for deadline := time.Now().Add(5 * time.Second); !old.closed.Load(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the old version was not closed after its last run")
		}
	}
	if cur := s.apps.get("chat"); cur.closed.Load() || cur.version != 2 {
		t.Fatalf("current version %d closed=%v", cur.version, cur.closed.Load())
	}
}

// TestServeDrainsRunsOnShutdown cancels Serve's context while a run waits
// in its model: Serve stops accepting, lets the run answer, then retires
// the apps.
func TestServeDrainsRunsOnShutdown(t *testing.T) {
	ctx := context.Background()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "adkhost.db"), bolt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rt, err := sandbox.New(ctx, sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	gate, started := make(chan struct{}), make(chan struct{}, 1)
	load := func(_ context.Context, src appdef.Source, _ appdef.Env) (*appdef.App, error) {
		a, err := engine.NewLlmAgent(engine.LlmAgentConfig{Name: "agent", Model: &gateModel{reply: "drained", gate: gate, started: started}})
		if err != nil {
			return nil, err
		}
		return &appdef.App{Name: src.Name, Root: a}, nil
	}
	s, err := New(ctx, Config{DB: db, Runtime: rt, AdminToken: "t", Load: load})
	if err != nil {
		t.Fatal(err)
	}
	la, err := s.load(ctx, "chat", 1, time.Now(), definition{Root: defaultRoot, Files: map[string][]byte{defaultRoot: []byte("x")}})
	if err != nil {
		t.Fatal(err)
	}
	s.apps.swap(la)
	if _, err := db.Sessions().Create(ctx, &session.CreateRequest{AppName: "chat", UserID: "u", SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- s.Serve(sctx, ln, 10*time.Second) }()

	type result struct {
		status int
		body   string
		err    error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := http.Post("http://"+ln.Addr().String()+"/run", "application/json",
			strings.NewReader(`{"appName":"chat","userId":"u","sessionId":"s","newMessage":{"parts":[{"text":"hi"}]}}`))
		if err != nil {
			done <- result{err: err}
			return
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		done <- result{status: resp.StatusCode, body: b.String()}
	}()
	<-started
	cancel()
	// Shutdown has begun once the listener refuses connections.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the listener still accepts after shutdown began")
		}
	}
	if la.closed.Load() {
		t.Fatal("the app closed with a run in flight")
	}
	close(gate)
	r := <-done
	if r.err != nil || r.status != http.StatusOK || !strings.Contains(r.body, "drained") {
		t.Fatalf("in-flight run: %d %q %v", r.status, r.body, r.err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if !la.closed.Load() {
		t.Fatal("the app was not closed after the drain")
	}
}
