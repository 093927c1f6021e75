package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/adkhost/adkhost/internal/pgtest"
	"github.com/adkhost/adkhost/internal/wasmbuild"
	"github.com/adkhost/adkhost/store/bolt"
)

// binary is the adkhost binary TestMain builds.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "adkhost-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "adkhost")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building adkhost:", err)
		os.Exit(1)
	}
	code := m.Run()
	pgtest.Shutdown()
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a running `adkhost serve`.
type proc struct {
	cmd    *exec.Cmd
	url    string
	stderr *syncBuffer
	done   chan error
}

// syncBuffer is the server's stderr, written by the reading goroutine
// while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) WriteString(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.WriteString(s)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startServer runs `adkhost serve` on a free loopback port with data in dir.
func startServer(t *testing.T, dir string, extra ...string) *proc {
	t.Helper()
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dir}, extra...)
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "ADKHOST_ADMIN_TOKEN=", "ADKHOST_RUN_TOKEN=", "ADKHOST_MCP_TOKEN=")
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stderr: &syncBuffer{}, done: make(chan error, 1)}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			p.stderr.WriteString(line + "\n")
			if a, ok := strings.CutPrefix(line, "adkhost serving on "); ok {
				addr <- a
			}
		}
	}()
	go func() { err := cmd.Wait(); pw.Close(); p.done <- err }()
	select {
	case a := <-addr:
		p.url = "http://" + a
	case err := <-p.done:
		t.Fatalf("server exited: %v\n%s", err, p.stderr)
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("server did not start:\n%s", p.stderr)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// stop sends SIGTERM and wants a clean exit.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("server exit: %v\n%s", err, p.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("server did not stop on SIGTERM:\n%s", p.stderr)
	}
}

// cli runs the binary and returns its stdout, stderr and error.
func cli(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "ADKHOST_ADMIN_TOKEN=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

func call(t *testing.T, method, url string, body any, token string) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		js, _ := json.Marshal(body)
		r = bytes.NewReader(js)
	}
	req, _ := http.NewRequest(method, url, r)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func runMsg(app, sess, text string) map[string]any {
	return map[string]any{"appName": app, "userId": "u", "sessionId": sess,
		"newMessage": map[string]any{"role": "user", "parts": []any{map[string]any{"text": text}}}}
}

