package postgres_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/internal/pgtest"
)

// adkPython returns the Python of conformance/.venv with google-adk 2.13,
// SQLAlchemy and asyncpg, or skips t (fails it under CI=true).
func adkPython(t *testing.T) string {
	t.Helper()
	py, err := filepath.Abs(filepath.Join("..", "..", "conformance", ".venv", "bin", "python"))
	if err == nil {
		err = exec.Command(py, "-c", "import google.adk, sqlalchemy, asyncpg").Run()
	}
	if err != nil {
		msg := "google-adk with SQLAlchemy and asyncpg not installed in conformance/.venv (make python-venv-postgres; CI's .ci/run runs it): " + err.Error()
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return py
}

// asyncpgURL turns a pgtest URL into SQLAlchemy's for asyncpg.
func asyncpgURL(url string) string {
	url, _, _ = strings.Cut(url, "?")
	return "postgresql+asyncpg://" + strings.TrimPrefix(url, "postgres://")
}

type pySession struct {
	State          map[string]any   `json:"state"`
	LastUpdateTime float64          `json:"last_update_time"`
	Events         []map[string]any `json:"events"`
}

// runPy runs testdata/adk_interop.py and decodes its last line.
func runPy(t *testing.T, py, url string, args ...string) pySession {
	t.Helper()
	cmd := exec.Command(py, append([]string{filepath.Join("testdata", "adk_interop.py"), asyncpgURL(url)}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("google-adk %v: %v\n%s", args, err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var s pySession
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &s); err != nil {
		t.Fatalf("google-adk %v printed %s: %v", args, out, err)
	}
	return s
}

func norm(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	json.Unmarshal(b, &out)
	return out
}

// TestGoogleADKInterop drives google-adk 2.13's DatabaseSessionService
// (the real one, from PyPI, on asyncpg) and adkhost's SessionService
// against one database: a session google-adk wrote continues in adkhost
// and back, with app:, user: and session state, function calls and bytes;
// and each side's stale copy is refused after the other appended.
func TestGoogleADKInterop(t *testing.T) {
	py := adkPython(t)
	url := pgtest.Database(t)
	db := openURL(t, url) // adkhost migrates first; google-adk takes the tables as they are
	svc := db.Sessions()
	ctx := t.Context()
	const app, user, sid = "weather", "u1", "py-session"

	// google-adk writes; adkhost reads.
	runPy(t, py, url, "write", app, user, sid)
	g, err := svc.Get(ctx, &session.GetRequest{AppName: app, UserID: user, SessionID: sid})
	if err != nil {
		t.Fatalf("adkhost reading google-adk's session: %v", err)
	}
	wantState := map[string]any{"k": "py", "turns": 2.0, "user:name": "Ada", "user:lastCity": "Paris", "app:greeting": "hi", "app:calls": 1.0}
	if got := norm(t, g.State()); !reflect.DeepEqual(got, wantState) {
		t.Errorf("state of google-adk's session in adkhost = %v, want %v", got, wantState)
	}
	evs := g.Events()
	if len(evs) != 3 {
		t.Fatalf("adkhost read %d events of google-adk's session, want 3", len(evs))
	}
	if e := evs[0]; e.Author != "user" || e.InvocationID != "inv-py-1" || e.Content.Parts[0].Text != "What is the weather?" ||
		e.Actions.StateDelta["turns"] != 1.0 || e.Actions.StateDelta["temp:scratch"] != nil || e.Timestamp.IsZero() {
		t.Errorf("first event = %+v", e)
	}
	call := evs[1].FunctionCalls()
	if len(call) != 1 || call[0].Name != "get_weather" || call[0].ID != "call-1" || call[0].Args["unitSystem"] != "metric" ||
		len(evs[1].LongRunningToolIDs) != 1 {
		t.Errorf("function call event = %+v", evs[1])
	}
	if blob := evs[1].Content.Parts[1].InlineData; blob == nil || blob.MIMEType != "image/png" || string(blob.Data) != "\xfb\xff\xfe" {
		t.Errorf("inline data from google-adk = %+v", blob)
	}
	if fr := evs[2].FunctionResponses(); len(fr) != 1 || fr[0].Response["tempC"] != 7.0 || evs[2].Actions.StateDelta["user:lastCity"] != "Paris" {
		t.Errorf("function response event = %+v", evs[2])
	}
	if !evs[0].Timestamp.Before(evs[2].Timestamp) || g.LastUpdateTime().Before(evs[2].Timestamp.Add(-time.Millisecond)) {
		t.Errorf("timestamps: events %v..%v, last update %v", evs[0].Timestamp, evs[2].Timestamp, g.LastUpdateTime())
	}

	// adkhost continues the session; google-adk reads it.
	e := &session.Event{
		Response: model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{
			{Text: "It is sunny in Paris."},
			{FunctionCall: &genai.FunctionCall{ID: "call-2", Name: "book", Args: map[string]any{"seatClass": "window"}}},
		}}, TurnComplete: true},
		ID: "go-1", InvocationID: "inv-go-1", Author: "weather_agent", Timestamp: time.Now(),
		Actions: session.EventActions{StateDelta: map[string]any{"goKey": 1, "user:lang": "go", "app:calls": 2, "temp:t": 1}},
	}
	if err := svc.AppendEvent(ctx, g, e); err != nil {
		t.Fatalf("adkhost appending to google-adk's session: %v", err)
	}
	p := runPy(t, py, url, "read", app, user, sid)
	wantPy := map[string]any{"k": "py", "turns": 2.0, "goKey": 1.0, "user:name": "Ada", "user:lastCity": "Paris", "user:lang": "go", "app:greeting": "hi", "app:calls": 2.0}
	if got := norm(t, p.State); !reflect.DeepEqual(got, wantPy) {
		t.Errorf("state in google-adk after adkhost's append = %v, want %v", got, wantPy)
	}
	if len(p.Events) != 4 {
		t.Fatalf("google-adk read %d events, want 4", len(p.Events))
	}
	last := p.Events[3]
	if last["id"] != "go-1" || last["invocationId"] != "inv-go-1" || last["author"] != "weather_agent" || last["turnComplete"] != true {
		t.Errorf("adkhost's event in google-adk = %v", last)
	}
	parts := last["content"].(map[string]any)["parts"].([]any)
	fc := parts[1].(map[string]any)["functionCall"].(map[string]any)
	if parts[0].(map[string]any)["text"] != "It is sunny in Paris." || fc["name"] != "book" || fc["args"].(map[string]any)["seatClass"] != "window" {
		t.Errorf("adkhost's event content in google-adk = %v", parts)
	}
	if d := last["actions"].(map[string]any)["stateDelta"].(map[string]any); d["goKey"] != 1.0 || d["temp:t"] != nil {
		t.Errorf("adkhost's state delta in google-adk = %v", d)
	}
	if got, want := p.LastUpdateTime, session.TimeToFloat(e.Timestamp); got < want-1e-6 || got > want+1e-6 {
		t.Errorf("google-adk's last_update_time = %f, adkhost's event at %f", got, want)
	}

	// google-adk appends after adkhost read: adkhost's copy is stale.
	stale, err := svc.Get(ctx, &session.GetRequest{AppName: app, UserID: user, SessionID: sid})
	if err != nil {
		t.Fatal(err)
	}
	runPy(t, py, url, "append", app, user, sid, "after-go")
	err = svc.AppendEvent(ctx, stale, &session.Event{ID: "go-stale", InvocationID: "inv-go-2", Author: "weather_agent", Timestamp: time.Now()})
	if !errors.Is(err, session.ErrStale) {
		t.Errorf("adkhost appending through a copy google-adk appended past: %v, want ErrStale", err)
	}

	// adkhost appends after google-adk read: google-adk's copy is stale.
	cmd := exec.Command(py, filepath.Join("testdata", "adk_interop.py"), asyncpgURL(url), "stale", app, user, sid)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || !strings.Contains(lines.Text(), `"loaded": true`) {
		t.Fatalf("google-adk did not load the session: %q\n%s", lines.Text(), stderr.String())
	}
	fresh, err := svc.Get(ctx, &session.GetRequest{AppName: app, UserID: user, SessionID: sid})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := fresh.StateValue("py_after"); v != "after-go" {
		t.Errorf("google-adk's append not seen by adkhost: py_after = %v", v)
	}
	if err := svc.AppendEvent(ctx, fresh, &session.Event{ID: "go-2", InvocationID: "inv-go-3", Author: "weather_agent", Timestamp: time.Now()}); err != nil {
		t.Fatalf("adkhost append through a fresh copy: %v", err)
	}
	stdin.Write([]byte("go\n"))
	if !lines.Scan() {
		t.Fatalf("google-adk printed nothing after its append: %s", stderr.String())
	}
	var res struct {
		Stale bool   `json:"stale"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(lines.Bytes(), &res); err != nil || !res.Stale {
		t.Errorf("google-adk appending through a copy adkhost appended past: %s (%v), want StaleSessionError", lines.Text(), err)
	}
	cmd.Wait()

	// Both sides agree on the history.
	p = runPy(t, py, url, "read", app, user, sid)
	var ids []string
	for _, e := range p.Events {
		ids = append(ids, e["id"].(string))
	}
	final, err := svc.Get(ctx, &session.GetRequest{AppName: app, UserID: user, SessionID: sid})
	if err != nil {
		t.Fatal(err)
	}
	var goIDs []string
	for _, e := range final.Events() {
		goIDs = append(goIDs, e.ID)
	}
	if len(ids) != 6 || !reflect.DeepEqual(ids, goIDs) || ids[3] != "go-1" || ids[5] != "go-2" {
		t.Errorf("history: google-adk %q, adkhost %q", ids, goIDs)
	}
}

// TestGoogleADKCreatesTables: on a database google-adk set up (its tables,
// its schema_version row), Open adds only adkhost's own tables and reads
// google-adk's session.
func TestGoogleADKCreatesTables(t *testing.T) {
	py := adkPython(t)
	url := pgtest.Database(t)
	runPy(t, py, url, "write", "app", "u", "s")
	db := openURL(t, url)
	g, err := db.Sessions().Get(t.Context(), &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s", NumRecentEvents: 2})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(g.Events()); n != 2 || g.Events()[1].FunctionResponses() == nil {
		t.Errorf("the 2 newest events of google-adk's session: %d, %+v", n, g.Events())
	}
	if v, _ := g.StateValue("user:lastCity"); v != "Paris" {
		t.Errorf("user:lastCity = %v", v)
	}
}
