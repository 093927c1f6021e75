package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/internal/pgtest"
	"github.com/adkhost/adkhost/internal/wasmbuild"
	"github.com/adkhost/adkhost/store/postgres"
)

// TestServePostgresReplicas runs two `adkhost serve --store postgres://…`
// on one database, each with its own data directory (compile cache,
// token): an app registered through one serves on the other, and a
// conversation alternating between them keeps one history and state.
func TestServePostgresReplicas(t *testing.T) {
	url := pgtest.Database(t)
	dir := t.TempDir()
	a := startServer(t, filepath.Join(dir, "a"), "--store", url, "--admin-token", "tok")
	// ADKHOST_STORE works as --store does.
	t.Setenv("ADKHOST_STORE", url)
	b := startServer(t, filepath.Join(dir, "b"), "--admin-token", "tok")
	// A Wasm tool uploaded through b, an app using it registered through
	// a while b is up: b learns of it.
	root, err := wasmbuild.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := wasmbuild.Build(wasmbuild.SDKExample(root, "weather", "adkhost-cmd-guests"))
	if err != nil {
		t.Fatal(err)
	}
	wasmFile := filepath.Join(dir, "weather.wasm")
	os.WriteFile(wasmFile, wasm, 0o644)
	if out, errOut, err := cli(t, "module", "upload", wasmFile, "--name", "weather", "--server", b.url, "--token", "tok"); err != nil {
		t.Fatalf("upload on b: %v %s %s", err, out, errOut)
	}
	appDir := writeApp(t, filepath.Join(dir, "wx"), "v1")
	if out, errOut, err := cli(t, "app", "register", appDir, "--name", "wx", "--server", a.url, "--token", "tok"); err != nil {
		t.Fatalf("register on a: %v %s %s", err, out, errOut)
	}
	waitApp(t, b, "wx", true)
	if st, body := call(t, "POST", a.url+"/apps/wx/users/u/sessions/s1", map[string]any{"state": map[string]any{"user:name": "Ada"}}, ""); st != 200 {
		t.Fatalf("create session on a: %d %s", st, body)
	}
	// A round-robin client: each turn on the other replica, the model
	// calling the Wasm tool every turn.
	cities := []string{"Paris", "Rome", "Oslo", "Lima"}
	for i, city := range cities {
		srv := []*proc{a, b}[i%2]
		st, body := call(t, "POST", srv.url+"/run", runMsg("wx", "s1", city), "")
		if st != 200 || answer(t, body) != "v1: weather in "+city {
			t.Fatalf("turn %d on %s: %d %s", i, srv.url, st, body)
		}
	}
	st, body := call(t, "GET", b.url+"/apps/wx/users/u/sessions/s1", nil, "")
	if st != 200 || strings.Count(string(body), `"functionCall"`) != len(cities) || strings.Count(string(body), `"author":"user"`) != len(cities) ||
		!strings.Contains(string(body), `"user:name":"Ada"`) {
		t.Fatalf("session on b after %d turns on a and b: %d %s", len(cities), st, body)
	}
	// Deleted through b: a stops serving it.
	if st, body := call(t, "DELETE", b.url+"/admin/v1/apps/wx", nil, "tok"); st != 204 {
		t.Fatalf("delete on b: %d %s", st, body)
	}
	waitApp(t, a, "wx", false)
	a.stop(t)
	b.stop(t)
}

// waitApp waits up to a second for srv to list app (or not).
func waitApp(t *testing.T, srv *proc, app string, want bool) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		_, body := call(t, "GET", srv.url+"/list-apps", nil, "")
		var names []string
		json.Unmarshal(body, &names)
		if slices.Contains(names, app) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s lists %s after a second; want listed: %v", srv.url, body, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServePostgresUnreachable: a database that is not there fails serve
