package rust_test

// End-to-end tests of the Rust SDK's artifact and HTTP functions:
// testdata/guest.rs is built for wasm32 with rustc (the SDK as an rlib,
// the guest as a cdylib, as plugins/examples/Makefile does) and called
// through the real sandbox with a host that records the calls. The SDK's
// unit tests (src/tests.rs) run in plugins/examples' TestRustSDK. Without
// rustc and its wasm32 standard library the test skips, except under
// CI=true, where it fails.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/adkhost/adkhost/abi"
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

// host keeps artifacts in memory (versions from 0) and records the calls.
type host struct {
	abi.UnavailableHost
	mu        sync.Mutex
	artifacts map[string][]abi.Part
	calls     []string
}

func (h *host) ArtifactLoad(_ context.Context, name string, version int) (*abi.Part, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, fmt.Sprintf("load %s %d", name, version))
	vs := h.artifacts[name]
	if version == -1 {
		version = len(vs) - 1
	}
	if version < 0 || version >= len(vs) {
		return nil, abi.StatusNotFound
	}
	return &vs[version], nil
}

func (h *host) ArtifactSave(_ context.Context, name string, part *abi.Part) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, "save "+name)
	h.artifacts[name] = append(h.artifacts[name], *part)
	return len(h.artifacts[name]) - 1, nil
}

func (h *host) ArtifactList(context.Context) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, "list")
	var names []string
	for n := range h.artifacts {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

func TestArtifactsAndHTTP(t *testing.T) {
	ctx := context.Background()
	var (
		mu   sync.Mutex
		seen []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-Test")+" "+string(body))
		mu.Unlock()
		if r.URL.Path == "/empty" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "got %s", body)
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]

	r, err := sandbox.New(ctx, sandbox.Config{CacheDir: filepath.Join(os.TempDir(), "adkhost-sdk-rust-test-cache")})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	m, err := r.Load(ctx, buildGuest(t))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if d, _ := json.Marshal(m.Describe()); !strings.Contains(string(d), `"capabilities":["artifacts","http"]`) {
		t.Errorf("describe %s lacks the capabilities", d)
	}
	// HTTP is granted to 127.0.0.1 only (loopback needs AllowPrivate).
	p, err := r.Pool(ctx, m, sandbox.PoolConfig{Owner: "app", Limits: sandbox.Limits{MaxInstances: 1}, Grants: sandbox.Grants{
		Artifacts: true, HTTP: sandbox.HTTPGrant{Hosts: []string{"127.0.0.1"}, AllowPrivate: true}}})
	if err != nil {
		t.Fatal(err)
	}
	h := &host{artifacts: map[string][]abi.Part{}}
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

	if want := []string{"load a.txt -1", "save a.txt", "save a.txt", "save b.bin", "load a.txt -1", "load a.txt 0",
		"load a.txt 5", "load b.bin -1", "list"}; !slices.Equal(h.calls, want) {
		t.Errorf("host calls %q\nwant %q", h.calls, want)
	}
	if d := h.artifacts["b.bin"][0].InlineData; d == nil || string(d.Data) != "\x00\xff\x01" {
		t.Errorf("saved inline data %+v, want bytes 00 ff 01", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"POST /echo rust héllo wörld", "GET /empty rust "}; !slices.Equal(seen, want) {
		t.Errorf("server saw %q\nwant %q", seen, want)
	}
}
