package examples_test

// End-to-end tests of the example modules: each is built from source with
// its Makefile target (make <name> OUT=<temp dir>), loaded with host.Load
// and run in a real engine turn (engine.NewRunner, the scripted model, the
// in-memory session service).
//
// A missing toolchain (make, clang with wasi-libc, wat2wasm, Rust for
// wasm32-wasip1, node and npm) skips the example's test, except
// under CI=true, where it fails: .ci/run installs them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model/scripted"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
	"github.com/adkhost/adkhost/host"
	"github.com/adkhost/adkhost/internal/testkit"
	"github.com/adkhost/adkhost/sandbox"
)

// cacheDir keeps the compiled machine code of the modules between runs:
// compiling the Go example under -race takes tens of seconds.
var cacheDir = filepath.Join(os.TempDir(), "adkhost-examples-test-cache")

var shared struct {
	mu     sync.Mutex
	out    string            // make's OUT, a temp dir of this run
	built  map[string][]byte // example name -> module bytes
	failed map[string]string // example name -> why it cannot be built
	rt     *sandbox.Runtime
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "adkhost-examples-")
	if err != nil {
		panic(err)
	}
	shared.out = dir
	shared.built = map[string][]byte{}
	shared.failed = map[string]string{}
	code := m.Run()
	if shared.rt != nil {
		shared.rt.Close(context.Background())
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// missing skips the test for a missing toolchain, or fails it under CI.
func missing(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and "+format, args...)
	}
	t.Skipf(format+" (skipping; CI=true makes this a failure)", args...)
}

// toolchains are the programs each example's build needs, besides make.
var toolchains = map[string][]string{
	"guardrail-c":    {"clang", "wasm-ld"},
	"state-tool-wat": {"wat2wasm"},
	"logger-go":      {"go"},
	"calculator-as":  {"npm", "node"},
	"pii-redactor":   nil, // probeRust says what is missing
	"weather":        {"go"},
	"extism-greeter": {"go"},
	"weather-py":     {"go", "python3", "npm"},
	"guardrail-py":   {"go", "python3", "npm"},
	"audit-py":       {"go", "python3", "npm"},
	"wear-py":        {"go", "python3", "npm"},
	"weather-ts":     {"go", "npm", "cargo"},
}

// probes tell a missing part of a toolchain (a library, a target) from a
// broken build: each fails when the toolchain cannot build an empty module.
var probes = map[string]func() ([]byte, error){
	"guardrail-c":  probeC,
	"pii-redactor": probeRust,
	"weather-py":   probePython,
	"guardrail-py": probePython,
	"audit-py":     probePython,
	"wear-py":      probePython,
	"weather-ts":   probeTS,
}

// example builds one example with make and loads it for the test's own
// owner, so each test has its own pool.
func example(t *testing.T, name string, cfg host.ModuleConfig) *host.Module {
	t.Helper()
	wasm := build(t, name)
	if cfg.Owner == "" {
		cfg.Owner = t.Name()
	}
	m, err := host.Load(context.Background(), runtime(t), wasm, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	return m
}

func build(t *testing.T, name string) []byte {
	t.Helper()
	for _, tool := range append([]string{"make"}, toolchains[name]...) {
		if _, err := exec.LookPath(tool); err != nil {
			missing(t, "%s is not installed: cannot build %s", tool, name)
		}
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if b, ok := shared.built[name]; ok {
		return b
	}
	if why, ok := shared.failed[name]; ok {
		t.Fatal(why)
	}
	if probe, ok := probes[name]; ok {
		// clang without wasi-libc or the wasm32 builtins, rustc without the
		// wasm32 standard library, is a missing toolchain too.
		if msg, err := probe(); err != nil {
			shared.mu.Unlock()
			defer shared.mu.Lock()
			missing(t, "the toolchain of %s cannot build an empty module (plugins/examples/install-deps.sh installs it): %v\n%s", name, err, msg)
		}
	}
	cmd := exec.Command("make", "--no-print-directory", "OUT="+shared.out, name)
	if msg, err := cmd.CombinedOutput(); err != nil {
		shared.failed[name] = "make " + name + ": " + err.Error() + "\n" + string(msg)
		t.Fatal(shared.failed[name])
	}
	b, err := os.ReadFile(filepath.Join(shared.out, name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	shared.built[name] = b
	return b
}

// probeC links an empty C reactor for wasm32-wasi.
func probeC() ([]byte, error) {
	dir, err := os.MkdirTemp("", "adkhost-probe-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "probe.c")
	if err := os.WriteFile(src, []byte("#include <stdlib.h>\nvoid *p(int n) { return malloc(n); }\n"), 0o644); err != nil {
		return nil, err
	}
	args := []string{"--target=wasm32-wasi", "-mexec-model=reactor", "-o", filepath.Join(dir, "probe.wasm"), src}
	if _, err := os.Stat("/usr/share/wasi-sysroot"); err == nil {
		args = append(args, "--sysroot=/usr/share/wasi-sysroot")
	}
	return exec.Command("clang", args...).CombinedOutput()
}

// probeRust asks sdk/rust/cargo-wasm whether a Rust toolchain for
// wasm32-wasip1 is here (rustup's with the target, or Debian's rustc-web
// with rust-web-src, lld and wasi-libc).
func probeRust() ([]byte, error) {
	return exec.Command("make", "--no-print-directory", "OUT="+shared.out, "probe-rust").CombinedOutput()
}

func runtime(t *testing.T) *sandbox.Runtime {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.rt == nil {
		rt, err := sandbox.New(context.Background(), sandbox.Config{CacheDir: cacheDir})
		if err != nil {
			t.Fatal(err)
		}
		shared.rt = rt
	}
	return shared.rt
}

func callTool(id, name string, args map[string]any) scripted.Step {
	return testkit.Calls(testkit.Call(id, name, args))
}

// recorder is a slog.Handler that keeps every record.
type recorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *recorder) WithGroup(string) slog.Handler            { return r }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Level.String() + " " + rec.Message)
	rec.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.Key + "=" + a.Value.String())
		return true
	})
	r.mu.Lock()
	r.lines = append(r.lines, b.String())
	r.mu.Unlock()
	return nil
}

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...)
}