func answer(t *testing.T, body []byte) string {
	t.Helper()
	var evs []struct {
		Content struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"content"`
	}
	if err := json.Unmarshal(body, &evs); err != nil || len(evs) == 0 {
		t.Fatalf("events %s: %v", body, err)
	}
	last := evs[len(evs)-1].Content.Parts
	if len(last) == 0 {
		t.Fatalf("no text in %s", body)
	}
	return last[0].Text
}

func TestServeEndToEnd(t *testing.T) {
	dir := t.TempDir()
	wasm := filepath.Join(dir, "weather.wasm")
	root, err := wasmbuild.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := wasmbuild.Build(wasmbuild.SDKExample(root, "weather", "adkhost-cmd-guests"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(wasm, b, 0o644)
	data := filepath.Join(dir, "data")
	srv := startServer(t, data, "--max-request-bytes", "4096")

	// The generated token: announced, private.
	tokenFile := filepath.Join(data, "admin-token")
	st, err := os.Stat(tokenFile)
	if err != nil || st.Mode().Perm() != 0o600 || !strings.Contains(srv.stderr.String(), tokenFile) {
		t.Fatalf("token file %v %v; stderr:\n%s", st, err, srv.stderr)
	}
	token, _ := os.ReadFile(tokenFile)
	tok := strings.TrimSpace(string(token))
	admin := []string{"--server", srv.url, "--token-file", tokenFile}

	out, errOut, err := cli(t, append([]string{"module", "upload", wasm, "--name", "weather"}, admin...)...)
	if err != nil || !strings.Contains(out, "uploaded weather sha256:") {
		t.Fatalf("upload: %v %s %s", err, out, errOut)
	}
	garbage := filepath.Join(dir, "bad.wasm")
	os.WriteFile(garbage, []byte("\x00asm\x01\x00\x00\x00"), 0o644)
	if _, errOut, err = cli(t, append([]string{"module", "upload", garbage}, admin...)...); err == nil || !strings.Contains(errOut, "module refused") {
		t.Fatalf("bad module accepted: %v %s", err, errOut)
	}
	if _, errOut, err = cli(t, "module", "list", "--server", srv.url, "--token", "wrong"); err == nil || !strings.Contains(errOut, "401") {
		t.Fatalf("wrong token: %v %s", err, errOut)
	}

	appDir := writeApp(t, filepath.Join(dir, "wx"), "v1")
	if out, errOut, err = cli(t, append([]string{"app", "register", appDir, "--name", "wx"}, admin...)...); err != nil || !strings.Contains(out, "registered wx version 1") {
		t.Fatalf("register: %v %s %s", err, out, errOut)
	}
	badFile := filepath.Join(dir, "bad.yaml")
	os.WriteFile(badFile, []byte("name: x\nmodel: scripted\ninstructions: typo\n"), 0o644)
	if _, errOut, err = cli(t, append([]string{"app", "register", badFile, "--name", "bad"}, admin...)...); err == nil || !strings.Contains(errOut, "root_agent.yaml:3:") {
		t.Fatalf("malformed YAML: %v %s", err, errOut)
	}
	out, _, err = cli(t, append([]string{"app", "list", "--json"}, admin...)...)
	var apps []map[string]any
	if err != nil || json.Unmarshal([]byte(out), &apps) != nil || len(apps) != 1 || apps[0]["status"] != "serving" {
		t.Fatalf("app list: %v %s", err, out)
	}

	// google-adk's run API.
	sessURL := srv.url + "/apps/wx/users/u/sessions"
	if st, b := call(t, "POST", sessURL, map[string]any{"sessionId": "s1"}, ""); st != 200 {
		t.Fatalf("create session: %d %s", st, b)
	}
	if st, _ := call(t, "POST", sessURL, map[string]any{"sessionId": "s1"}, ""); st != 409 {
		t.Fatalf("duplicate session: %d", st)
	}
	st1, body := call(t, "POST", srv.url+"/run", runMsg("wx", "s1", "Paris"), "")
	if st1 != 200 || !strings.HasPrefix(answer(t, body), "v1: ") {
		t.Fatalf("run: %d %s", st1, body)
	}
	resp, err := http.Post(srv.url+"/run_sse", "application/json", strings.NewReader(`{"appName":"wx","userId":"u","sessionId":"s1","newMessage":{"parts":[{"text":"Rome"}]},"streaming":true}`))
	if err != nil {
		t.Fatal(err)
	}
	sse, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(string(sse), "data: {") || !strings.Contains(string(sse), `"partial":true`) {
		t.Fatalf("run_sse: %d %s", resp.StatusCode, sse)
	}
	for _, c := range []struct {
		body any
		want int
	}{
		{runMsg("nope", "s1", "x"), 404}, {runMsg("wx", "ghost", "x"), 404},
		{runMsg("wx", "s1", strings.Repeat("x", 5000)), 413},
	} {
		if st, b := call(t, "POST", srv.url+"/run", c.body, ""); st != c.want || !strings.Contains(string(b), `"error"`) {
			t.Fatalf("want %d, got %d %s", c.want, st, b)
		}
	}
	if st, _ := call(t, "GET", srv.url+"/admin/v1/apps", nil, "nope"); st != 401 {
		t.Fatalf("admin with a wrong token: %d", st)
	}
	if st, b := call(t, "GET", srv.url+"/metrics", nil, ""); st != 200 || !strings.Contains(string(b), `adkhost_invocations_total{app="wx",outcome="ok"} 2`) {
		t.Fatalf("metrics: %d %s", st, b)
	}

	// Remember s1: the memory service is the store file's (checked below).
	if st, b := call(t, "PATCH", srv.url+"/apps/wx/users/u/memory", map[string]any{"sessionId": "s1"}, ""); st != 200 {
		t.Fatalf("add session to memory: %d %s", st, b)
	}

	// Restart: apps, modules and the session with its events survive.
	_, before := call(t, "GET", sessURL+"/s1", nil, "")
	srv.stop(t)
	srv = startServer(t, data)
	sessURL = srv.url + "/apps/wx/users/u/sessions"
	if _, after := call(t, "GET", sessURL+"/s1", nil, ""); !bytes.Equal(before, after) {
		t.Fatalf("session changed across restart:\n%s\n%s", before, after)
	}
	if strings.Contains(srv.stderr.String(), "generated") {
		t.Fatalf("token regenerated on restart:\n%s", srv.stderr)
	}
	if st, b := call(t, "GET", srv.url+"/admin/v1/modules", nil, tok); st != 200 || !strings.Contains(string(b), `"weather"`) {
		t.Fatalf("modules after restart: %d %s", st, b)
	}

	// Replace the app mid-conversation: the next turn answers with v2, in
	// the same session.
	writeApp(t, appDir, "v2")
	admin[1] = srv.url
	if out, errOut, err = cli(t, append([]string{"app", "register", appDir, "--name", "wx"}, admin...)...); err != nil || !strings.Contains(out, "version 2") {
		t.Fatalf("replace: %v %s %s", err, out, errOut)
	}
	if st, body := call(t, "POST", srv.url+"/run", runMsg("wx", "s1", "Oslo"), ""); st != 200 || !strings.HasPrefix(answer(t, body), "v2: ") {
		t.Fatalf("run after replace: %d %s", st, body)
	}
	if _, errOut, err = cli(t, append([]string{"module", "delete", "weather"}, admin...)...); err == nil || !strings.Contains(errOut, "409") {
		t.Fatalf("deleting a module in use: %v %s", err, errOut)
	}
	srv.stop(t)

	// The memories the first server took are in the file.
	db, err := bolt.Open(filepath.Join(data, "adkhost.db"), bolt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mem, err := db.Memory().Search(t.Context(), "wx", "u", "paris")
	if err != nil || len(mem.Memories) == 0 {
		t.Fatalf("memories of s1 after restarts: %v, %v", mem, err)
	}
}

// writeApp writes an app directory: agent wx_agent on the reactive
// scripted model calling the weather module's get_weather with the user's
// text, then answering "<reply>: weather in <city>".
func writeApp(t *testing.T, dir, reply string) string {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	root := "name: wx_agent\nmodel: scripted\ninstruction: Answer about the weather.\ntools:\n  - module: weather\n" +
		"adkhost:\n  modules:\n    weather:\n      grants: {state: true}\n      write_user_state: true\n"
	script := "rules:\n  - when: {function_response: get_weather}\n    respond: {text: '" + reply + ": weather in {{response.city}}'}\n" +
		"  - respond: {function_calls: [{name: get_weather, args: {city: '{{text}}'}}]}\n"
	if err := os.WriteFile(filepath.Join(dir, "root_agent.yaml"), []byte(root), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scripted_model.yaml"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRunCommandOneShot(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hello")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "root_agent.yaml"), []byte("name: hello_agent\nmodel: scripted\ninstruction: Greet.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "scripted_model.yaml"), []byte("rules:\n  - respond: {text: 'hi: {{text}}'}\n"), 0o644)
	out, errOut, err := cli(t, "run", dir, "-m", "there", "--cache-dir", "")
	if err != nil || !strings.Contains(out, "[hello_agent]: hi: there") {
		t.Fatalf("run -m: %v\n%s\n%s", err, out, errOut)
	}
	cmd := exec.Command(binary, "run", dir, "--cache-dir", "")
	cmd.Stdin = strings.NewReader("one\ntwo\n")
	b, err := cmd.Output()
	if err != nil || !strings.Contains(string(b), "hi: one") || !strings.Contains(string(b), "hi: two") {
		t.Fatalf("interactive run: %v\n%s", err, b)
	}
}

// `adkhost run` bounded values' depth but not the size of state, nor any
// run by serve's flags: on a store serve shares, a run could write state
// serve then refused to load or extend, and a run produced without bound.
func TestRunCommandBounds(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "echo")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "root_agent.yaml"), []byte("name: echo_agent\nmodel: scripted\ninstruction: Echo.\noutput_key: last\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "scripted_model.yaml"), []byte("rules:\n  - respond: {text: 'hi: {{text}}'}\n"), 0o644)
	long := strings.Repeat("x", 4000)
	for _, store := range []string{"memory", "bolt"} {
		args := []string{"run", dir, "-m", long, "--cache-dir", "", "--max-state-bytes", "1000"}
		if store == "bolt" {
			args = append(args, "--data", t.TempDir())
		}
		out, errOut, err := cli(t, args...)
		if err == nil || !strings.Contains(errOut, "state too large") || !strings.Contains(errOut, "over its bound of 1000 bytes") {
			t.Errorf("%s: run wrote %d bytes of state past --max-state-bytes 1000: %v\n%.300s\n%.300s", store, len(long), err, out, errOut)
		}
	}
	out, errOut, err := cli(t, "run", dir, "-m", long, "--cache-dir", "", "--max-run-bytes", "2000")
	if err == nil || !strings.Contains(errOut, "limit of 2000 bytes") || !strings.Contains(errOut, "--max-run-bytes") {
		t.Errorf("run produced past --max-run-bytes 2000: %v\n%.300s\n%.300s", err, out, errOut)
	}
	if out, errOut, err := cli(t, "run", dir, "-m", long, "--cache-dir", ""); err != nil || !strings.Contains(out, "hi: xxx") {
		t.Errorf("within the default bounds: %v\n%.300s\n%.300s", err, out, errOut)
	}
}

// TestServeExportsSpans points --otel-endpoint at a fake OTLP/HTTP
// collector: after a run and SIGTERM (which flushes the exporter) it has
// received a trace export.
func TestServeExportsSpans(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	var bodies int
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		paths = append(paths, r.Method+" "+r.URL.Path)
		if bytes.Contains(b, []byte("invoke_agent hello_agent")) && bytes.Contains(b, []byte("call_llm")) {
			bodies++
		}
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer collector.Close()
	dir := t.TempDir()
	srv := startServer(t, filepath.Join(dir, "data"), "--admin-token", "tok", "--otel-endpoint", collector.URL)
	app := filepath.Join(dir, "hello")
	os.MkdirAll(app, 0o755)
	os.WriteFile(filepath.Join(app, "root_agent.yaml"), []byte("name: hello_agent\nmodel: scripted\ninstruction: Greet.\n"), 0o644)
	os.WriteFile(filepath.Join(app, "scripted_model.yaml"), []byte("rules:\n  - respond: {text: 'hi: {{text}}'}\n"), 0o644)
	if out, errOut, err := cli(t, "app", "register", app, "--name", "hello", "--server", srv.url, "--token", "tok"); err != nil {
		t.Fatalf("register: %v %s %s", err, out, errOut)
	}
	if st, b := call(t, "POST", srv.url+"/apps/hello/users/u/sessions", map[string]any{"sessionId": "s"}, ""); st != 200 {
		t.Fatalf("session: %d %s", st, b)
	}
	if st, b := call(t, "POST", srv.url+"/run", runMsg("hello", "s", "there"), ""); st != 200 || answer(t, b) != "hi: there" {
		t.Fatalf("run: %d %s", st, b)
	}
	srv.stop(t)
	mu.Lock()
	defer mu.Unlock()
	if bodies == 0 {
		t.Fatalf("no span export with the run's spans; requests: %v", paths)
	}
	for _, p := range paths {
		if p != "POST /v1/traces" {
			t.Fatalf("unexpected collector request %s", p)
		}
	}
}

// TestServeMemoryStore: --store memory serves runs with nothing in the data
// directory but the token, and the store is gone with the process; an
// unknown --store names the choices.
func TestServeMemoryStore(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	srv := startServer(t, data, "--store", "memory")
	tokenFile := filepath.Join(data, "admin-token")
	admin := []string{"--server", srv.url, "--token-file", tokenFile}
	appDir := filepath.Join(dir, "chat")
	os.MkdirAll(appDir, 0o755)
	os.WriteFile(filepath.Join(appDir, "root_agent.yaml"), []byte("name: chat\nmodel: scripted\ninstruction: Echo.\n"), 0o644)
	os.WriteFile(filepath.Join(appDir, "scripted_model.yaml"), []byte("rules:\n  - respond: {text: 'echo: {{text}}'}\n"), 0o644)
	if out, errOut, err := cli(t, append([]string{"app", "register", appDir, "--name", "chat"}, admin...)...); err != nil {
		t.Fatalf("register: %v %s %s", err, out, errOut)
	}
	if st, body := call(t, "POST", srv.url+"/apps/chat/users/u/sessions/s1", map[string]any{}, ""); st != 200 {
		t.Fatalf("create session: %d %s", st, body)
	}
	st, body := call(t, "POST", srv.url+"/run", runMsg("chat", "s1", "hello"), "")
	if st != 200 || answer(t, body) != "echo: hello" {
		t.Fatalf("run: %d %s", st, body)
	}
	srv.stop(t)
	if _, err := os.Stat(filepath.Join(data, "adkhost.db")); !os.IsNotExist(err) {
		t.Errorf("--store memory wrote %s (%v)", filepath.Join(data, "adkhost.db"), err)
	}
	if !strings.Contains(srv.stderr.String(), "--store memory") {
		t.Errorf("no warning that nothing survives:\n%s", srv.stderr)
	}
	_, errOut, err := cli(t, "serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(dir, "d2"), "--store", "redis")
	if err == nil || !strings.Contains(errOut, `want bolt (the default, in --data), memory (ephemeral) or a postgres:// URL`) {
		t.Errorf("--store redis: %v %s", err, errOut)
	}
}
