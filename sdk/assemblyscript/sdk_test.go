package assemblyscript_test

// The AssemblyScript SDK's tests: tests/guest.ts, a guest using every part
// of the SDK, is compiled with asc (this package's devDependency, installed
// by `npm ci` when missing) and called through the real sandbox, which
// decodes outputs strictly as the host does, with internal/fakehost
// recording the host calls. Without node and npm the test skips, except
// under CI=true, where it fails (.ci/run installs them).

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/internal/fakehost"
	"github.com/adkhost/adkhost/sandbox"
)

func buildGuest(t *testing.T) []byte {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI=true and %s is not installed", tool)
			}
			t.Skipf("%s is not installed (skipping; CI=true makes this a failure)", tool)
		}
	}
	if _, err := os.Stat("node_modules/.bin/asc"); err != nil {
		if out, err := exec.Command("npm", "ci", "--no-audit", "--no-fund").CombinedOutput(); err != nil {
			t.Fatalf("npm ci: %v\n%s", err, out)
		}
	}
	wasm := filepath.Join(t.TempDir(), "guest.wasm")
	cmd := exec.Command("node_modules/.bin/asc", "tests/guest.ts", "--outFile", wasm, "-O3",
		"--runtime", "incremental", "--use", "abort=assembly/index/abort")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("asc: %v\n%s", err, out)
	}
	b, err := os.ReadFile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSDK(t *testing.T) {
	ctx := context.Background()
	// The compiled machine code is cached between runs, as the other
	// module tests do.
	r, err := sandbox.New(ctx, sandbox.Config{CacheDir: filepath.Join(os.TempDir(), "adkhost-sdk-as-test-cache")})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	m, err := r.Load(ctx, buildGuest(t))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if m.Transport() != sandbox.Native {
		t.Fatalf("transport %v, want native", m.Transport())
	}

	// describe: registrations in ABI order, capabilities as asked.
	d, _ := json.Marshal(m.Describe())
	for _, want := range []string{
		`"name":"as-sdk-test","version":"0.0.1"`,
		`"hooks":["tool_call","before_model","after_tool","on_event","after_run","on_run_error"]`,
		`"capabilities":["state","config","artifacts","http","memory"]`,
		`{"name":"count","description":"Counts calls in state.","parameters":{"type":"object","properties":{"key":{"type":"string"}},"required":["key"]}}`,
	} {
		if !strings.Contains(string(d), want) {
			t.Errorf("describe %s\nlacks %s", d, want)
		}
	}

	// HTTP is granted to 127.0.0.1 only (loopback needs AllowPrivate).
	p, err := r.Pool(ctx, m, sandbox.PoolConfig{Owner: "app", Grants: sandbox.Grants{State: true, Config: map[string]string{"greeting": "héllo"},
		Artifacts: true, HTTP: sandbox.HTTPGrant{Hosts: []string{"127.0.0.1"}, AllowPrivate: true}, Memory: true},
		Limits: sandbox.Limits{MaxInstances: 1}})
	if err != nil {
		t.Fatal(err)
	}
	h := &fakehost.Host{}
	call := func(hook abi.Hook, input string) (string, error) {
		t.Helper()
		out, err := p.Call(ctx, hook, []byte(input), h)
		return string(out), err
	}
	cases := []struct {
		name, hook, in, want string
	}{
		{"echo", "tool_call",
			`{"abiVersion":1,"context":{"agentName":"root","functionCallId":"c1","future":[1]},"tool":"echo","args":{"s":"a\"b\\c\n\u00e9😀","n":-1.5e3,"big":12345678901234567890,"l":[true,null,{}]}}`,
			`{"abiVersion":1,"result":{"args":{"s":"a\"b\\c\né😀","n":-1.5e3,"big":12345678901234567890,"l":[true,null,{}]},"call":"c1","agent":"root"}}`},
		{"echo without args", "tool_call", `{"abiVersion":1,"tool":"echo"}`,
			`{"abiVersion":1,"result":{"args":{},"call":"","agent":""}}`},
		{"count 1", "tool_call", `{"abiVersion":1,"tool":"count","args":{"key":"user:n"}}`, `{"abiVersion":1,"result":1}`},
		{"count 2", "tool_call", `{"abiVersion":1,"tool":"count","args":{"key":"user:n"}}`, `{"abiVersion":1,"result":2}`},
		{"count without key", "tool_call", `{"abiVersion":1,"tool":"count","args":{}}`, `{"abiVersion":1,"error":"count needs a string key"}`},
		{"fail", "tool_call", `{"abiVersion":1,"tool":"fail"}`, `{"abiVersion":1,"error":"it \"failed\"\non purpose"}`},
		{"unknown tool", "tool_call", `{"abiVersion":1,"tool":"nope"}`, `{"abiVersion":1,"error":"adkhost: unknown tool \"nope\""}`},
		{"config", "tool_call", `{"abiVersion":1,"tool":"config"}`, `{"abiVersion":1,"result":{"greeting":"héllo","status":0}}`},
		{"json ok", "tool_call", `{"abiVersion":1,"tool":"json","args":{"text":" { \"a\" : [1, 2.5e-3, \"\\u0041\\ud83d\\ude00\"] , \"b\":{} } "}}`,
			`{"abiVersion":1,"result":{"json":"{\"a\":[1,2.5e-3,\"A😀\"],\"b\":{}}"}}`},
		{"json trailing", "tool_call", `{"abiVersion":1,"tool":"json","args":{"text":"[1] x"}}`,
			`{"abiVersion":1,"result":{"error":"invalid JSON at offset 4: trailing data after the value"}}`},
		{"json bad number", "tool_call", `{"abiVersion":1,"tool":"json","args":{"text":"[01]"}}`,
			`{"abiVersion":1,"result":{"error":"invalid JSON at offset 2: expected ',' or ']'"}}`},
		{"json unpaired surrogate", "tool_call", `{"abiVersion":1,"tool":"json","args":{"text":"\"\\ud800\""}}`,
			`{"abiVersion":1,"result":{"error":"invalid JSON at offset 7: unpaired surrogate"}}`},
		{"json trailing comma", "tool_call", `{"abiVersion":1,"tool":"json","args":{"text":"{\"a\":1,}"}}`,
			`{"abiVersion":1,"result":{"error":"invalid JSON at offset 7: expected a string key"}}`},
		{"bad abiVersion", "tool_call", `{"abiVersion":2,"tool":"echo"}`, `{"abiVersion":1,"error":"adkhost: the input's abiVersion is not 1"}`},
		{"after_tool edit", "after_tool", `{"abiVersion":1,"tool":{"name":"t"},"args":{},"result":{"mark":1}}`,
			`{"abiVersion":1,"result":{"mark":1,"checked":true}}`},
		{"after_tool replace", "after_tool", `{"abiVersion":1,"tool":{"name":"t"},"args":{},"result":{"mark":1,"secret":"x"}}`,
			`{"abiVersion":1,"result":{"secret":"***","tool":"t"}}`},
		{"after_tool unchanged", "after_tool", `{"abiVersion":1,"tool":{"name":"t"},"args":{},"result":{"a":1}}`, ``},
		{"before_model pass", "before_model", `{"abiVersion":1,"context":{"agentName":"root"},"request":{"model":"m"}}`, ``},
		{"before_model edit", "before_model", `{"abiVersion":1,"context":{"agentName":"editor"},"request":{"model":"m"}}`,
			`{"abiVersion":1,"request":{"model":"edited-model"}}`},
		{"before_model answer", "before_model", `{"abiVersion":1,"context":{"agentName":"blocked"},"request":{"model":"m"}}`,
			`{"abiVersion":1,"response":{"content":{"role":"model","parts":[{"text":"blocked"}]}}}`},
		{"before_model fail", "before_model", `{"abiVersion":1,"context":{"agentName":"failing"},"request":{}}`,
			`{"abiVersion":1,"error":"model refused"}`},
		{"on_event edit", "on_event", `{"abiVersion":1,"event":{"author":"tag-me","actions":{}}}`,
			`{"abiVersion":1,"event":{"author":"tag-me","actions":{},"branch":"tagged"}}`},
		{"after_run ok", "after_run", `{"abiVersion":1,"context":{"invocationId":"e-1"}}`, ``},
		{"after_run fail", "after_run", `{"abiVersion":1,"context":{"invocationId":"fail-after-run"}}`, `{"abiVersion":1,"error":"after_run failed"}`},
		{"on_run_error", "on_run_error", `{"abiVersion":1,"error":"boom"}`, ``},
		{"base64", "tool_call", `{"abiVersion":1,"tool":"base64","args":{"text":"héllo wörld"}}`,
			`{"abiVersion":1,"result":{"encoded":"` + base64.StdEncoding.EncodeToString([]byte("héllo wörld")) + `","decoded":"héllo wörld","invalid":true}}`},
		{"base64 one pad", "tool_call", `{"abiVersion":1,"tool":"base64","args":{"text":"ab"}}`,
			`{"abiVersion":1,"result":{"encoded":"YWI=","decoded":"ab","invalid":true}}`},
		{"base64 empty", "tool_call", `{"abiVersion":1,"tool":"base64","args":{"text":""}}`,
			`{"abiVersion":1,"result":{"encoded":"","decoded":"","invalid":true}}`},
	}
	for _, c := range cases {
		got, err := call(abi.Hook(c.hook), c.in)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
		// Every output is one the host accepts: decode it strictly.
		if got != "" {
			if err := abi.Decode([]byte(got), abi.Hook(c.hook).NewOutput(), 1<<20); err != nil {
				t.Errorf("%s: the host would refuse %s: %v", c.name, got, err)
			}
		}
	}
	if got := string(h.State["user:n"]); got != "2" {
		t.Errorf("state user:n = %q, want 2", got)
	}
	if got, want := h.Recorded(), []string{"state_get user:n", "state_set user:n 1", "state_get user:n", "state_set user:n 2"}; !slices.Equal(got, want) {
		t.Errorf("host calls %q\nwant %q", got, want)
	}
	if got, want := h.LogLines(), []string{"INFO count user:n = 1", "INFO count user:n = 2", "WARN run failed: boom"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("logs %q, want %q", got, want)
	}

	t.Run("artifacts and http", func(t *testing.T) { testArtifactsAndHTTP(t, p, h) })
	t.Run("memory", func(t *testing.T) { testMemory(t, r, m, p) })

	// Through Invoke, as the engine calls it.
	out, err := sandbox.Invoke[abi.ToolCallOutput](ctx, p, abi.HookToolCall,
		&abi.ToolCallInput{Context: abi.InvocationInfo{AgentName: "root"}, Tool: "count", Args: map[string]any{"key": "k"}}, h)
	if b, _ := json.Marshal(out); err != nil || string(b) != `{"abiVersion":1,"result":1}` {
		t.Errorf("Invoke count: %+v, %v", out, err)
	}
	// Without the state grant the module, which asks for state, is refused.
	_, err = r.Pool(ctx, m, sandbox.PoolConfig{Owner: "other"})
	if !errors.Is(err, sandbox.ErrNotGranted) {
		t.Errorf("pool without grants: %v, want ErrNotGranted", err)
	}
}