// count is how many recorded lines contain every one of subs.
func (r *recorder) count(subs ...string) int {
	n := 0
	for _, l := range r.all() {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(l, s)
		}
		if ok {
			n++
		}
	}
	return n
}

const refusal = "Sorry, I can't help with that: the request was blocked by policy."

// TestGuardrailC: the C before_model guardrail answers instead of the model
// exactly when the latest user text contains "BLOCK"; "BLOCK" in the system
// instruction, in the model's earlier answers or in an earlier user message
// does not count.
func TestGuardrailC(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	m := example(t, "guardrail-c", host.ModuleConfig{Logger: slog.New(rec)})
	w := testkit.NewWorld(t, engine.LlmAgentConfig{Instruction: "Never BLOCK anyone.", BeforeModel: m.Callbacks().BeforeModel},
		nil, testkit.Reply("Hello! I never BLOCK."), testkit.Reply("Welcome back."), testkit.Reply("unused"))

	if evs := w.MustTurn("hello"); len(evs) != 1 || testkit.TextOf(evs[0]) != "Hello! I never BLOCK." {
		t.Fatalf("hello: the model should answer:\n%s", testkit.Views(evs))
	}
	evs := w.MustTurn("please BLOCK this")
	want := `{"actions":{},"author":"root","content":{"parts":[{"text":"` + refusal + `"}],"role":"model"},"nodeInfo":{"path":"root@1"}}`
	if got := testkit.Views(evs); got != want {
		t.Errorf("please BLOCK this: events\n got %s\nwant %s", got, want)
	}
	if n := len(w.Model.Requests()); n != 1 {
		t.Errorf("after the blocked turn, the model was called %d times, want 1", n)
	}
	if n := rec.count("WARN guardrail-c: request blocked", "module=guardrail-c", "hook=before_model"); n != 1 {
		t.Errorf("%d log lines of the block, want 1: %q", n, rec.all())
	}
	// The earlier BLOCK is history now, not the latest user text.
	if evs := w.MustTurn("hello again"); len(evs) != 1 || testkit.TextOf(evs[0]) != "Welcome back." {
		t.Errorf("hello again: the model should answer:\n%s", testkit.Views(evs))
	}
	if n := len(w.Model.Requests()); n != 2 {
		t.Errorf("model called %d times, want 2", n)
	}
}

