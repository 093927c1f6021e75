package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/internal/pgtest"
)

// TestServePostgresReplicas runs two `adkhost serve --store postgres://…`
// on one database, each with its own data directory (compile cache,
// token): an app registered through one serves on the other, and a
// conversation alternating between them keeps one history and state.
func TestServePostgresReplicas(t *testing.T) {
	url := pgtest.Database(t)
	dir := t.TempDir()
	a := startServer(t, filepath.Join(dir, "a"), "--store", url, "--admin-token", "tok")
	appDir := filepath.Join(dir, "chat")
	os.MkdirAll(appDir, 0o755)
	os.WriteFile(filepath.Join(appDir, "root_agent.yaml"), []byte("name: chat\nmodel: scripted\ninstruction: Echo.\n"), 0o644)
	os.WriteFile(filepath.Join(appDir, "scripted_model.yaml"), []byte("rules:\n  - respond: {text: 'echo: {{text}}'}\n"), 0o644)
	if out, errOut, err := cli(t, "app", "register", appDir, "--name", "chat", "--server", a.url, "--token", "tok"); err != nil {
		t.Fatalf("register: %v %s %s", err, out, errOut)
	}
	// ADKHOST_STORE works as --store does.
	t.Setenv("ADKHOST_STORE", url)
	b := startServer(t, filepath.Join(dir, "b"), "--admin-token", "tok")
	if st, body := call(t, "POST", a.url+"/apps/chat/users/u/sessions/s1", map[string]any{"state": map[string]any{"user:name": "Ada"}}, ""); st != 200 {
		t.Fatalf("create session on a: %d %s", st, body)
	}
	for i, srv := range []*proc{a, b, a, b} {
		text := []string{"one", "two", "three", "four"}[i]
		st, body := call(t, "POST", srv.url+"/run", runMsg("chat", "s1", text), "")
		if st != 200 || answer(t, body) != "echo: "+text {
			t.Fatalf("turn %d on %s: %d %s", i, srv.url, st, body)
		}
	}
	st, body := call(t, "GET", b.url+"/apps/chat/users/u/sessions/s1", nil, "")
	if st != 200 || strings.Count(string(body), `"author":"user"`) != 4 || !strings.Contains(string(body), `"user:name":"Ada"`) {
		t.Fatalf("session on b after four turns on a and b: %d %s", st, body)
	}
	a.stop(t)
	b.stop(t)
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
