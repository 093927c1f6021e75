package sandbox_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sandbox"
)

// cacheDir is the compilation cache the tests share, across runs too:
// compiling a 3 MB Go guest takes about a second, twenty under -race, and
// loading it from the cache a few tens of milliseconds. wazero keys entries
// by its version, the CPU and the module's sha256, and writes them
// atomically, so concurrent test binaries may share it.
var cacheDir = filepath.Join(os.TempDir(), "adkhost-sandbox-test-cache")

func newRuntime(t testing.TB) *sandbox.Runtime {
	t.Helper()
	r, err := sandbox.New(context.Background(), sandbox.Config{CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(context.Background()) })
	return r
}

func load(t testing.TB, r *sandbox.Runtime, wasm []byte) *sandbox.Module {
	t.Helper()
	m, err := r.Load(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func pool(t testing.TB, r *sandbox.Runtime, m *sandbox.Module, cfg sandbox.PoolConfig) *sandbox.Pool {
	t.Helper()
	if cfg.Owner == "" {
		cfg.Owner = "app"
	}
	p, err := r.Pool(context.Background(), m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

// short is how errors name a module.
func short(wasm []byte) string {
	sum := sha256.Sum256(wasm)
	return "sha256:" + hex.EncodeToString(sum[:])[:12]
}

// goGrants grants what testdata/goguest asks for.
func goGrants(t testing.TB) sandbox.Grants {
	return sandbox.Grants{
		State:     true,
		Actions:   true,
		Artifacts: true,
		Config:    map[string]string{"greeting": "hello"},
		HTTP:      sandbox.HTTPGrant{Hosts: []string{"example.invalid"}},
		Dirs:      []sandbox.Dir{{HostPath: t.TempDir(), GuestPath: "/data"}},
	}
}

func toolCall(tool string, args map[string]any) *abi.ToolCallInput {
	return &abi.ToolCallInput{
		Context: abi.InvocationInfo{AppName: "app", UserID: "u", SessionID: "s", InvocationID: "e-1", AgentName: "root", FunctionCallID: "call-1"},
		Tool:    tool,
		Args:    args,
	}
}

func invokeTool(ctx context.Context, p *sandbox.Pool, h abi.Host, tool string, args map[string]any) (*abi.ToolCallOutput, error) {
	return sandbox.Invoke[abi.ToolCallOutput](ctx, p, abi.HookToolCall, toolCall(tool, args), h)
}

func resultMap(t testing.TB, out *abi.ToolCallOutput) map[string]any {
	t.Helper()
	if out.Error != "" {
		t.Fatalf("tool error: %s", out.Error)
	}
	m, ok := out.Result.(map[string]any)
	if !ok {
		t.Fatalf("result is %T, want an object", out.Result)
	}
	return m
}

// miniWAT is a valid native module; each Load test breaks one part.
const miniWAT = `(module
  %s
  (memory (export "memory") %s)
  (data (i32.const 16) %q)
  %s
  %s
  (func (export "adkhost_free") (param i32 i32))
  (func (export "adkhost_describe") (param i32 i32) (result i64)
    (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const %d)))
  (func (export "adkhost_tool_call") (param i32 i32) (result i64) (i64.const 0))
)`

type mini struct {
	imports, pages, describe, marker, alloc string
}

func (m mini) wat() string {
	if m.pages == "" {
		m.pages = "1"
	}
	if m.describe == "" {
		m.describe = `{"abiVersion":1,"name":"mini","tools":[{"name":"t","description":"d"}],"hooks":["tool_call"]}`
	}
	if m.marker == "" {
		m.marker = `(func (export "adkhost_abi_version_1"))`
	}
	if m.alloc == "" {
		m.alloc = `(func (export "adkhost_alloc") (param i32) (result i32) (i32.const 1024))`
	}
	if m.marker == "-" {
		m.marker = ""
	}
	if m.alloc == "-" {
		m.alloc = ""
	}
	return fmt.Sprintf(miniWAT, m.imports, m.pages, m.describe, m.marker, m.alloc, len(m.describe))
}

func TestLoadRefusesBadModules(t *testing.T) {
	r := newRuntime(t)
	for _, tc := range []struct {
		name string
		mod  mini
		kind error
		want string // after "sandbox: module <digest>: "
	}{
		{
			name: "no version marker",
			mod:  mini{marker: "-"},
			kind: sandbox.ErrNoABIVersion,
			want: "no ABI version marker: it exports no function named adkhost_abi_version_<N>; an ABI v1 module exports adkhost_abi_version_1",
		},
		{
			name: "unknown version",
			mod:  mini{marker: `(func (export "adkhost_abi_version_2"))`},
			kind: sandbox.ErrUnknownABIVersion,
			want: "unknown ABI version: it exports adkhost_abi_version_2; this host speaks version 1 (adkhost_abi_version_1)",
		},
		{
			name: "marker with a signature",
			mod:  mini{marker: `(func (export "adkhost_abi_version_1") (param i32))`},
			kind: sandbox.ErrExportSignature,
			want: "export has the wrong signature: adkhost_abi_version_1 is (i32) -> (), want () -> ()",
		},
		{
			name: "no alloc",
			mod:  mini{alloc: "-"},
			kind: sandbox.ErrMissingExport,
			want: "missing export: adkhost_alloc, a function (i32) -> i32 that the native transport uses to pass input",
		},
		{
			name: "alloc with a wrong signature",
			mod:  mini{alloc: `(func (export "adkhost_alloc") (param i64) (result i64) (i64.const 0))`},
			kind: sandbox.ErrExportSignature,
			want: "export has the wrong signature: adkhost_alloc is (i64) -> i64, want (i32) -> i32",
		},
		{
			name: "foreign import",
			mod:  mini{imports: `(import "env" "now" (func (result i64)))`},
			kind: sandbox.ErrImport,
			want: "unsupported import: env.now: a native module may import only from adkhost and wasi_snapshot_preview1",
		},
		{
			name: "unknown host function",
			mod:  mini{imports: `(import "adkhost" "teleport" (func (result i32)))`},
			kind: sandbox.ErrImport,
			want: "unsupported import: adkhost.teleport is not an ABI v1 host function",
		},
		{
			name: "host function with a wrong signature",
			mod:  mini{imports: `(import "adkhost" "escalate" (func (param i32) (result i32)))`},
			kind: sandbox.ErrImport,
			want: "unsupported import: adkhost.escalate is imported as (i32) -> i32, want () -> i32",
		},
		{
			name: "describe not JSON",
			mod:  mini{describe: `{"abiVersion":1,`},
			kind: sandbox.ErrDescribe,
			want: "bad describe message: abi: malformed message: unexpected EOF",
		},
		{
			name: "describe with an unknown hook",
			mod:  mini{describe: `{"abiVersion":1,"name":"mini","hooks":["on_sunrise"]}`},
			kind: sandbox.ErrDescribe,
			want: `bad describe message: abi: invalid describe message: unknown hook "on_sunrise" (ABI v1 hooks: tool_call, before_agent, after_agent, before_model, after_model, on_model_error, before_tool, after_tool, on_tool_error, on_user_message, before_run, on_event, after_run, on_agent_error, on_run_error)`,
		},
		{
			name: "describe lists a hook the module does not export",
			mod:  mini{describe: `{"abiVersion":1,"name":"mini","tools":[{"name":"t","description":"d"}],"hooks":["tool_call","before_model"]}`},
			kind: sandbox.ErrMissingExport,
			want: `missing export: adkhost_before_model: the describe message lists hook "before_model"`,
		},
		{
			name: "describe of another version",
			mod:  mini{describe: `{"abiVersion":2,"name":"mini","hooks":[]}`},
			kind: sandbox.ErrDescribe,
			want: "bad describe message: abi: unsupported abiVersion: abiVersion is 2, want 1",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wasm := wat(t, tc.mod.wat())
			_, err := r.Load(context.Background(), wasm)
			if !errors.Is(err, tc.kind) {
				t.Fatalf("err = %v, want %v", err, tc.kind)
			}
			want := "sandbox: module " + short(wasm) + ": " + tc.want
			if err.Error() != want {
				t.Fatalf("error\n got: %s\nwant: %s", err, want)
			}
		})
	}
	t.Run("not wasm", func(t *testing.T) {
		_, err := r.Load(context.Background(), []byte("hello"))
		if !errors.Is(err, sandbox.ErrCompile) {
			t.Fatalf("err = %v, want ErrCompile", err)
		}
	})
}

func TestLoadIsCachedByDigest(t *testing.T) {
	r := newRuntime(t)
	wasm := wat(t, mini{}.wat())
	a, b := load(t, r, wasm), load(t, r, wasm)
	if a != b {
		t.Fatal("the same bytes loaded twice gave two modules")
	}
	if a.Transport() != sandbox.Native || a.Describe().Name != "mini" || !strings.HasPrefix(a.Digest(), "sha256:") {
		t.Fatalf("module = %s %s %q", a.Transport(), a.Digest(), a.Describe().Name)
	}
}

func TestToolCallRoundTrip(t *testing.T) {
	r := newRuntime(t)
	m := load(t, r, goGuest(t, "goguest"))
	if got := m.Describe(); got.Name != "goguest" || len(got.Tools) != 11 || !got.Implements(abi.HookBeforeModel) {
		t.Fatalf("describe = %+v", got)
	}
	p := pool(t, r, m, sandbox.PoolConfig{Grants: goGrants(t)})
	args := map[string]any{"city": "Zürich", "days": int64(3), "nested": map[string]any{"list": []any{true, nil, "x"}}}
	out, err := invokeTool(context.Background(), p, nil, "echo", args)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(resultMap(t, out), args) {
		t.Fatalf("result = %v, want %v", out.Result, args)
	}
	out, err = invokeTool(context.Background(), p, nil, "nosuch", nil)
	if err != nil || out.Error != "unknown tool nosuch" {
		t.Fatalf("unknown tool: out = %+v, err = %v", out, err)
	}

	// Another hook, another message type.
	mo, err := sandbox.Invoke[abi.ModelOutput](context.Background(), p, abi.HookBeforeModel,
		&abi.BeforeModelInput{Request: &abi.LlmRequest{Model: "gemini-flash", Contents: []*abi.Content{{Role: "user", Parts: []*abi.Part{{Text: "hi"}}}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if mo.Request == nil || mo.Request.Model != "GEMINI-FLASH" || mo.Request.Contents[0].Parts[0].Text != "hi" {
		t.Fatalf("before_model output = %+v", mo)
	}

	// A hook the module does not list.
	_, err = sandbox.Invoke[abi.ContentOutput](context.Background(), p, abi.HookBeforeAgent, &abi.AgentInput{}, nil)
	if !errors.Is(err, sandbox.ErrNoHook) {
		t.Fatalf("before_agent: err = %v, want ErrNoHook", err)
	}
	// Mismatched types are refused before anything runs.
	if _, err := sandbox.Invoke[abi.ContentOutput](context.Background(), p, abi.HookToolCall, toolCall("echo", nil), nil); err == nil {
		t.Fatal("Invoke accepted a wrong output type")
	}
	if s := p.Stats(); s.Created != 1 || s.Discarded != 0 {
		t.Fatalf("stats = %+v, want one instance reused", s)
	}
}

func TestTimeoutStopsInfiniteLoop(t *testing.T) {
	r := newRuntime(t)
	for _, tc := range []struct {
		name string
		wasm func(testing.TB) []byte
		loop func(*sandbox.Pool) error
		ok   func(*sandbox.Pool) error
	}{
		{
			name: "wat",
			wasm: func(t testing.TB) []byte { return watFile(t, "misbehave.wat") },
			loop: func(p *sandbox.Pool) error {
				_, err := p.Call(context.Background(), abi.HookToolCall, []byte("L"), nil)
				return err
			},
			ok: func(p *sandbox.Pool) error {
				out, err := p.Call(context.Background(), abi.HookToolCall, []byte("echo"), nil)
				if err == nil && string(out) != "echo" {
					err = fmt.Errorf("output %q", out)
				}
				return err
			},
		},
		{
			name: "go",
			wasm: func(t testing.TB) []byte { return goGuest(t, "goguest") },
			loop: func(p *sandbox.Pool) error {
				_, err := invokeTool(context.Background(), p, nil, "loop", nil)
				return err
			},
			ok: func(p *sandbox.Pool) error {
				_, err := invokeTool(context.Background(), p, nil, "echo", map[string]any{"a": 1.0})
				return err
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := load(t, r, tc.wasm(t))
			grants := sandbox.Grants{}
			if tc.name == "go" {
				grants = goGrants(t)
			}
			p := pool(t, r, m, sandbox.PoolConfig{Limits: sandbox.Limits{Timeout: 300 * time.Millisecond, MaxInstances: 1}, Grants: grants})
			start := time.Now()
			err := tc.loop(p)
			if !errors.Is(err, sandbox.ErrTimeout) {
				t.Fatalf("err = %v, want ErrTimeout", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("the loop ran %s", d)
			}
			if !strings.Contains(err.Error(), "call timed out: stopped after 300ms") {
				t.Fatalf("error = %v", err)
			}
			if err := tc.ok(p); err != nil {
				t.Fatalf("the call after the timeout: %v", err)
			}
			if s := p.Stats(); s.Created != 2 || s.Discarded != 1 || s.Live != 1 {
				t.Fatalf("stats = %+v, want the timed-out instance replaced", s)
			}
		})
	}
}

func TestCallerCancellation(t *testing.T) {
	r := newRuntime(t)
	p := pool(t, r, load(t, r, watFile(t, "misbehave.wat")), sandbox.PoolConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := p.Call(ctx, abi.HookToolCall, []byte("L"), nil)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, sandbox.ErrTimeout) {
		t.Fatalf("err = %v, want the caller's context.DeadlineExceeded", err)
	}
}

func TestMemoryLimit(t *testing.T) {
	r := newRuntime(t)
	t.Run("wat memory.grow refused", func(t *testing.T) {
		p := pool(t, r, load(t, r, watFile(t, "misbehave.wat")), sandbox.PoolConfig{Limits: sandbox.Limits{MemoryPages: 32}})
		_, err := p.Call(context.Background(), abi.HookToolCall, []byte("M"), nil)
		if !errors.Is(err, sandbox.ErrMemoryLimit) {
			t.Fatalf("err = %v, want ErrMemoryLimit", err)
		}
		if !strings.Contains(err.Error(), "memory.grow was refused at 32 pages") {
			t.Fatalf("error = %v", err)
		}
		if out, err := p.Call(context.Background(), abi.HookToolCall, []byte("ok"), nil); err != nil || string(out) != "ok" {
			t.Fatalf("after the bomb: %q, %v", out, err)
		}
	})
	t.Run("go out of memory", func(t *testing.T) {
		p := pool(t, r, load(t, r, goGuest(t, "goguest")), sandbox.PoolConfig{Limits: sandbox.Limits{MemoryPages: 512}, Grants: goGrants(t)})
		_, err := invokeTool(context.Background(), p, nil, "bomb", nil)
		if !errors.Is(err, sandbox.ErrMemoryLimit) {
			t.Fatalf("err = %v, want ErrMemoryLimit", err)
		}
		if _, err := invokeTool(context.Background(), p, nil, "echo", nil); err != nil {
			t.Fatalf("after the bomb: %v", err)
		}
		if s := p.Stats(); s.Discarded != 1 {
			t.Fatalf("stats = %+v", s)
		}
	})
	t.Run("initial memory above the limit", func(t *testing.T) {
		wasm := wat(t, mini{pages: "100"}.wat())
		_, err := r.Pool(context.Background(), load(t, r, wasm), sandbox.PoolConfig{Owner: "app", Limits: sandbox.Limits{MemoryPages: 50}})
		want := `sandbox: pool of module ` + short(wasm) + ` for owner "app": limits do not fit the module: the module starts with 100 memory pages, above the limit of 50`
		if !errors.Is(err, sandbox.ErrLimits) || err.Error() != want {
			t.Fatalf("err = %v\nwant %s", err, want)
		}
	})
}

func TestTrapDiscardsInstance(t *testing.T) {
	r := newRuntime(t)
	t.Run("wat", func(t *testing.T) {
		p := pool(t, r, load(t, r, watFile(t, "misbehave.wat")), sandbox.PoolConfig{})
		_, err := p.Call(context.Background(), abi.HookToolCall, []byte("T"), nil)
		if !errors.Is(err, sandbox.ErrTrap) || !strings.Contains(err.Error(), "unreachable") {
			t.Fatalf("err = %v, want ErrTrap (unreachable)", err)
		}
		if _, err := p.Call(context.Background(), abi.HookToolCall, []byte("x"), nil); err != nil {
			t.Fatal(err)
		}
		if s := p.Stats(); s.Created != 2 || s.Discarded != 1 {
			t.Fatalf("stats = %+v", s)
		}
	})
	t.Run("go panic", func(t *testing.T) {
		p := pool(t, r, load(t, r, goGuest(t, "goguest")), sandbox.PoolConfig{Grants: goGrants(t)})
		_, err := invokeTool(context.Background(), p, nil, "panic", nil)
		if !errors.Is(err, sandbox.ErrTrap) || !strings.Contains(err.Error(), `stderr: "panic: boom`) || strings.Contains(err.Error(), "wasm stack trace") {
			t.Fatalf("err = %v, want ErrTrap with the panic", err)
		}
		if s := p.Stats(); s.Discarded != 1 || s.Live != 0 {
			t.Fatalf("stats = %+v", s)
		}
	})
}

func TestHostCallLimit(t *testing.T) {
	r := newRuntime(t)
	p := pool(t, r, load(t, r, watFile(t, "misbehave.wat")), sandbox.PoolConfig{Limits: sandbox.Limits{MaxHostCalls: 1}})
	ctx := context.Background()
	// One host call is within a budget of one.
	if out, err := p.Call(ctx, abi.HookToolCall, []byte("S"), nil); err != nil || string(out) != fmt.Sprint(int(abi.StatusDenied)) {
		t.Fatalf("one host call: %q, %v", out, err)
	}
	_, err := p.Call(ctx, abi.HookToolCall, []byte("F"), nil)
	want := "sandbox: module " + p.Module().Digest()[:19] + " hook tool_call: host call limit exceeded: more than 1 host function calls in one call"
	if !errors.Is(err, sandbox.ErrHostCallLimit) || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	// The budget is per call, and the flooding instance was replaced.
	if _, err := p.Call(ctx, abi.HookToolCall, []byte("S"), nil); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Created != 2 || s.Discarded != 1 {
		t.Fatalf("stats = %+v, want the flooding instance discarded", s)
	}
	if got := p.Limits().MaxHostCalls; got != 1 {
		t.Fatalf("MaxHostCalls = %d", got)
	}
	if got := (sandbox.Limits{}).WithDefaults().MaxHostCalls; got != sandbox.DefaultMaxHostCalls {
		t.Fatalf("default MaxHostCalls = %d", got)
	}

	t.Run("extism", func(t *testing.T) {
		p := pool(t, r, load(t, r, goGuest(t, "extismguest")), sandbox.PoolConfig{
			Limits: sandbox.Limits{MaxHostCalls: 2, Timeout: 5 * time.Second},
			Grants: sandbox.Grants{State: true, Actions: true, Artifacts: true, Config: map[string]string{"greeting": "hello"}, Memory: true},
		})
		h := &recordingHost{state: map[string]json.RawMessage{}}
		log := map[string]any{"op": "log", "level": 0, "message": "again"}
		if _, err := invokeTool(ctx, p, h, "host", map[string]any{"calls": []any{log, log}}); err != nil {
			t.Fatalf("two host calls: %v", err)
		}
		_, err := invokeTool(ctx, p, h, "host", map[string]any{"calls": []any{log, log, log}})
		if !errors.Is(err, sandbox.ErrHostCallLimit) || !strings.HasSuffix(err.Error(), "more than 2 host function calls in one call") {
			t.Fatalf("three host calls: %v, want ErrHostCallLimit", err)
		}
		if _, err := invokeTool(ctx, p, h, "host", map[string]any{"calls": []any{log}}); err != nil {
			t.Fatalf("after the limit: %v", err)
		}
		if s := p.Stats(); s.Discarded != 1 {
			t.Fatalf("stats = %+v, want the plugin discarded", s)
		}
	})
}

func TestOutputChecks(t *testing.T) {
	r := newRuntime(t)
	wp := pool(t, r, load(t, r, watFile(t, "misbehave.wat")), sandbox.PoolConfig{Limits: sandbox.Limits{MaxOutputBytes: 1 << 20, MaxInputBytes: 64}})
	gp := pool(t, r, load(t, r, goGuest(t, "goguest")), sandbox.PoolConfig{Limits: sandbox.Limits{MaxOutputBytes: 1 << 20}, Grants: goGrants(t)})
	ctx := context.Background()

	t.Run("huge output", func(t *testing.T) {
		_, err := wp.Call(ctx, abi.HookToolCall, []byte("H"), nil)
		if !errors.Is(err, sandbox.ErrOutputTooLarge) || !strings.Contains(err.Error(), "2147483647 bytes, limit 1048576") {
			t.Fatalf("err = %v, want ErrOutputTooLarge", err)
		}
		_, err = invokeTool(ctx, gp, nil, "huge", map[string]any{"bytes": 2 << 20})
		if !errors.Is(err, sandbox.ErrOutputTooLarge) {
			t.Fatalf("err = %v, want ErrOutputTooLarge", err)
		}
		if _, err := invokeTool(ctx, gp, nil, "huge", map[string]any{"bytes": 1000}); err != nil {
			t.Fatal(err)
		}
		if s := gp.Stats(); s.Discarded != 0 {
			t.Fatalf("an oversized output discarded the instance: %+v", s)
		}
	})
	t.Run("input too large", func(t *testing.T) {
		_, err := wp.Call(ctx, abi.HookToolCall, make([]byte, 65), nil)
		if !errors.Is(err, sandbox.ErrInputTooLarge) {
			t.Fatalf("err = %v, want ErrInputTooLarge", err)
		}
	})
	t.Run("malformed output", func(t *testing.T) {
		out, err := wp.Call(ctx, abi.HookToolCall, []byte("G"), nil)
		if err != nil || string(out) != "not json" {
			t.Fatalf("raw call: %q, %v", out, err)
		}
		_, err = invokeTool(ctx, gp, nil, "garbage", nil)
		if !errors.Is(err, sandbox.ErrBadOutput) || !errors.Is(err, abi.ErrMalformed) {
			t.Fatalf("err = %v, want ErrBadOutput and abi.ErrMalformed", err)
		}
		_, err = invokeTool(ctx, gp, nil, "badfield", nil)
		if !errors.Is(err, sandbox.ErrBadOutput) || !strings.Contains(err.Error(), `unknown field "surprise"`) {
			t.Fatalf("err = %v, want ErrBadOutput for the unknown field", err)
		}
	})
	t.Run("output outside memory", func(t *testing.T) {
		before := wp.Stats().Discarded
		_, err := wp.Call(ctx, abi.HookToolCall, []byte("P"), nil)
		if !errors.Is(err, sandbox.ErrBadOutput) || !strings.Contains(err.Error(), "adkhost_tool_call returned [0xfffffff0, +16), outside the 65536 bytes of guest memory") {
			t.Fatalf("err = %v, want ErrBadOutput", err)
		}
		if wp.Stats().Discarded != before+1 {
			t.Fatal("the instance was kept")
		}
	})
	t.Run("host call with a bad pointer", func(t *testing.T) {
		out, err := wp.Call(ctx, abi.HookToolCall, []byte("K"), nil)
		if err != nil || string(out) != fmt.Sprint(int(abi.StatusBadPointer)) {
			t.Fatalf("log with a bad pointer: %q, %v; want status %d", out, err, abi.StatusBadPointer)
		}
	})
	t.Run("alloc outside memory", func(t *testing.T) {
		// Load passes describe its input the same way, so it fails there.
		wasm := wat(t, mini{alloc: `(func (export "adkhost_alloc") (param i32) (result i32) (i32.const 0xfffffff0))`}.wat())
		_, err := r.Load(ctx, wasm)
		want := "sandbox: module " + short(wasm) + ": bad describe message: adkhost_describe failed: bad allocation: adkhost_alloc(4096) returned 0xfffffff0, outside the 65536 bytes of guest memory"
		if !errors.Is(err, sandbox.ErrBadAlloc) || !errors.Is(err, sandbox.ErrDescribe) || err.Error() != want {
			t.Fatalf("err = %v\nwant %s", err, want)
		}
	})
}

// barrierHost holds every state_get until n calls are inside one.
type barrierHost struct {
	abi.UnavailableHost
	wg sync.WaitGroup
}

func (h *barrierHost) StateGet(ctx context.Context, key string) (json.RawMessage, error) {
	h.wg.Done()
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	select {
	case <-done:
		return json.RawMessage(`"passed"`), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func TestParallelCallsUseDistinctInstances(t *testing.T) {
	const n = 4
	r := newRuntime(t)
	p := pool(t, r, load(t, r, goGuest(t, "goguest")), sandbox.PoolConfig{Limits: sandbox.Limits{MaxInstances: n, Timeout: 20 * time.Second}, Grants: goGrants(t)})
	h := &barrierHost{}
	h.wg.Add(n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			out, err := invokeTool(context.Background(), p, h, "barrier", nil)
			if err == nil && resultMap(t, out)["value"] != `"passed"` {
				err = fmt.Errorf("result %v", out.Result)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// All n calls were inside the guest at once: n instances.
	if s := p.Stats(); s.Created != n || s.Live != n || s.Idle != n || s.Calls != n {
		t.Fatalf("stats = %+v, want %d instances", s, n)
	}
	// Many more calls than instances: they wait their turn.
	var ok sync.WaitGroup
	for range 40 {
		ok.Go(func() {
			if _, err := invokeTool(context.Background(), p, nil, "echo", map[string]any{"x": 1.0}); err != nil {
				t.Error(err)
			}
		})
	}
	ok.Wait()
	if s := p.Stats(); s.Created != n {
		t.Fatalf("stats = %+v, want no more than %d instances", s, n)
	}
}

func TestPoolsPerOwner(t *testing.T) {
	r := newRuntime(t)
	m := load(t, r, watFile(t, "misbehave.wat"))
	a := pool(t, r, m, sandbox.PoolConfig{Owner: "a"})
	b := pool(t, r, m, sandbox.PoolConfig{Owner: "b"})
	if a == b {
		t.Fatal("two owners share a pool")
	}
	again, err := r.Pool(context.Background(), m, sandbox.PoolConfig{Owner: "a"})
	if err != nil || again != a {
		t.Fatalf("same owner, same config: %p %v, want %p", again, err, a)
	}
	_, err = r.Pool(context.Background(), m, sandbox.PoolConfig{Owner: "a", Limits: sandbox.Limits{Timeout: time.Second}})
	if !errors.Is(err, sandbox.ErrPoolConflict) {
		t.Fatalf("err = %v, want ErrPoolConflict", err)
	}
	for _, p := range []*sandbox.Pool{a, b} {
		if _, err := p.Call(context.Background(), abi.HookToolCall, []byte("x"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if a.Stats().Created != 1 || b.Stats().Created != 1 {
		t.Fatal("each owner should have its own instance")
	}
	a.Close(context.Background())
	if _, err := a.Call(context.Background(), abi.HookToolCall, []byte("x"), nil); !errors.Is(err, sandbox.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestCompilationCacheIsReusedAcrossRuntimes(t *testing.T) {
	dir := t.TempDir()
	wasm := watFile(t, "misbehave.wat")
	snapshot := func() map[string]string {
		files := map[string]string{}
		filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				info, _ := e.Info()
				files[p] = fmt.Sprint(info.Size(), info.ModTime().UnixNano())
			}
			return nil
		})
		return files
	}
	loadOnce := func() {
		r, err := sandbox.New(context.Background(), sandbox.Config{CacheDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close(context.Background())
		p := pool(t, r, load(t, r, wasm), sandbox.PoolConfig{})
		if _, err := p.Call(context.Background(), abi.HookToolCall, []byte("x"), nil); err != nil {
			t.Fatal(err)
		}
	}
	loadOnce()
	first := snapshot()
	if len(first) == 0 {
		t.Fatal("the first runtime wrote nothing to the cache directory")
	}
	loadOnce()
	if second := snapshot(); !reflect.DeepEqual(first, second) {
		t.Fatalf("the second runtime compiled again:\nbefore %v\nafter  %v", first, second)
	}
}

// recordingHost is a Host with state, artifacts, actions and a log.
type recordingHost struct {
	abi.UnavailableHost
	mu        sync.Mutex
	state     map[string]json.RawMessage
	logs      []string
	actions   []string
	artifacts map[string][]*abi.Part
}

func (h *recordingHost) act(format string, args ...any) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.actions = append(h.actions, fmt.Sprintf(format, args...))
	return nil
}

func (h *recordingHost) StateDelete(_ context.Context, key string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.state[key] = json.RawMessage("null")
	return nil
}

func (h *recordingHost) TransferToAgent(_ context.Context, agent string) error {
	return h.act("transfer %s", agent)
}
func (h *recordingHost) Escalate(context.Context) error { return h.act("escalate") }
func (h *recordingHost) SkipSummarization(context.Context) error {
	return h.act("skip")
}
func (h *recordingHost) RequestConfirmation(_ context.Context, hint string, payload json.RawMessage) error {
	return h.act("confirm %q %s", hint, payload)
}

func (h *recordingHost) ArtifactSave(_ context.Context, name string, part *abi.Part) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.artifacts == nil {
		h.artifacts = map[string][]*abi.Part{}
	}
	h.artifacts[name] = append(h.artifacts[name], part)
	return len(h.artifacts[name]) - 1, nil
}

func (h *recordingHost) ArtifactLoad(_ context.Context, name string, version int) (*abi.Part, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	vs := h.artifacts[name]
	if version == -1 {
		version = len(vs) - 1
	}
	if version < 0 || version >= len(vs) {
		return nil, abi.StatusNotFound
	}
	return vs[version], nil
}

func (h *recordingHost) ArtifactList(context.Context) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var names []string
	for n := range h.artifacts {
		names = append(names, n)
	}
	return names, nil
}

func (h *recordingHost) StateGet(_ context.Context, key string) (json.RawMessage, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.state[key]
	if !ok {
		return nil, abi.StatusNotFound
	}
	return v, nil
}

func (h *recordingHost) StateSet(_ context.Context, key string, v json.RawMessage) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.state[key] = v
	return nil
}

func (h *recordingHost) Log(_ context.Context, level slog.Level, msg string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.logs = append(h.logs, level.String()+" "+msg)
}

func (h *recordingHost) InvocationInfo(context.Context) (*abi.InvocationInfo, error) {
	return &abi.InvocationInfo{InvocationID: "e-1"}, nil
}

// MemorySearch answers one memory whose text is the query.
func (h *recordingHost) MemorySearch(_ context.Context, query string) (*abi.SearchMemoryResponse, error) {
	return &abi.SearchMemoryResponse{Memories: []abi.MemoryEntry{{
		Content:        &abi.Content{Role: "user", Parts: []*abi.Part{{Text: query}}},
		CustomMetadata: map[string]any{"query": query},
	}}}, nil
}

func (h *recordingHost) MemoryAddSession(context.Context) error { return h.act("add session") }

func TestHostFunctionsAndGrants(t *testing.T) {
	r := newRuntime(t)
	ctx := context.Background()
	t.Run("nothing granted by default", func(t *testing.T) {
		p := pool(t, r, load(t, r, watFile(t, "misbehave.wat")), sandbox.PoolConfig{})
		out, err := p.Call(ctx, abi.HookToolCall, []byte("S"), &recordingHost{state: map[string]json.RawMessage{}})
		if err != nil || string(out) != fmt.Sprint(int(abi.StatusDenied)) {
			t.Fatalf("state_get without the capability: %q, %v; want status %d", out, err, abi.StatusDenied)
		}
	})
	m := load(t, r, goGuest(t, "goguest"))
	t.Run("asking for more than granted", func(t *testing.T) {
		_, err := r.Pool(ctx, m, sandbox.PoolConfig{Owner: "stingy", Grants: sandbox.Grants{State: true}})
		want := `sandbox: pool of module ` + m.Digest()[:19] + ` for owner "stingy": capabilities not granted: the module asks for [actions artifacts config fs http]`
		if !errors.Is(err, sandbox.ErrNotGranted) || err.Error() != want {
			t.Fatalf("err = %v\nwant %s", err, want)
		}
	})
	p := pool(t, r, m, sandbox.PoolConfig{Grants: goGrants(t)})
	t.Run("with a host", func(t *testing.T) {
		h := &recordingHost{state: map[string]json.RawMessage{}}
		out, err := invokeTool(ctx, p, h, "host", nil)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]any{
			"set": "OK", "get": "41", "missing": "NOT_FOUND", "emptyKey": "INVALID_ARGUMENT",
			"badPointer": "BAD_POINTER", "config": "hello", "log": "OK",
			"invocation": "e-1", "contextMatches": true,
			"delete": "OK", "transfer": "OK", "escalate": "OK", "skip": "OK", "confirm": "OK",
			"save": int64(0), "load": "saved text", "list": `["notes.txt"]`,
		}
		if got := resultMap(t, out); !reflect.DeepEqual(got, want) {
			t.Fatalf("host tour\n got %v\nwant %v", got, want)
		}
		if string(h.state["temp:count"]) != "41" || string(h.state["user:gone"]) != "null" || len(h.logs) != 1 || h.logs[0] != "INFO hello from the guest" {
			t.Fatalf("host saw state %v, logs %q", h.state, h.logs)
		}
		wantActions := []string{"transfer helper", "escalate", "skip", `confirm "spend 3 credits?" {"credits":3}`}
		if !reflect.DeepEqual(h.actions, wantActions) {
			t.Fatalf("actions %q, want %q", h.actions, wantActions)
		}
	})
	t.Run("without a host", func(t *testing.T) {
		out, err := invokeTool(ctx, p, nil, "host", nil)
		if err != nil {
			t.Fatal(err)
		}
		got := resultMap(t, out)
		if got["set"] != "UNAVAILABLE" || got["get"] != "UNAVAILABLE" || got["config"] != "hello" || got["invocation"] != "UNAVAILABLE" || got["save"] != "UNAVAILABLE" || got["log"] != "OK" {
			t.Fatalf("host tour without a host: %v", got)
		}
	})
}

func TestReadOnlyDirectory(t *testing.T) {
	r := newRuntime(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte("granted"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := goGrants(t)
	g.Dirs = []sandbox.Dir{{HostPath: dir, GuestPath: "/data"}}
	p := pool(t, r, load(t, r, goGuest(t, "goguest")), sandbox.PoolConfig{Grants: g})
	out, err := invokeTool(context.Background(), p, nil, "readfile", map[string]any{"path": "/data/note.txt"})
	if err != nil {
		t.Fatal(err)
	}
	got := resultMap(t, out)
	if got["content"] != "granted" || got["writeError"] == nil {
		t.Fatalf("readfile = %v, want the content and a refused write", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "note.txt.new")); err == nil {
		t.Fatal("the guest wrote to a read-only directory")
	}
	out, err = invokeTool(context.Background(), p, nil, "readfile", map[string]any{"path": "/etc/passwd"})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultMap(t, out); got["readError"] == nil {
		t.Fatalf("read outside the mount: %v", got)
	}
}

func TestHTTPGrant(t *testing.T) {
	r := newRuntime(t)
	m := load(t, r, goGuest(t, "goguest"))
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		fmt.Fprint(w, "hello over http")
	}))
	defer target.Close()
	tu, _ := url.Parse(target.URL)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// To the same server by another name, which the grant lacks.
		http.Redirect(w, req, "http://localhost:"+tu.Port()+"/", http.StatusFound)
	}))
	defer redirect.Close()

	owners := 0
	fetch := func(g sandbox.HTTPGrant, u string) map[string]any {
		t.Helper()
		grants := goGrants(t)
		grants.HTTP = g
		owners++
		p := pool(t, r, m, sandbox.PoolConfig{Owner: fmt.Sprint("owner", owners), Grants: grants})
		out, err := invokeTool(context.Background(), p, nil, "http", map[string]any{"url": u})
		if err != nil {
			t.Fatal(err)
		}
		return resultMap(t, out)
	}
	loopback := sandbox.HTTPGrant{Hosts: []string{"127.0.0.1"}}
	if got := fetch(loopback, target.URL); got["status"] != "DENIED" {
		t.Fatalf("loopback without AllowPrivate: %v", got)
	}
	loopback.AllowPrivate = true
	if got := fetch(loopback, target.URL); got["status"] != "OK" || got["body"] != "hello over http" || got["code"] != int64(200) {
		t.Fatalf("granted fetch: %v", got)
	}
	if got := fetch(loopback, redirect.URL); got["status"] != "DENIED" {
		t.Fatalf("redirect to a host outside the grant: %v", got)
	}
	if got := fetch(loopback, "http://other.invalid/"); got["status"] != "DENIED" {
		t.Fatalf("host outside the grant: %v", got)
	}
	port := sandbox.HTTPGrant{Hosts: []string{"127.0.0.1:1"}, AllowPrivate: true}
	if got := fetch(port, target.URL); got["status"] != "DENIED" {
		t.Fatalf("port outside the grant: %v", got)
	}
}

func TestExtismTransport(t *testing.T) {
	r := newRuntime(t)
	m := load(t, r, goGuest(t, "extismguest"))
	if m.Transport() != sandbox.Extism || m.Describe().Name != "extismguest" {
		t.Fatalf("module: %s %+v", m.Transport(), m.Describe())
	}
	p := pool(t, r, m, sandbox.PoolConfig{
		Limits: sandbox.Limits{Timeout: 500 * time.Millisecond, MaxInstances: 2, MaxInputBytes: 1 << 16},
		Grants: sandbox.Grants{State: true, Actions: true, Artifacts: true, Config: map[string]string{"greeting": "hello"}, Memory: true},
	})
	h := &recordingHost{state: map[string]json.RawMessage{"who": json.RawMessage(`"world"`)}}
	ctx := context.Background()
	out, err := invokeTool(ctx, p, h, "echo", map[string]any{"n": 1.0})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"args":      map[string]any{"n": int64(1)},
		"state":     map[string]any{"abiVersion": int64(1), "status": int64(0), "value": "world"},
		"config":    map[string]any{"abiVersion": int64(1), "status": int64(0), "value": "hello"},
		"pdkConfig": "hello",
	}
	if got := resultMap(t, out); !reflect.DeepEqual(got, want) {
		t.Fatalf("echo\n got %v\nwant %v", got, want)
	}
	// Every host function through adkhost_host.
	calls := []any{
		map[string]any{"op": "state_set", "key": "temp:n", "value": map[string]any{"x": 7}},
		map[string]any{"op": "state_get", "key": "temp:n"},
		map[string]any{"op": "state_delete", "key": "temp:n"},
		map[string]any{"op": "state_get", "key": ""},
		map[string]any{"op": "transfer_to_agent", "name": "helper"},
		map[string]any{"op": "escalate"},
		map[string]any{"op": "skip_summarization"},
		map[string]any{"op": "request_confirmation", "hint": "ok?", "value": map[string]any{"n": 1}},
		map[string]any{"op": "artifact_save", "name": "a.txt", "value": map[string]any{"text": "hi"}},
		map[string]any{"op": "artifact_load", "name": "a.txt", "version": 0},
		map[string]any{"op": "artifact_load", "name": "a.txt", "version": 5},
		map[string]any{"op": "artifact_list"},
		map[string]any{"op": "log", "level": 4, "message": "careful"},
		map[string]any{"op": "invocation_info"},
		map[string]any{"op": "config_get", "key": "nope"},
		map[string]any{"op": "http_request", "value": map[string]any{"url": "https://example.com/"}},
		map[string]any{"op": "memory_search", "query": "tea"},
		map[string]any{"op": "memory_add_session"},
		map[string]any{"op": "teleport"},
		map[string]any{"op": "state_get", "key": "k", "surprise": true},
	}
	out, err = invokeTool(ctx, p, h, "host", map[string]any{"calls": calls})
	if err != nil {
		t.Fatal(err)
	}
	var replies []string
	for _, r := range resultMap(t, out)["replies"].([]any) {
		b, _ := json.Marshal(r)
		replies = append(replies, string(b))
	}
	wantReplies := []string{
		`{"abiVersion":1,"status":0}`,
		`{"abiVersion":1,"status":0,"value":{"x":7}}`,
		`{"abiVersion":1,"status":0}`,
		`{"abiVersion":1,"status":2}`,
		`{"abiVersion":1,"status":0}`,
		`{"abiVersion":1,"status":0}`,
		`{"abiVersion":1,"status":0}`,
		`{"abiVersion":1,"status":0}`,
		`{"abiVersion":1,"status":0,"value":0}`,
		`{"abiVersion":1,"status":0,"value":{"text":"hi"}}`,
		`{"abiVersion":1,"status":1}`,
		`{"abiVersion":1,"status":0,"value":["a.txt"]}`,
		`{"abiVersion":1,"status":0}`,
		`{"abiVersion":1,"status":0,"value":{"agentName":"","appName":"","invocationId":"e-1","sessionId":"","userId":""}}`,
		`{"abiVersion":1,"status":1}`,
		`{"abiVersion":1,"status":3}`,
		`{"abiVersion":1,"status":0,"value":{"memories":[{"content":{"parts":[{"text":"tea"}],"role":"user"},"custom_metadata":{"query":"tea"}}]}}`,
		`{"abiVersion":1,"status":0}`,
		`{"abiVersion":1,"status":2}`,
		`{"abiVersion":1,"status":2}`,
	}
	if !reflect.DeepEqual(replies, wantReplies) {
		t.Fatalf("replies\n got %q\nwant %q", replies, wantReplies)
	}
	if string(h.state["temp:n"]) != "null" || len(h.actions) != 5 || h.actions[4] != "add session" || len(h.logs) != 1 || h.logs[0] != "WARN careful" {
		t.Fatalf("host saw state %v, actions %q, logs %q", h.state, h.actions, h.logs)
	}

	_, err = invokeTool(ctx, p, h, "fail", nil)
	if !errors.Is(err, sandbox.ErrGuest) || !strings.Contains(err.Error(), "the guest says no") {
		t.Fatalf("fail: %v, want ErrGuest", err)
	}
	if s := p.Stats(); s.Discarded != 0 {
		t.Fatalf("a reported error discarded the instance: %+v", s)
	}
	_, err = p.Call(ctx, abi.HookToolCall, make([]byte, 1<<16+1), h)
	if !errors.Is(err, sandbox.ErrInputTooLarge) {
		t.Fatalf("oversized input: %v", err)
	}
	_, err = invokeTool(ctx, p, h, "loop", nil)
	if !errors.Is(err, sandbox.ErrTimeout) {
		t.Fatalf("loop: %v, want ErrTimeout", err)
	}
	if _, err := invokeTool(ctx, p, h, "echo", nil); err != nil {
		t.Fatalf("after the timeout: %v", err)
	}
	if s := p.Stats(); s.Discarded != 1 {
		t.Fatalf("stats = %+v, want the timed-out plugin discarded", s)
	}
}

// lateHost counts the host calls that reach it after their call's context
// ended.
type lateHost struct {
	abi.UnavailableHost
	calls, late atomic.Int64
}

func (h *lateHost) Log(ctx context.Context, _ slog.Level, _ string) {
	h.calls.Add(1)
	if ctx.Err() != nil {
		h.late.Add(1)
	}
}

// TestNoHostCallAfterDeadline: once a call's time is up, or its caller's
// context ended, no host function reaches the Host: the guest is stopped
// at its next host call instead of making the calls it can fit in before
// the interrupt check (every 1024th loop iteration) stops it. Without this
// a guest that timed out still wrote state into the invocation.
func TestNoHostCallAfterDeadline(t *testing.T) {
	r := newRuntime(t)
	limits := sandbox.Limits{Timeout: 50 * time.Millisecond, MaxHostCalls: 1 << 30,
		LogLinesPerSecond: 1 << 30, MaxLogBytes: 1 << 30}
	p := pool(t, r, load(t, r, watFile(t, "misbehave.wat")), sandbox.PoolConfig{Limits: limits})
	for _, name := range []string{"deadline", "cancelled"} {
		t.Run(name, func(t *testing.T) {
			for range 5 {
				ctx := context.Background()
				if name == "cancelled" {
					c, cancel := context.WithCancel(ctx)
					time.AfterFunc(10*time.Millisecond, cancel)
					ctx = c
				}
				h := &lateHost{}
				_, err := p.Call(ctx, abi.HookToolCall, []byte("F"), h) // logs forever
				want := sandbox.ErrTimeout
				if name == "cancelled" {
					want = context.Canceled
				}
				if !errors.Is(err, want) {
					t.Fatalf("err = %v, want %v", err, want)
				}
				if h.calls.Load() == 0 {
					t.Fatal("the guest's log calls never reached the host")
				}
				// The one call admitted just before the deadline may see it
				// pass while it runs; it is the guest's last.
				if n := h.late.Load(); n > 1 {
					t.Fatalf("%d of %d host calls ran after the call's context ended", n, h.calls.Load())
				}
			}
		})
	}
}