// TestGuardrailCToolRound: in a tool round the latest user content is a
// function response, which has no text: the guardrail looks at the user's
// text before it, and a "BLOCK" in the tool's arguments or result does not
// count. As a plugin (host.Module.Plugin) it behaves the same.
func TestGuardrailCToolRound(t *testing.T) {
	t.Parallel()
	m := example(t, "guardrail-c", host.ModuleConfig{})
	echo, err := tool.NewFunction(tool.FunctionConfig{Name: "echo", Description: "Echoes.",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"s": map[string]any{"type": "string"}}},
		Fn: func(_ callbacks.ToolContext, args map[string]any) (any, error) {
			return map[string]any{"echo": args["s"], "note": "BLOCK"}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	w := testkit.NewWorld(t, engine.LlmAgentConfig{Tools: []tool.Tool{echo}}, []callbacks.Plugin{m.Plugin()},
		callTool("c1", "echo", map[string]any{"s": "BLOCK"}), testkit.Reply("echoed"), testkit.Reply("unused"))
	evs := w.MustTurn("echo something")
	if len(evs) != 3 || testkit.TextOf(evs[2]) != "echoed" {
		t.Fatalf("tool round:\n%s", testkit.Views(evs))
	}
	evs = w.MustTurn("now BLOCK")
	if len(evs) != 1 || testkit.TextOf(evs[0]) != refusal {
		t.Errorf("now BLOCK:\n%s", testkit.Views(evs))
	}
	if n := len(w.Model.Requests()); n != 2 {
		t.Errorf("model called %d times, want 2", n)
	}
}

// TestStateToolWAT: the WAT tool's state_set lands in the session state,
// with the function response event, and its result reaches the model.
func TestStateToolWAT(t *testing.T) {
	t.Parallel()
	m := example(t, "state-tool-wat", host.ModuleConfig{Grants: sandbox.Grants{State: true}})
	if got := len(m.Tools()); got != 1 || m.Tools()[0].Name() != "mark_visited" {
		t.Fatalf("tools: %d", got)
	}
	w := testkit.NewWorld(t, engine.LlmAgentConfig{Tools: m.Tools()}, nil,
		callTool("c1", "mark_visited", map[string]any{}), testkit.Reply("Marked."))
	evs := w.MustTurn("mark my visit")
	if len(evs) != 3 || testkit.TextOf(evs[2]) != "Marked." {
		t.Fatalf("events:\n%s", testkit.Views(evs))
	}
	frs := evs[1].FunctionResponses()
	if len(frs) != 1 || frs[0].Name != "mark_visited" {
		t.Fatalf("function response event:\n%s", testkit.Views(evs[1:2]))
	}
	if b, _ := json.Marshal(frs[0].Response); string(b) != `{"visited":true}` {
		t.Errorf("function response = %s, want {\"visited\":true}", b)
	}
	if v, ok := evs[1].Actions.StateDelta["visited"]; !ok || v != true {
		t.Errorf("function response event's stateDelta = %v", evs[1].Actions.StateDelta)
	}
	if v, ok := w.Session().StateValue("visited"); !ok || v != true {
		t.Errorf("session state visited = %v, %v; want true", v, ok)
	}
	// The model's second request carries the result.
	reqs := w.Model.Requests()
	if b, _ := json.Marshal(reqs[len(reqs)-1].Contents); !strings.Contains(string(b), `"response":{"visited":true}`) {
		t.Errorf("last request: %s", b)
	}
}

// TestStateToolWATDenied: without the state grant the module is refused at
// load, as it asks for the capability.
func TestStateToolWATDenied(t *testing.T) {
	t.Parallel()
	wasm := build(t, "state-tool-wat")
	_, err := host.Load(context.Background(), runtime(t), wasm, host.ModuleConfig{Owner: t.Name()})
	if !errors.Is(err, sandbox.ErrNotGranted) {
		t.Fatalf("load without the state grant: %v, want sandbox.ErrNotGranted", err)
	}
}

// TestLoggerGo: the Go logging plugin's lines (before_model and on_event)
// arrive in the embedder's logger, and the turn is unchanged.
func TestLoggerGo(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	m := example(t, "logger-go", host.ModuleConfig{Logger: slog.New(rec)})
	w := testkit.NewWorld(t, engine.LlmAgentConfig{}, []callbacks.Plugin{m.Plugin()}, testkit.Reply("Hi there."))
	evs := w.MustTurn("hello")
	if len(evs) != 1 || testkit.TextOf(evs[0]) != "Hi there." {
		t.Fatalf("events:\n%s", testkit.Views(evs))
	}
	if n := rec.count("INFO model request agent=root model=scripted-model contents=1 tools=0", "module=logger-go", "hook=before_model"); n != 1 {
		t.Errorf("%d before_model lines, want 1:\n%s", n, strings.Join(rec.all(), "\n"))
	}
	if n := rec.count("INFO event author=root parts=1 functionCalls=0", "module=logger-go", "hook=on_event"); n != 1 {
		t.Errorf("%d on_event lines, want 1:\n%s", n, strings.Join(rec.all(), "\n"))
	}
	if n := rec.count("invocation=e-"); n != len(rec.all()) || n == 0 {
		t.Errorf("lines without an invocation:\n%s", strings.Join(rec.all(), "\n"))
	}
}

// TestCalculatorAS: the AssemblyScript tool evaluates its argument, and a
// division by zero is the tool failing: with no on_tool_error callback, the
// run fails with the guest's message, as in google-adk.
func TestCalculatorAS(t *testing.T) {
	t.Parallel()
	m := example(t, "calculator-as", host.ModuleConfig{})
	w := testkit.NewWorld(t, engine.LlmAgentConfig{Tools: m.Tools()}, nil,
		callTool("c1", "calculate", map[string]any{"expression": "2 * (3 + 4) - 10 / 4"}), testkit.Reply("11.5"),
		callTool("c2", "calculate", map[string]any{"expression": "1 / (2 - 2)"}), testkit.Reply("undefined"))
	evs := w.MustTurn("what is 2*(3+4)-10/4?")
	if len(evs) != 3 || testkit.TextOf(evs[2]) != "11.5" {
		t.Fatalf("events:\n%s", testkit.Views(evs))
	}
	frs := evs[1].FunctionResponses()
	if b, _ := json.Marshal(frs[0].Response); len(frs) != 1 || string(b) != `{"expression":"2 * (3 + 4) - 10 / 4","value":11.5}` {
		t.Errorf("function response = %s", b)
	}
	var err error
	msg := &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "and 1/(2-2)?"}}}
	for _, err = range w.Runner.Run(context.Background(), "u", "s1", msg, engine.RunConfig{}) {
		if err != nil {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), "division by zero") {
		t.Errorf("1/(2-2): run error %v, want the guest's division by zero", err)
	}
}

