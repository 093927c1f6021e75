package rust_test

// End-to-end tests of the Rust SDK's artifact, HTTP and memory functions:
// testdata/guest.rs is built for wasm32 with rustc (the SDK as an rlib,
// the guest as a cdylib, as plugins/examples/Makefile does) and called
// through the real sandbox with a host that records the calls
// (internal/fakehost). The SDK's
// unit tests (src/tests.rs) run in plugins/examples' TestRustSDK. Without
// rustc and its wasm32 standard library the test skips, except under
// CI=true, where it fails.

import (
	"context"
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

func missing(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and %s", why)
	}
	t.Skipf("%s (skipping; CI=true makes this a failure)", why)
}

// buildGuest compiles testdata/guest.rs with Debian's rustc (1.63) when
// installed, as the Makefile prefers it, else the rustc in PATH.
func buildGuest(t *testing.T) []byte {
	t.Helper()
	rustc := "/usr/bin/rustc"
	if _, err := os.Stat(rustc); err != nil {
		if rustc, err = exec.LookPath("rustc"); err != nil {
			missing(t, "rustc is not installed")
		}
	}
	targets, err := exec.Command(rustc, "--print", "target-list").Output()
	if err != nil {
		t.Fatalf("%s --print target-list: %v", rustc, err)
	}
	target := "wasm32-wasip1" // Rust 1.84 renamed wasm32-wasi
	if slices.Contains(strings.Fields(string(targets)), "wasm32-wasi") {
		target = "wasm32-wasi"
	}
	sysroot, err := exec.Command(rustc, "--print", "sysroot").Output()
	if err != nil {
		t.Fatalf("%s --print sysroot: %v", rustc, err)
	}
	if _, err := os.Stat(filepath.Join(strings.TrimSpace(string(sysroot)), "lib", "rustlib", target)); err != nil {
		missing(t, rustc+" has no "+target+" standard library")
	}
	dir := t.TempDir()
	rlib, wasm := filepath.Join(dir, "libadkhost.rlib"), filepath.Join(dir, "guest.wasm")
	common := []string{"--edition", "2021", "--target", target, "-O", "-D", "warnings"}
	for _, args := range [][]string{
		{"--crate-type", "rlib", "--crate-name", "adkhost", "-o", rlib, "src/lib.rs"},
		{"--crate-type", "cdylib", "-C", "strip=debuginfo", "--extern", "adkhost=" + rlib, "-o", wasm, "testdata/guest.rs"},
	} {
		if out, err := exec.Command(rustc, append(common, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("rustc %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	b, err := os.ReadFile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestArtifactsHTTPAndMemory(t *testing.T) {
	ctx := context.Background()
	srv := fakehost.NewEcho(t)
	port := srv.Port

	r, err := sandbox.New(ctx, sandbox.Config{CacheDir: filepath.Join(os.TempDir(), "adkhost-sdk-rust-test-cache")})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	m, err := r.Load(ctx, buildGuest(t))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if d, _ := json.Marshal(m.Describe()); !strings.Contains(string(d), `"capabilities":["artifacts","http","memory"]`) {
		t.Errorf("describe %s lacks the capabilities", d)
	}
	// HTTP is granted to 127.0.0.1 only (loopback needs AllowPrivate).
	p, err := r.Pool(ctx, m, sandbox.PoolConfig{Owner: "app", Limits: sandbox.Limits{MaxInstances: 1}, Grants: sandbox.Grants{
		Artifacts: true, HTTP: sandbox.HTTPGrant{Hosts: []string{"127.0.0.1"}, AllowPrivate: true}, Memory: true}})
	if err != nil {
		t.Fatal(err)
	}
	h := &fakehost.Host{}
	for _, c := range []struct{ name, args, want string }{
		{"load missing", `{"name":"a.txt"}`, `{"part":null}`},
		{"save", `{"name":"a.txt","part":{"text":"one"}}`, `{"version":0}`},
		{"save again", `{"name":"a.txt","part":{"text":"two"}}`, `{"version":1}`},
		{"save binary", `{"name":"b.bin","part":{"inlineData":{"mimeType":"application/octet-stream","data":"AP8B"}}}`, `{"version":0}`},
		{"load newest", `{"name":"a.txt"}`, `{"part":{"text":"two"}}`},
		{"load version 0", `{"name":"a.txt","version":0}`, `{"part":{"text":"one"}}`},
		{"load missing version", `{"name":"a.txt","version":5}`, `{"part":null}`},
		{"load binary", `{"name":"b.bin"}`, `{"part":{"inlineData":{"mimeType":"application/octet-stream","data":"AP8B"}}}`},
		{"list", `{}`, `{"names":["a.txt","b.bin"]}`},
		{"post", `{"method":"POST","url":"` + srv.URL + `/echo","body":"héllo wörld"}`,
			`{"status":201,"contentType":"text/plain; charset=utf-8","body":"got héllo wörld"}`},
		{"empty response", `{"url":"` + srv.URL + `/empty"}`, `{"status":204,"contentType":"","body":""}`},
	} {
		tool := strings.Fields(c.name)[0]
		switch tool {
		case "post", "empty":
			tool = "fetch"
		}
		out, err := p.Call(ctx, abi.HookToolCall, []byte(`{"abiVersion":1,"tool":"`+tool+`","args":`+c.args+`}`), h)
		if want := `{"abiVersion":1,"result":` + c.want + `}`; err != nil || string(out) != want {
			t.Errorf("%s:\n got %s, %v\nwant %s", c.name, out, err, want)
		}
	}
	// A host the grant does not list (the same server by another name):
	// DENIED, and no request leaves.
	out, err := p.Call(ctx, abi.HookToolCall, []byte(`{"abiVersion":1,"tool":"fetch","args":{"url":"http://localhost:`+port+`/denied"}}`), h)
	if want := `{"abiVersion":1,"error":"adkhost: http_request: DENIED (3)"}`; err != nil || string(out) != want {
		t.Errorf("denied: got %s, %v\nwant %s", out, err, want)
	}

	if got, want := h.Recorded(), []string{"artifact_load a.txt -1", "artifact_save a.txt", "artifact_save a.txt",
		"artifact_save b.bin", "artifact_load a.txt -1", "artifact_load a.txt 0", "artifact_load a.txt 5",
		"artifact_load b.bin -1", "artifact_list"}; !slices.Equal(got, want) {
		t.Errorf("host calls %q\nwant %q", got, want)
	}
	if vs := h.Artifacts["b.bin"]; len(vs) != 1 || vs[0].InlineData == nil || string(vs[0].InlineData.Data) != "\x00\xff\x01" {
		b, _ := json.Marshal(vs)
		t.Errorf("saved b.bin %s, want one version with inline bytes 00 ff 01", b)
	}
	if seen, want := srv.Seen(), []string{"POST /echo rust héllo wörld", "GET /empty rust "}; !slices.Equal(seen, want) {
		t.Errorf("server saw %q\nwant %q", seen, want)
	}

	t.Run("memory", func(t *testing.T) { testMemory(t, r, m, p) })
}

// testMemory calls the guest's memory tools: a search answered from the
// fake's memories, a session added, UNAVAILABLE without a memory service,
// and a module asking for memory refused without the grant.
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
	for _, c := range []struct{ name, tool, args, want string }{
		{"search", "recall", `{"query":"TEA"}`, `{"texts":["I drink green tea"],"memories":[{"content":{"role":"user","parts":[{"text":"I drink "},{"text":"green tea"}]},"custom_metadata":{"k":1},"id":"e1","author":"user","timestamp":"2026-01-02T03:04:05"}]}`},
		{"search all", "recall", `{}`, `{"texts":["I drink green tea","my cat is Ada"],"memories":[{"content":{"role":"user","parts":[{"text":"I drink "},{"text":"green tea"}]},"custom_metadata":{"k":1},"id":"e1","author":"user","timestamp":"2026-01-02T03:04:05"},{"content":{"role":"user","parts":[{"text":"my cat is Ada"}]},"custom_metadata":{}}]}`},
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
	for tool, want := range map[string]string{"recall": "memory_search", "remember": "memory_add_session"} {
		if got, want := call(none, tool, `{"query":"tea"}`), `{"abiVersion":1,"error":"adkhost: `+want+`: UNAVAILABLE (4)"}`; got != want {
			t.Errorf("%s without a memory service:\n got %s\nwant %s", tool, got, want)
		}
	}
	if none.SessionsAdded != 0 {
		t.Errorf("%d sessions added without a memory service", none.SessionsAdded)
	}

	// The module asks for memory: without the grant it is refused (its
	// calls could only be DENIED).
	if _, err := r.Pool(ctx, m, sandbox.PoolConfig{Owner: "no-memory", Grants: sandbox.Grants{Artifacts: true,
		HTTP: sandbox.HTTPGrant{Hosts: []string{"127.0.0.1"}, AllowPrivate: true}}}); !errors.Is(err, sandbox.ErrNotGranted) || !strings.HasSuffix(err.Error(), "[memory]") {
		t.Errorf("pool without the memory grant: %v, want ErrNotGranted for [memory]", err)
	}
}
