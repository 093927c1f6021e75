package assemblyscript_test

// The AssemblyScript SDK's tests: tests/guest.ts, a guest using every part
// of the SDK, is compiled with asc (this package's devDependency, installed
// by `npm ci` when missing) and called through the real sandbox, which
// decodes outputs strictly as the host does, with adkhosttest.Host
// recording the host calls. Without node and npm the test skips, except
// under CI=true, where it fails (.ci/run installs them).

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/internal/guesttest"
	"github.com/adkhost/adkhost/sandbox"
	"github.com/adkhost/adkhost/sdk/go/adkhost/adkhosttest"
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
	grants := sandbox.Grants{State: true, Config: map[string]string{"greeting": "héllo"},
		Artifacts: true, HTTP: sandbox.HTTPGrant{Hosts: []string{"127.0.0.1"}, AllowPrivate: true}, Memory: true}
	p, err := r.Pool(ctx, m, sandbox.PoolConfig{Owner: "app", Grants: grants, Limits: sandbox.Limits{MaxInstances: 1}})
	if err != nil {
		t.Fatal(err)
	}
	h := &adkhosttest.Host{}
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

	g := guesttest.Guest{Runtime: r, Module: m, Pool: p, Grants: grants, Tag: "as",
		Failure: func(fn string, s abi.Status) string { return fmt.Sprintf("%s: status %d", fn, s) }}
	t.Run("artifacts and http", func(t *testing.T) { guesttest.ArtifactsAndHTTP(t, g, h) })
	t.Run("memory", func(t *testing.T) { guesttest.Memory(t, g) })

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