// after its retries, with the URL (password redacted) and what to check.
func TestServePostgresUnreachable(t *testing.T) {
	_, errOut, err := cli(t, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(),
		"--store", "postgres://adk:secret@127.0.0.1:1/adk", "--store-connect-timeout", "1s")
	if err == nil || !strings.Contains(errOut, "cannot reach the database at postgres://adk:xxxxx@127.0.0.1:1/adk") ||
		strings.Contains(errOut, "secret") || !strings.Contains(errOut, "retrying") {
		t.Errorf("serve with an unreachable database: %v\n%s", err, errOut)
	}
}

// TestServePostgresConcurrentRuns: runs on one session posted at the same
// time to two replicas never lose a write: each answers 200 with its
// events, all stored, or 409 with the stale-session error.
func TestServePostgresConcurrentRuns(t *testing.T) {
	url := pgtest.Database(t)
	dir := t.TempDir()
	a := startServer(t, filepath.Join(dir, "a"), "--store", url, "--admin-token", "tok")
	b := startServer(t, filepath.Join(dir, "b"), "--store", url, "--admin-token", "tok")
	appDir := filepath.Join(dir, "chat")
	os.MkdirAll(appDir, 0o755)
	os.WriteFile(filepath.Join(appDir, "root_agent.yaml"), []byte("name: chat\nmodel: scripted\ninstruction: Echo.\n"), 0o644)
	os.WriteFile(filepath.Join(appDir, "scripted_model.yaml"), []byte("rules:\n  - respond: {text: 'echo: {{text}}'}\n"), 0o644)
	if out, errOut, err := cli(t, "app", "register", appDir, "--name", "chat", "--server", a.url, "--token", "tok"); err != nil {
		t.Fatalf("register: %v %s %s", err, out, errOut)
	}
	waitApp(t, b, "chat", true)
	if st, body := call(t, "POST", a.url+"/apps/chat/users/u/sessions/s1", map[string]any{}, ""); st != 200 {
		t.Fatalf("create session: %d %s", st, body)
	}
	var okIDs []string
	conflicts := 0
	for round := range 10 {
		type res struct {
			st   int
			body []byte
		}
		out := make([]res, 2)
		var wg sync.WaitGroup
		for i, srv := range []*proc{a, b} {
			wg.Go(func() {
				st, body := call(t, "POST", srv.url+"/run", runMsg("chat", "s1", fmt.Sprintf("r%d-%d", round, i)), "")
				out[i] = res{st, body}
			})
		}
		wg.Wait()
		for _, r := range out {
			switch r.st {
			case 200:
				var evs []struct {
					ID string `json:"id"`
				}
				if err := json.Unmarshal(r.body, &evs); err != nil || len(evs) == 0 {
					t.Fatalf("200 with %s", r.body)
				}
				for _, e := range evs {
					okIDs = append(okIDs, e.ID)
				}
			case 409:
				conflicts++
				if !strings.Contains(string(r.body), "modified in storage") {
					t.Errorf("409 without the stale-session error: %s", r.body)
				}
			default:
				t.Fatalf("round %d: %d %s", round, r.st, r.body)
			}
		}
	}
	st, body := call(t, "GET", a.url+"/apps/chat/users/u/sessions/s1", nil, "")
	if st != 200 {
		t.Fatalf("get: %d %s", st, body)
	}
	for _, id := range okIDs {
		if !strings.Contains(string(body), `"id":"`+id+`"`) {
			t.Errorf("event %s of a run answered 200 is not in the session", id)
		}
	}
	t.Logf("%d runs answered 200, %d lost the race with 409", 20-conflicts, conflicts)
}