// customer is the tool result the PII redactor sees: two e-mail addresses
// and two phone numbers in strings, at several depths, and what it must
// leave alone (a date, a number value, object keys).
func customerTool(t *testing.T) tool.Tool {
	t.Helper()
	lookup, err := tool.NewFunction(tool.FunctionConfig{Name: "lookup_customer", Description: "Finds a customer.",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}},
		Fn: func(_ callbacks.ToolContext, args map[string]any) (any, error) {
			return map[string]any{
				"id":    args["id"],
				"name":  "Ada Lovelace",
				"email": "ada@example.com",
				"notes": []any{"call +1 (555) 010-4477 after 2024-01-15", "or write to ada.l@mail.example.org."},
				"stats": map[string]any{"orders": 12, "phone_on_file": "555-0199"},
			}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	return lookup
}

const redactedCustomer = `{"email":"[REDACTED EMAIL]","id":"c-7","name":"Ada Lovelace",` +
	`"notes":["call [REDACTED PHONE] after 2024-01-15","or write to [REDACTED EMAIL]."],` +
	`"stats":{"orders":12,"phone_on_file":"[REDACTED PHONE]"}}`

// TestPIIRedactorRust: the Rust after_tool callback redacts the e-mail
// addresses and phone numbers of a tool's result before the model sees it;
// the function response event, the session and the model's next request
// carry the redacted result, and the module logs what it did.
func TestPIIRedactorRust(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	m := example(t, "pii-redactor", host.ModuleConfig{Logger: slog.New(rec)})
	if d := m.Describe(); len(d.Tools) != 0 || len(d.Hooks) != 1 || d.Hooks[0] != abi.HookAfterTool {
		t.Fatalf("describe: %+v", d)
	}
	w := testkit.NewWorld(t, engine.LlmAgentConfig{Tools: []tool.Tool{customerTool(t)}, AfterTool: m.Callbacks().AfterTool}, nil,
		callTool("c1", "lookup_customer", map[string]any{"id": "c-7"}), testkit.Reply("Found Ada."))
	evs := w.MustTurn("who is customer c-7?")
	if len(evs) != 3 || testkit.TextOf(evs[2]) != "Found Ada." {
		t.Fatalf("events:\n%s", testkit.Views(evs))
	}
	frs := evs[1].FunctionResponses()
	if b, _ := json.Marshal(frs[0].Response); len(frs) != 1 || string(b) != redactedCustomer {
		t.Errorf("function response\n got %s\nwant %s", b, redactedCustomer)
	}
	reqs := w.Model.Requests()
	b, _ := json.Marshal(reqs[len(reqs)-1].Contents)
	if strings.Contains(string(b), "@") || strings.Contains(string(b), "4477") || !strings.Contains(string(b), "[REDACTED EMAIL]") {
		t.Errorf("the model's second request: %s", b)
	}
	// What the session stored is redacted too.
	sb, _ := json.Marshal(w.Session().Events)
	if strings.Contains(string(sb), "ada@example.com") {
		t.Errorf("the session keeps the address: %s", sb)
	}
	if n := rec.count("INFO pii-redactor: redacted 2 e-mail address(es) and 2 phone number(s) in the result of lookup_customer",
		"module=pii-redactor", "hook=after_tool"); n != 1 {
		t.Errorf("%d redaction log lines, want 1:\n%s", n, strings.Join(rec.all(), "\n"))
	}
}

// TestPIIRedactorRustPlugin: as a plugin the redactor leaves a clean
// result alone (an empty output, "nothing to change"), logging nothing.
func TestPIIRedactorRustPlugin(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	m := example(t, "pii-redactor", host.ModuleConfig{Logger: slog.New(rec)})
	echo, err := tool.NewFunction(tool.FunctionConfig{Name: "echo", Description: "Echoes.",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"s": map[string]any{"type": "string"}}},
		Fn: func(_ callbacks.ToolContext, args map[string]any) (any, error) {
			return map[string]any{"echo": args["s"], "when": "2024-01-15 10:30", "n": 5551234567}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	w := testkit.NewWorld(t, engine.LlmAgentConfig{Tools: []tool.Tool{echo, customerTool(t)}}, []callbacks.Plugin{m.Plugin()},
		callTool("c1", "echo", map[string]any{"s": "nothing personal"}), testkit.Reply("ok"),
		callTool("c2", "lookup_customer", map[string]any{"id": "c-7"}), testkit.Reply("done"))
	evs := w.MustTurn("echo")
	if b, _ := json.Marshal(evs[1].FunctionResponses()[0].Response); string(b) != `{"echo":"nothing personal","n":5551234567,"when":"2024-01-15 10:30"}` {
		t.Errorf("clean result changed: %s", b)
	}
	if n := len(rec.all()); n != 0 {
		t.Errorf("log lines for a clean result: %q", rec.all())
	}
	evs = w.MustTurn("look up c-7")
	if b, _ := json.Marshal(evs[1].FunctionResponses()[0].Response); string(b) != redactedCustomer {
		t.Errorf("plugin: function response %s", b)
	}
}

// TestRustSDK runs the unit tests of sdk/rust and of the Rust example on
// the build machine (make test-rust: cargo test of each crate).
func TestRustSDK(t *testing.T) {
	t.Parallel()
	if msg, err := probeRust(); err != nil {
		missing(t, "no Rust toolchain (plugins/examples/install-deps.sh installs it): cannot test sdk/rust: %v\n%s", err, msg)
	}
	out, err := exec.Command("make", "--no-print-directory", "OUT="+t.TempDir(), "test-rust").CombinedOutput()
	if err != nil {
		t.Fatalf("make test-rust: %v\n%s", err, out)
	}
	for _, want := range []string{"test result: ok. 13 passed", "test tests::as_a_hook ... ok", "test tests::mixed_and_nested ... ok"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("make test-rust output lacks %q:\n%s", want, out)
		}
	}
}

// TestWeatherGo: the model calls get_weather, whose parameters schema is
// derived from the Go argument type; the answer is the same fake weather
// for the same city, every time, and an empty city fails the tool.
func TestWeatherGo(t *testing.T) {
	t.Parallel()
	m := example(t, "weather", host.ModuleConfig{})
	w := testkit.NewWorld(t, engine.LlmAgentConfig{Tools: m.Tools()}, nil,
		callTool("c1", "get_weather", map[string]any{"city": "Paris"}), testkit.Reply("Paris weather."),
		callTool("c2", "get_weather", map[string]any{"city": "  paris "}), testkit.Reply("Again."),
		callTool("c3", "get_weather", map[string]any{"city": "Tokyo"}), testkit.Reply("Tokyo weather."),
		callTool("c4", "get_weather", map[string]any{"city": " "}), testkit.Reply("unused"))
	const paris = `{"city":"Paris","condition":"sunny","humidityPct":50,"source":"fake","temperatureC":7,"windKph":49}`
	result := func(evs []*session.Event) string {
		t.Helper()
		if len(evs) != 3 {
			t.Fatalf("events:\n%s", testkit.Views(evs))
		}
		b, _ := json.Marshal(evs[1].FunctionResponses()[0].Response)
		return string(b)
	}
	if got := result(w.MustTurn("weather in Paris?")); got != paris {
		t.Errorf("Paris:\n got %s\nwant %s", got, paris)
	}
	// The schema the model saw, derived from weather.Args.
	decl, _ := json.Marshal(w.Model.Requests()[0].Config.Tools)
	// (Keys sorted: the declaration went through a map.)
	const schema = `"parametersJsonSchema":{"properties":{"city":{"description":"the city, e.g. Paris","type":"string"}},"required":["city"],"type":"object"}`
	if !strings.Contains(string(decl), schema) || !strings.Contains(string(decl), `"name":"get_weather"`) {
		t.Errorf("tool declarations %s\nlack %s", decl, schema)
	}
	// Same city (case and spaces aside): same weather.
	if got := result(w.MustTurn("and now?")); got != strings.Replace(paris, `"city":"Paris"`, `"city":"paris"`, 1) {
		t.Errorf("paris again: %s", got)
	}
	if got := result(w.MustTurn("Tokyo?")); got == paris || !strings.Contains(got, `"city":"Tokyo"`) || !strings.Contains(got, `"source":"fake"`) {
		t.Errorf("Tokyo: %s", got)
	}
	var err error
	msg := &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "and nowhere?"}}}
	for _, err = range w.Runner.Run(context.Background(), "u", "s1", msg, engine.RunConfig{}) {
		if err != nil {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), "city must not be empty") {
		t.Errorf("empty city: run error %v, want the tool's error", err)
	}
}

