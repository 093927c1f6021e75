package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adkhost/adkhost/host/server"
	"github.com/adkhost/adkhost/internal/wasmbuild"
)

// mcpPython is the python of build/mcp-venv (the `mcp` package pinned in
// testdata/mcp-requirements.txt: `make mcp-venv`, which .ci/run calls).
// Without it the test skips, or fails under CI=true.
func mcpPython(t *testing.T, root string) string {
	t.Helper()
	py := filepath.Join(root, "build", "mcp-venv", "bin", "python")
	if err := exec.Command(py, "-c", "import mcp, httpx2").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and no mcp package in build/mcp-venv (make mcp-venv installs it): %v", err)
		}
		t.Skipf("no mcp package in build/mcp-venv (make mcp-venv installs it): %v (skipping; CI=true makes this a failure)", err)
	}
	return py
}

// startMCPServe starts `adkhost serve` with the counter guest
// (host/server/testdata/counter) registered as app "tools", and returns it
// with the MCP token serve generated into DIR/mcp-token.
func startMCPServe(t *testing.T, root string) (*proc, string) {
	t.Helper()
	wasm, err := wasmbuild.Build(wasmbuild.Spec{Dir: root, Package: "./host/server/testdata/counter",
		Sources: []string{"host/server/testdata/counter", "sdk/go/adkhost", "abi"}, Cache: "adkhost-cmd-guests"})
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	srv := startServer(t, data)
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(data, name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	admin, mcpToken := read("admin-token"), read(MCPTokenFileName)
	if fi, err := os.Stat(filepath.Join(data, MCPTokenFileName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mcp-token file: %v, mode %v; want 0600", err, fi.Mode())
	}
	req, _ := http.NewRequest("PUT", srv.url+"/admin/v1/modules/counter", bytes.NewReader(wasm))
	req.Header.Set("Authorization", "Bearer "+admin)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("module upload: %v %v", err, resp)
	}
	var bundle bytes.Buffer
	mw := multipart.NewWriter(&bundle)
	for name, content := range map[string]string{
		"root_agent.yaml": "name: tools_agent\nmodel: scripted\ninstruction: Use the tools.\ntools:\n  - module: counter\n" +
			"adkhost:\n  modules:\n    counter:\n      grants: {state: true, artifacts: true}\n      limits: {timeout: 300ms}\n",
		"scripted_model.yaml": "rules:\n  - respond: {text: unused}\n",
	} {
		w, _ := mw.CreateFormFile(name, name)
		io.WriteString(w, content)
	}
	mw.Close()
	req, _ = http.NewRequest("PUT", srv.url+"/admin/v1/apps/tools", &bundle)
	req.Header.Set("Authorization", "Bearer "+admin)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("app registration: %v %v", err, resp)
	}
	return srv, mcpToken
}

// TestServeMCPPythonClient calls a Wasm tool through a real `adkhost
// serve` with the Python `mcp` package's client (testdata/mcp_client.py),
// with the MCP token serve generates into DIR/mcp-token.
func TestServeMCPPythonClient(t *testing.T) {
	root, err := wasmbuild.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	py := mcpPython(t, root)
	srv, mcpToken := startMCPServe(t, root)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, filepath.Join("testdata", "mcp_client.py"), srv.url+"/mcp/tools", mcpToken)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcp_client.py: %v\n%s\nstdout: %s\nserver:\n%s", err, stderr.String(), out, srv.stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var got struct {
		Tools       []string `json:"tools"`
		Totals      []int    `json:"totals"`
		Fail        string   `json:"fail"`
		Spin        string   `json:"spin"`
		ClientTotal int      `json:"client_total"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("summary %q: %v", lines[len(lines)-1], err)
	}
	if strings.Join(got.Tools, ",") != "add,fail,note,spin" || len(got.Totals) != 2 || got.Totals[0] != 2 || got.Totals[1] != 5 || got.ClientTotal != 10 {
		t.Errorf("summary = %+v", got)
	}
	if !strings.Contains(got.Spin, "timed out") {
		t.Errorf("spin's error %q does not say the time limit stopped it", got.Spin)
	}

	// The two MCP sessions are two adkhost sessions of the app, in the
	// store, under the token's user.
	st, b := call(t, "GET", srv.url+"/apps/tools/users/"+server.MCPUserID(mcpToken)+"/sessions", nil, "")
	var sessions []struct {
		State map[string]any `json:"state"`
	}
	if st != http.StatusOK || json.Unmarshal(b, &sessions) != nil {
		t.Fatalf("sessions: %d %s", st, b)
	}
	var counts []string
	for _, s := range sessions {
		c, _ := json.Marshal(s.State["count"])
		counts = append(counts, string(c))
	}
	if len(sessions) != 2 || !(counts[0] == "5" && counts[1] == "10" || counts[0] == "10" && counts[1] == "5") {
		t.Errorf("the store has sessions with counts %v, want 5 and 10", counts)
	}
	srv.stop(t)
}

// TestServeMCPInspectorCLI lists and calls the Wasm tools of a real
// `adkhost serve` with the official MCP Inspector's CLI mode (`make
// mcp-inspector`: build/mcp-inspector, npm, run by .ci/run). Each
// invocation is an MCP session of its own.
func TestServeMCPInspectorCLI(t *testing.T) {
	root, err := wasmbuild.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "build", "mcp-inspector", "node_modules", ".bin", "mcp-inspector")
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and no MCP Inspector in build/mcp-inspector (make mcp-inspector installs it): %v", err)
		}
		t.Skipf("no MCP Inspector in build/mcp-inspector (make mcp-inspector installs it): %v (skipping; CI=true makes this a failure)", err)
	}
	srv, mcpToken := startMCPServe(t, root)
	inspect := func(withToken bool, args ...string) (string, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		full := []string{"--cli", srv.url + "/mcp/tools", "--transport", "http"}
		if withToken {
			full = append(full, "--header", "Authorization: Bearer "+mcpToken)
		}
		cmd := exec.CommandContext(ctx, bin, append(full, args...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := inspect(true, "--method", "tools/list")
	if err != nil || !strings.Contains(out, `"name": "add"`) || !strings.Contains(out, `"name": "spin"`) {
		t.Errorf("tools/list: %v\n%s", err, out)
	}
	out, err = inspect(true, "--method", "tools/call", "--tool-name", "add", "--tool-arg", "n=4")
	if err != nil || !strings.Contains(out, `"total": 4`) {
		t.Errorf("tools/call add: %v\n%s", err, out)
	}
	// A tool's error is an isError result, which the CLI prints and
	// reports with exit status 5.
	out, err = inspect(true, "--method", "tools/call", "--tool-name", "fail", "--tool-arg", "message=boom")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 5 || !strings.Contains(out, `"isError": true`) || !strings.Contains(out, "failed as asked: boom") {
		t.Errorf("tools/call fail: %v\n%s", err, out)
	}
	// Without the token the server's 401 makes the CLI look for OAuth,
	// which it cannot do without a terminal.
	if out, err = inspect(false, "--method", "tools/list"); err == nil || !strings.Contains(out, "auth") {
		t.Errorf("without the token: %v\n%s", err, out)
	}
	srv.stop(t)
}