// TestServePostgresReplicaKilled: a replica killed with SIGKILL while it
// runs a turn leaves the session whole: the other replica reads it (every
// stored event decodes) and holds the next turns.
func TestServePostgresReplicaKilled(t *testing.T) {
	url := pgtest.Database(t)
	dir := t.TempDir()
	b := startServer(t, filepath.Join(dir, "b"), "--store", url, "--admin-token", "tok")
	appDir := filepath.Join(dir, "chat")
	os.MkdirAll(appDir, 0o755)
	os.WriteFile(filepath.Join(appDir, "root_agent.yaml"), []byte("name: chat\nmodel: scripted\ninstruction: Echo.\n"), 0o644)
	os.WriteFile(filepath.Join(appDir, "scripted_model.yaml"), []byte("rules:\n  - respond: {text: 'echo: {{text}}'}\n"), 0o644)
	if out, errOut, err := cli(t, "app", "register", appDir, "--name", "chat", "--server", b.url, "--token", "tok"); err != nil {
		t.Fatalf("register: %v %s %s", err, out, errOut)
	}
	if st, body := call(t, "POST", b.url+"/apps/chat/users/u/sessions/s1", map[string]any{}, ""); st != 200 {
		t.Fatalf("create session: %d %s", st, body)
	}
	for i, delay := range []time.Duration{0, 3 * time.Millisecond, 10 * time.Millisecond} {
		a := startServer(t, filepath.Join(dir, fmt.Sprintf("a%d", i)), "--store", url, "--admin-token", "tok")
		waitApp(t, a, "chat", true)
		done := make(chan struct{})
		go func() {
			defer close(done)
			body, _ := json.Marshal(runMsg("chat", "s1", fmt.Sprintf("killed-%d", i)))
			resp, err := http.Post(a.url+"/run", "application/json", bytes.NewReader(body))
			if err == nil {
				resp.Body.Close()
			}
		}()
		time.Sleep(delay)
		a.cmd.Process.Kill()
		<-a.done
		<-done
		text := fmt.Sprintf("after-%d", i)
		st, body := call(t, "POST", b.url+"/run", runMsg("chat", "s1", text), "")
		if st == 409 {
			// The killed replica's last statement may still commit on the
			// server after the process died, under b's turn: b's run is
			// then the stale one, and a retry (what a client does with
			// 409) goes through.
			st, body = call(t, "POST", b.url+"/run", runMsg("chat", "s1", text), "")
		}
		if st != 200 || answer(t, body) != "echo: "+text {
			t.Fatalf("turn on b after a was killed (%v): %d %s", delay, st, body)
		}
	}
	st, body := call(t, "GET", b.url+"/apps/chat/users/u/sessions/s1", nil, "")
	if st != 200 {
		t.Fatalf("get: %d %s", st, body)
	}
	for i := range 3 {
		if !strings.Contains(string(body), fmt.Sprintf("echo: after-%d", i)) {
			t.Errorf("answer after-%d missing from %s", i, body)
		}
	}
}