// testArtifactsAndHTTP calls the guest's artifact and HTTP tools: versions
// and NOT_FOUND through the recording host, a request answered by a test
// server on the granted 127.0.0.1, and DENIED for a host not granted.
func testArtifactsAndHTTP(t *testing.T, p *sandbox.Pool, h *fakehost.Host) {
	ctx := context.Background()
	before := len(h.Recorded()) // the calls the tests above made
	srv := fakehost.NewEcho(t)
	port := srv.Port

	for _, c := range []struct{ name, tool, args, want string }{
		{"load missing", "load", `{"name":"a.txt"}`, `{"result":{"part":null}}`},
		{"save", "save", `{"name":"a.txt","part":{"text":"one"}}`, `{"result":{"version":0}}`},
		{"save again", "save", `{"name":"a.txt","part":{"text":"two"}}`, `{"result":{"version":1}}`},
		{"save binary", "save", `{"name":"b.bin","part":{"inlineData":{"mimeType":"application/octet-stream","data":"AP8B"}}}`, `{"result":{"version":0}}`},
		{"save invalid part", "save", `{"name":"c","part":{"text":1}}`, `{"error":"artifact_save: status 2"}`},
		{"load newest", "load", `{"name":"a.txt"}`, `{"result":{"part":{"text":"two"}}}`},
		{"load version 0", "load", `{"name":"a.txt","version":0}`, `{"result":{"part":{"text":"one"}}}`},
		{"load missing version", "load", `{"name":"a.txt","version":5}`, `{"result":{"part":null}}`},
		{"load binary", "load", `{"name":"b.bin"}`, `{"result":{"part":{"inlineData":{"mimeType":"application/octet-stream","data":"AP8B"}}}}`},
		{"list", "list", `{}`, `{"result":{"names":["a.txt","b.bin"]}}`},
		{"post", "fetch", `{"method":"POST","url":"` + srv.URL + `/echo","body":"héllo wörld"}`,
			`{"result":{"status":201,"contentType":"text/plain; charset=utf-8","body":"got héllo wörld"}}`},
		{"empty response", "fetch", `{"url":"` + srv.URL + `/empty"}`, `{"result":{"status":204,"contentType":"","body":""}}`},
		// The same server by a name the grant does not list: no request leaves.
		{"denied", "fetch", `{"url":"http://localhost:` + port + `/denied"}`, `{"error":"http_request: status 3"}`},
	} {
		out, err := p.Call(ctx, abi.HookToolCall, []byte(`{"abiVersion":1,"tool":"`+c.tool+`","args":`+c.args+`}`), h)
		if want := `{"abiVersion":1,` + c.want[1:]; err != nil || string(out) != want {
			t.Errorf("%s:\n got %s, %v\nwant %s", c.name, out, err, want)
		}
	}
	if got, want := h.Recorded()[before:], []string{"artifact_load a.txt -1", "artifact_save a.txt", "artifact_save a.txt",
		"artifact_save b.bin", "artifact_load a.txt -1", "artifact_load a.txt 0", "artifact_load a.txt 5",
		"artifact_load b.bin -1", "artifact_list"}; !slices.Equal(got, want) {
		t.Errorf("host calls %q\nwant %q", got, want)
	}
	if vs := h.Artifacts["b.bin"]; len(vs) != 1 || vs[0].InlineData == nil || string(vs[0].InlineData.Data) != "\x00\xff\x01" {
		b, _ := json.Marshal(vs)
		t.Errorf("saved b.bin %s, want one version with inline bytes 00 ff 01", b)
	}
	if seen, want := srv.Seen(), []string{"POST /echo as héllo wörld", "GET /empty as "}; !slices.Equal(seen, want) {
		t.Errorf("server saw %q\nwant %q", seen, want)
	}
}