// TestExtismGreeter: the Extism Go PDK module runs on the Extism transport;
// its tool_call hook answers, and its host calls (state_get, state_set,
// log, as JSON HostCalls) reach the session and the embedder's logger.
func TestExtismGreeter(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	// The count is in the user: scope, which the embedder must let modules
	// write (WriteUserState) besides granting state.
	m := example(t, "extism-greeter", host.ModuleConfig{Logger: slog.New(rec), Grants: sandbox.Grants{State: true}, WriteUserState: true})
	if tr := m.Pool().Module().Transport(); tr != sandbox.Extism {
		t.Fatalf("transport %v, want Extism", tr)
	}
	w := testkit.NewWorld(t, engine.LlmAgentConfig{Tools: m.Tools()}, nil,
		callTool("c1", "greet", map[string]any{"name": "Ada"}), testkit.Reply("Greeted."),
		callTool("c2", "greet", map[string]any{"name": "Grace"}), testkit.Reply("Greeted again."),
		callTool("c3", "greet", map[string]any{"name": ""}), testkit.Reply("unused"))
	for i, c := range []struct{ text, want string }{
		{"greet Ada", `{"greeting":"Hello, Ada!","greetings":1}`},
		{"greet Grace", `{"greeting":"Hello, Grace!","greetings":2}`},
	} {
		evs := w.MustTurn(c.text)
		if len(evs) != 3 {
			t.Fatalf("%s: events:\n%s", c.text, testkit.Views(evs))
		}
		if b, _ := json.Marshal(evs[1].FunctionResponses()[0].Response); string(b) != c.want {
			t.Errorf("%s: function response %s, want %s", c.text, b, c.want)
		}
		// (The value's Go type is the session's business: compare as text.)
		if v := evs[1].Actions.StateDelta["user:greetings"]; fmt.Sprint(v) != fmt.Sprint(i+1) {
			t.Errorf("%s: stateDelta %v", c.text, evs[1].Actions.StateDelta)
		}
	}
	if v, ok := w.Session().StateValue("user:greetings"); !ok || fmt.Sprint(v) != "2" {
		t.Errorf("session user:greetings = %v, %v; want 2", v, ok)
	}
	for _, name := range []string{"Ada", "Grace"} {
		if n := rec.count("INFO extism-greeter: greeted "+name, "module=extism-greeter"); n != 1 {
			t.Errorf("%d log lines for %s, want 1:\n%s", n, name, strings.Join(rec.all(), "\n"))
		}
	}
	var err error
	msg := &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "greet nobody"}}}
	for _, err = range w.Runner.Run(context.Background(), "u", "s1", msg, engine.RunConfig{}) {
		if err != nil {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), "greet needs a non-empty name") {
		t.Errorf("empty name: run error %v, want the guest's error", err)
	}
}
