package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// --dev-ui mounts the UI directory (the real google-adk build is driven by
// make test-devui; a stand-in is enough for the flag's wiring).
func TestServeDevUIFlag(t *testing.T) {
	ui := t.TempDir()
	if err := os.WriteFile(filepath.Join(ui, "index.html"), []byte("<title>dev ui stand-in</title>"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startServer(t, t.TempDir(), "--admin-token", "tok", "--dev-ui", ui)
	if st, body := call(t, "GET", p.url+"/dev-ui/", nil, ""); st != http.StatusOK || !strings.Contains(string(body), "dev ui stand-in") {
		t.Errorf("GET /dev-ui/: %d %s", st, body)
	}
	if st, body := call(t, "GET", p.url+"/dev/apps/x/eval_sets", nil, ""); st != http.StatusOK || strings.TrimSpace(string(body)) != "[]" {
		t.Errorf("GET /dev/apps/x/eval_sets: %d %s", st, body)
	}
	p.stop(t)

	// Without the flag nothing is mounted.
	p = startServer(t, t.TempDir(), "--admin-token", "tok")
	if st, _ := call(t, "GET", p.url+"/dev-ui/", nil, ""); st != http.StatusNotFound {
		t.Errorf("GET /dev-ui/ without --dev-ui: %d, want 404", st)
	}
	p.stop(t)
}

func TestServeDevUIFlagChecksTheDirectory(t *testing.T) {
	cmd := exec.Command(binary, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--admin-token", "tok", "--dev-ui", t.TempDir())
	cmd.Env = append(os.Environ(), "ADKHOST_ADMIN_TOKEN=", "ADKHOST_RUN_TOKEN=")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--dev-ui") || !strings.Contains(string(out), "no index.html") {
		t.Fatalf("serve --dev-ui with an empty directory: err %v, output %s", err, out)
	}
}