// TestServePostgresGoogleADKContinues: a conversation adkhost served on
// PostgreSQL continues in a google-adk 2.13 app (its Runner, LlmAgent and
// DatabaseSessionService, on a model of its own), and back in adkhost.
func TestServePostgresGoogleADKContinues(t *testing.T) {
	py, err := filepath.Abs(filepath.Join("..", "..", "conformance", ".venv", "bin", "python"))
	if err == nil {
		err = exec.Command(py, "-c", "import google.adk, sqlalchemy, asyncpg").Run()
	}
	if err != nil {
		msg := "google-adk with SQLAlchemy and asyncpg not installed in conformance/.venv (make python-venv-postgres): " + err.Error()
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	url := pgtest.Database(t)
	dir := t.TempDir()
	srv := startServer(t, filepath.Join(dir, "a"), "--store", url, "--admin-token", "tok")
	appDir := filepath.Join(dir, "chat")
	os.MkdirAll(appDir, 0o755)
	os.WriteFile(filepath.Join(appDir, "root_agent.yaml"), []byte("name: chat\nmodel: scripted\ninstruction: Echo.\n"), 0o644)
	os.WriteFile(filepath.Join(appDir, "scripted_model.yaml"), []byte("rules:\n  - respond: {text: 'echo: {{text}}'}\n"), 0o644)
	if out, errOut, err := cli(t, "app", "register", appDir, "--name", "chat", "--server", srv.url, "--token", "tok"); err != nil {
		t.Fatalf("register: %v %s %s", err, out, errOut)
	}
	if st, body := call(t, "POST", srv.url+"/apps/chat/users/u/sessions/s1", map[string]any{"state": map[string]any{"user:name": "Ada"}}, ""); st != 200 {
		t.Fatalf("create session: %d %s", st, body)
	}
	for _, text := range []string{"one", "two"} {
		if st, body := call(t, "POST", srv.url+"/run", runMsg("chat", "s1", text), ""); st != 200 || answer(t, body) != "echo: "+text {
			t.Fatalf("turn %s: %d %s", text, st, body)
		}
	}
	u, _, _ := strings.Cut(url, "?")
	cmd := exec.Command(py, filepath.Join("testdata", "adk_continue.py"), "postgresql+asyncpg://"+strings.TrimPrefix(u, "postgres://"), "chat", "u", "s1", "three")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("google-adk continuing the session: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var res struct {
		Answer string `json:"answer"`
		Events int    `json:"events"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &res); err != nil {
		t.Fatalf("google-adk printed %s: %v", out, err)
	}
	// Two turns of adkhost (user + answer each) and google-adk's user
	// message: five contents reach its model.
	if res.Answer != "python saw 5 contents, last: three" || res.Events != 6 {
		t.Fatalf("google-adk's turn: %+v", res)
	}
	st, body := call(t, "POST", srv.url+"/run", runMsg("chat", "s1", "four"), "")
	if st != 200 || answer(t, body) != "echo: four" {
		t.Fatalf("adkhost after google-adk's turn: %d %s", st, body)
	}
	st, body = call(t, "GET", srv.url+"/apps/chat/users/u/sessions/s1", nil, "")
	if st != 200 || !strings.Contains(string(body), "python saw 5 contents") || strings.Count(string(body), `"author":"user"`) != 4 {
		t.Fatalf("session after both: %d %s", st, body)
	}
}

// TestServePostgresRestartedUnderLoad: PostgreSQL killed and started again
// while clients run turns: turns in flight fail with an error, nothing a
// 200 acknowledged is lost, and serve goes on without a restart of its own.
func TestServePostgresRestartedUnderLoad(t *testing.T) {
	url := pgtest.Database(t)
	dir := t.TempDir()
	srv := startServer(t, filepath.Join(dir, "a"), "--store", url, "--admin-token", "tok")
	appDir := filepath.Join(dir, "chat")
	os.MkdirAll(appDir, 0o755)
	os.WriteFile(filepath.Join(appDir, "root_agent.yaml"), []byte("name: chat\nmodel: scripted\ninstruction: Echo.\n"), 0o644)
	os.WriteFile(filepath.Join(appDir, "scripted_model.yaml"), []byte("rules:\n  - respond: {text: 'echo: {{text}}'}\n"), 0o644)
	if out, errOut, err := cli(t, "app", "register", appDir, "--name", "chat", "--server", srv.url, "--token", "tok"); err != nil {
		t.Fatalf("register: %v %s %s", err, out, errOut)
	}
	const clients = 4
	var mu sync.Mutex
	acked := map[string][]string{} // session -> answers acknowledged
	failures := 0
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for c := range clients {
		sess := fmt.Sprintf("s%d", c)
		if st, body := call(t, "POST", srv.url+"/apps/chat/users/u/sessions/"+sess, map[string]any{}, ""); st != 200 {
			t.Fatalf("create session: %d %s", st, body)
		}
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				text := fmt.Sprintf("%s-%d", sess, n)
				body, _ := json.Marshal(runMsg("chat", sess, text))
				resp, err := http.Post(srv.url+"/run", "application/json", bytes.NewReader(body))
				ok := false
				if err == nil {
					ok = resp.StatusCode == 200
					resp.Body.Close()
				}
				mu.Lock()
				if ok {
					acked[sess] = append(acked[sess], "echo: "+text)
				} else {
					failures++
				}
				mu.Unlock()
				if !ok {
					time.Sleep(50 * time.Millisecond)
				}
			}
		})
	}
	time.Sleep(500 * time.Millisecond)
	if err := pgtest.Get(t).Restart(); err != nil {
		t.Fatal(err)
	}
	// Turns succeed again without touching serve.
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := len(acked["s0"])
		mu.Unlock()
		st, _ := call(t, "GET", srv.url+"/apps/chat/users/u/sessions/s0", nil, "")
		if st == 200 && n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("serve did not recover after PostgreSQL restarted")
		}
		time.Sleep(100 * time.Millisecond)
	}
	before := map[string]int{}
	mu.Lock()
	for s, a := range acked {
		before[s] = len(a)
	}
	mu.Unlock()
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	for c := range clients {
		sess := fmt.Sprintf("s%d", c)
		if len(acked[sess]) <= before[sess] {
			t.Errorf("%s: no turn acknowledged after the restart (%d before, %d in all)", sess, before[sess], len(acked[sess]))
		}
		st, body := call(t, "GET", srv.url+"/apps/chat/users/u/sessions/"+sess, nil, "")
		if st != 200 {
			t.Fatalf("get %s: %d %s", sess, st, body)
		}
		for _, a := range acked[sess] {
			if !strings.Contains(string(body), `"text":"`+a+`"`) {
				t.Errorf("%s: acknowledged answer %q is not stored", sess, a)
			}
		}
	}
	t.Logf("%d turns failed while PostgreSQL restarted", failures)
}

// TestRunCommandPostgresStore: `adkhost run --store postgres://…` keeps a
// local conversation in PostgreSQL: a second run with --session continues
// it, and the session is there for serve or google-adk to read.
func TestRunCommandPostgresStore(t *testing.T) {
	url := pgtest.Database(t)
	dir := filepath.Join(t.TempDir(), "chat")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "root_agent.yaml"), []byte("name: chat\nmodel: scripted\ninstruction: Echo.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "scripted_model.yaml"), []byte("rules:\n  - respond: {text: 'echo: {{text}}'}\n"), 0o644)
	for _, text := range []string{"one", "two"} {
		out, errOut, err := cli(t, "run", dir, "--store", url, "--session", "s1", "--user", "u", "-m", text, "--cache-dir", "")
		if err != nil || !strings.Contains(out, "[chat]: echo: "+text) {
			t.Fatalf("run -m %s: %v\n%s\n%s", text, err, out, errOut)
		}
	}
	db, err := postgres.Open(t.Context(), url, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := db.Sessions().Get(t.Context(), &session.GetRequest{AppName: "chat", UserID: "u", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, ev := range s.Events() {
		if ev.Content != nil && len(ev.Content.Parts) > 0 {
			texts = append(texts, ev.Author+": "+ev.Content.Parts[0].Text)
		}
	}
	if want := []string{"user: one", "chat: echo: one", "user: two", "chat: echo: two"}; !slices.Equal(texts, want) {
		t.Fatalf("session after two runs = %q, want %q", texts, want)
	}
	// A bad URL is an error that says which flag, not a hang.
	if _, errOut, err := cli(t, "run", dir, "--store", "postgres://nobody@127.0.0.1:1/none", "--store-connect-timeout", "1s", "-m", "x"); err == nil || !strings.Contains(errOut, "--store") {
		t.Fatalf("unreachable --store: %v %s", err, errOut)
	}
	if _, errOut, err := cli(t, "run", dir, "--store", "bolt", "-m", "x"); err == nil || !strings.Contains(errOut, "--data") {
		t.Fatalf("--store bolt without --data: %v %s", err, errOut)
	}
}