// testMemory calls the guest's memory tools: a search answered from the
// fake's memories, a session added, UNAVAILABLE without a memory service,
// and the module, which asks for memory, refused without the grant.
func testMemory(t *testing.T, r *sandbox.Runtime, m *sandbox.Module, p *sandbox.Pool) {
	ctx := context.Background()
	call := func(h *fakehost.Host, tool, args string) string {
		t.Helper()
		out, err := p.Call(ctx, abi.HookToolCall, []byte(`{"abiVersion":1,"tool":"`+tool+`","args":`+args+`}`), h)
		if err != nil {
			t.Fatalf("%s %s: %v", tool, args, err)
		}
		return string(out)
	}
	h := &fakehost.Host{Memories: []abi.MemoryEntry{
		{Content: &abi.Content{Role: "user", Parts: []*abi.Part{{Text: "I drink "}, {Text: "green tea"}}},
			CustomMetadata: map[string]any{"k": 1}, ID: "e1", Author: "user", Timestamp: "2026-01-02T03:04:05"},
		{Content: &abi.Content{Role: "user", Parts: []*abi.Part{{Text: "my cat is Ada"}}}, CustomMetadata: map[string]any{}},
	}}
	tea := `{"content":{"role":"user","parts":[{"text":"I drink "},{"text":"green tea"}]},"custom_metadata":{"k":1},"id":"e1","author":"user","timestamp":"2026-01-02T03:04:05"}`
	for _, c := range []struct{ name, tool, args, want string }{
		{"search", "recall", `{"query":"TEA"}`, `{"texts":["I drink green tea"],"memories":[` + tea + `]}`},
		{"search all", "recall", `{}`, `{"texts":["I drink green tea","my cat is Ada"],"memories":[` + tea +
			`,{"content":{"role":"user","parts":[{"text":"my cat is Ada"}]},"custom_metadata":{}}]}`},
		{"search no match", "recall", `{"query":"coffee"}`, `{"texts":[],"memories":[]}`},
		{"add session", "remember", `{}`, `{"added":true}`},
	} {
		if got, want := call(h, c.tool, c.args), `{"abiVersion":1,"result":`+c.want+`}`; got != want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, want)
		}
	}
	if got, want := h.Recorded(), []string{"memory_search TEA", "memory_search ", "memory_search coffee", "memory_add_session"}; !slices.Equal(got, want) || h.SessionsAdded != 1 {
		t.Errorf("host calls %q (%d sessions added)\nwant %q (1)", got, h.SessionsAdded, want)
	}

	none := &fakehost.Host{NoMemory: true}
	for tool, want := range map[string]string{"recall": `{"abiVersion":1,"error":"memory_search: status 4"}`,
		"remember": `{"abiVersion":1,"error":"memory_add_session: status 4"}`} {
		if got := call(none, tool, `{"query":"tea"}`); got != want {
			t.Errorf("%s without a memory service:\n got %s\nwant %s", tool, got, want)
		}
	}
	if none.SessionsAdded != 0 {
		t.Errorf("%d sessions added without a memory service", none.SessionsAdded)
	}

	// Every other grant but not memory: refused (its calls could only be DENIED).
	_, err := r.Pool(ctx, m, sandbox.PoolConfig{Owner: "no-memory", Grants: sandbox.Grants{State: true, Config: map[string]string{},
		Artifacts: true, HTTP: sandbox.HTTPGrant{Hosts: []string{"127.0.0.1"}, AllowPrivate: true}}})
	if !errors.Is(err, sandbox.ErrNotGranted) || !strings.HasSuffix(err.Error(), "[memory]") {
		t.Errorf("pool without the memory grant: %v, want ErrNotGranted for [memory]", err)
	}
}
