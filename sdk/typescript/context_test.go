package typescript_test

// Modules built from the TypeScript in tests/ with `module build`'s
// builder, run in real engine turns (the scripted model, the in-memory
// services). A missing runtime (make ts-runtime) skips, except under
// CI=true, where it fails: .ci/run builds it.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/host"
	"github.com/adkhost/adkhost/internal/testkit"
	"github.com/adkhost/adkhost/modbuild"
	"github.com/adkhost/adkhost/sandbox"
)

// missing skips for a missing prerequisite, or fails under CI=true (where
// .ci/run builds the runtime).
func missing(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and "+format, args...)
	}
	t.Skipf(format+" (skipping; CI=true makes this a failure)", args...)
}

// built keeps the modules the tests built, by source: tests share them.
var built sync.Map

func buildModule(t *testing.T, src string) []byte {
	t.Helper()
	if _, err := modbuild.FindTSRuntime(""); err != nil {
		missing(t, "%v", err)
	}
	if b, ok := built.Load(src); ok {
		return b.([]byte)
	}
	out := filepath.Join(t.TempDir(), "m.wasm")
	var log bytes.Buffer
	if err := modbuild.Build(context.Background(), modbuild.Options{Source: src, Output: out, Stderr: &log}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	built.Store(src, b)
	return b
}

// logLines is a slog handler keeping "LEVEL message" lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) Enabled(context.Context, slog.Level) bool { return true }
func (l *logLines) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, r.Level.String()+" "+r.Message)
	return nil
}
func (l *logLines) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logLines) WithGroup(string) slog.Handler      { return l }
func (l *logLines) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func load(t *testing.T, rt *sandbox.Runtime, wasm []byte, cfg host.ModuleConfig) *host.Module {
	t.Helper()
	cfg.Owner = t.Name()
	m, err := host.Load(context.Background(), rt, wasm, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	return m
}

func newRuntime(t *testing.T) *sandbox.Runtime {
	t.Helper()
	rt, err := sandbox.New(context.Background(), sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	return rt
}

func response(t *testing.T, evs []*session.Event, i int) string {
	t.Helper()
	if i >= len(evs) || len(evs[i].FunctionResponses()) == 0 {
		t.Fatalf("no function response in event %d:\n%s", i, testkit.Views(evs))
	}
	b, _ := json.Marshal(evs[i].FunctionResponses()[0].Response)
	return string(b)
}

// TestContextOverHostFunctions: adk-js's ToolContext API in a TypeScript
// tool reaches the session (state with its prefix rules), the artifact and
// memory services, config values, HTTP, the log and the event's actions,
// behind the module's grants; a thrown error fails the tool; the sandbox's
// limits answer as documented (sdk/typescript/README.md).
func TestContextOverHostFunctions(t *testing.T) {
	wasm := buildModule(t, "tests/context_tools.ts")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"probe":%q,"path":%q}`, r.Header.Get("X-Probe"), r.URL.Path)
	}))
	defer srv.Close()
	logs := &logLines{}
	m := load(t, newRuntime(t), wasm, host.ModuleConfig{Logger: slog.New(logs), Grants: sandbox.Grants{
		State: true, Actions: true, Artifacts: true, Memory: true, Config: map[string]string{"greeting": "hello"},
		HTTP: sandbox.HTTPGrant{Hosts: []string{strings.TrimPrefix(srv.URL, "http://")}, AllowPrivate: true}}})
	w := testkit.NewWorldWith(t, testkit.Options{Memory: memory.NewInMemoryService()}, engine.LlmAgentConfig{Tools: m.Tools()}, nil,
		testkit.Calls(testkit.Call("c1", "context_tour", map[string]any{"note": "tea at five"})), testkit.Reply("ok"),
		testkit.Calls(testkit.Call("c2", "finish", map[string]any{})),
		testkit.Calls(testkit.Call("c3", "needs_ok", map[string]any{"amount": 5})), testkit.Reply("asked"),
		testkit.Calls(testkit.Call("c4", "fails", map[string]any{})),
		testkit.Calls(testkit.Call("c5", "fetch_it", map[string]any{"url": srv.URL + "/x"})), testkit.Reply("ok"),
		testkit.Calls(testkit.Call("c6", "limits", map[string]any{})), testkit.Reply("ok"),
		testkit.Calls(testkit.Call("c7", "never", map[string]any{})),
		testkit.Calls(testkit.Call("c8", "bigint", map[string]any{})),
		testkit.Calls(testkit.Call("c9", "hog", map[string]any{})),
		testkit.Calls(testkit.Call("c10", "finish", map[string]any{})))

	evs := w.MustTurn("tour")
	if len(evs) != 3 {
		t.Fatalf("events:\n%s", testkit.Views(evs))
	}
	want := `{"artifact":{"absent":null,"names":["notes.txt"],"text":"tea at five","version":0},` +
		`"deleted":null,"greeting":"hello","has_note":true,"ids":["c1","root","u"],"memories":0,"missing":"default","no_config":null,` +
		`"read_back":"tea at five","user_text":"tour","user_write":"state_set: DENIED (the module needs the 'state' capability, asked for with capabilities(\"state\") or ` +
		"`module build --capabilities state`" + `, and granted by the app) [3]"}`
	if got := response(t, evs, 1); got != want {
		t.Errorf("context_tour:\n got %s\nwant %s", got, want)
	}
	delta, _ := json.Marshal(evs[1].Actions.StateDelta)
	// temp: keys live for the invocation only: the stored event has none.
	if string(delta) != `{"note":"tea at five"}` {
		t.Errorf("stateDelta %s", delta)
	}
	if v, ok := evs[1].Actions.ArtifactDelta["notes.txt"]; !ok || v != 0 {
		t.Errorf("artifactDelta %v", evs[1].Actions.ArtifactDelta)
	}
	for _, line := range []string{"WARN tour done", "INFO module-level log", `INFO console {"n":1}`} {
		if !strings.Contains(logs.all(), line) {
			t.Errorf("log lines lack %q:\n%s", line, logs.all())
		}
	}

	evs = w.MustTurn("finish")
	if len(evs) != 2 || !evs[1].Actions.SkipSummarization {
		t.Errorf("finish: skipSummarization not set:\n%s", testkit.Views(evs))
	}

	evs = w.MustTurn("pay")
	var conf []byte
	for _, ev := range evs {
		if len(ev.Actions.RequestedToolConfirmations) > 0 {
			conf, _ = json.Marshal(ev.Actions.RequestedToolConfirmations)
		}
	}
	if !strings.Contains(string(conf), `"hint":"pay 5?"`) || !strings.Contains(string(conf), `"payload":{"amount":5}`) {
		t.Errorf("requested confirmations %s:\n%s", conf, testkit.Views(evs))
	}

	if _, err := w.Turn("fail"); err == nil || !strings.Contains(err.Error(), "TypeError: no such thing") {
		t.Errorf("fails: run error %v, want the TypeError", err)
	}

	evs = w.MustTurn("fetch")
	if got, want := response(t, evs, 1), `{"body":{"path":"/x","probe":"ts"},"denied":"http_request: DENIED (the destination is not among the hosts the app grants this module, or the module lacks the 'http' capability: capabilities(\"http\") or `+"`module build --capabilities http`"+`)","header":"application/json","status":200}`; got != want {
		t.Errorf("fetch_it:\n got %s\nwant %s", got, want)
	}

	evs = w.MustTurn("limits")
	var lim struct {
		Recursion string   `json:"recursion"`
		Chained   int      `json:"chained"`
		Node      []string `json:"node"`
		Random    float64  `json:"random"`
	}
	if err := json.Unmarshal([]byte(response(t, evs, 1)), &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Recursion != "RangeError: Maximum call stack size exceeded" || lim.Chained != 20 || len(lim.Node) != 0 || lim.Random <= 0 || lim.Random >= 1 {
		t.Errorf("limits: %+v", lim)
	}

	if _, err := w.Turn("never"); err == nil || !strings.Contains(err.Error(), "a promise never settled") {
		t.Errorf("never: run error %v, want the unsettled promise's", err)
	}
	if _, err := w.Turn("bigint"); err == nil || !strings.Contains(err.Error(), "TypeError: BigInt") {
		t.Errorf("bigint: run error %v, want JSON's TypeError", err)
	}
	// The memory limit bounds the heap: allocation past it throws, the
	// call fails, and the module answers the next call.
	if _, err := w.Turn("hog"); err == nil || !strings.Contains(err.Error(), "InternalError: out of memory") {
		t.Errorf("hog: run error %v, want QuickJS's out of memory", err)
	}
	if evs := w.MustTurn("finish again"); len(evs) != 2 || !evs[1].Actions.SkipSummarization {
		t.Errorf("after hog:\n%s", testkit.Views(evs))
	}
}

// TestCallbacksAndPlugin: agent callbacks with adk-js's one-object
// arguments (a before_model that answers instead of the model or changes
// the request, an async after_tool that changes the result and writes
// state) and an exported BasePlugin whose before_tool changes the
// arguments and whose before_run logs through console.
func TestCallbacksAndPlugin(t *testing.T) {
	rt := newRuntime(t)
	tools := load(t, rt, buildModule(t, "tests/context_tools.ts"), host.ModuleConfig{Grants: sandbox.Grants{
		State: true, Actions: true, Artifacts: true, Memory: true, Config: map[string]string{}, HTTP: sandbox.HTTPGrant{Hosts: []string{"example.com"}}}})
	logs := &logLines{}
	guard := load(t, rt, buildModule(t, "tests/guard.ts"), host.ModuleConfig{Logger: slog.New(logs), Grants: sandbox.Grants{State: true}})
	plug := load(t, rt, buildModule(t, "tests/plugin.ts"), host.ModuleConfig{Logger: slog.New(logs)})
	if h := guard.Describe().Hooks; fmt.Sprint(h) != "[before_agent before_model after_tool]" {
		t.Errorf("guard hooks %v", h)
	}
	if h := plug.Describe().Hooks; fmt.Sprint(h) != "[before_agent before_tool on_user_message before_run on_event after_run]" {
		t.Errorf("plugin hooks %v", h)
	}
	cb := guard.Callbacks()
	w := testkit.NewWorldWith(t, testkit.Options{Memory: memory.NewInMemoryService()},
		engine.LlmAgentConfig{Tools: tools.Tools(), BeforeAgent: cb.BeforeAgent, BeforeModel: cb.BeforeModel, AfterTool: cb.AfterTool},
		[]callbacks.Plugin{plug.Plugin()},
		testkit.Calls(testkit.Call("c1", "context_tour", map[string]any{"note": "quiet"})), testkit.Reply("ok"),
		testkit.Reply("fine"))

	evs := w.MustTurn("please BLOCK this")
	if len(evs) != 1 || testkit.TextOf(evs[0]) != "blocked by policy" {
		t.Fatalf("BLOCK: events\n%s", testkit.Views(evs))
	}
	evs = w.MustTurn("tour")
	if len(evs) != 3 {
		t.Fatalf("events:\n%s", testkit.Views(evs))
	}
	got := response(t, evs, 1)
	if !strings.Contains(got, `"read_back":"QUIET"`) || !strings.Contains(got, `"checked_by":"context_tour"`) || !strings.Contains(got, `"n":1`) {
		t.Errorf("tool result through before_tool and after_tool: %s", got)
	}
	if reqs := w.Model.Requests(); len(reqs) == 0 || reqs[0].Config == nil || reqs[0].Config.Temperature == nil || *reqs[0].Config.Temperature != 0.25 {
		t.Errorf("before_model's request change did not reach the model")
	}
	if v, ok := w.Session().StateValue("checked"); !ok || fmt.Sprint(v) != "1" {
		t.Errorf("checked = %v, %v", v, ok)
	}
	for i, ev := range evs {
		if ev.CustomMetadata["seen_by"] != "shout" {
			t.Errorf("event %d: customMetadata %v, want on_event's mark", i, ev.CustomMetadata)
		}
	}
	evs = w.MustTurn("lower:QUIET PLEASE")
	reqs := w.Model.Requests()
	last := reqs[len(reqs)-1].Contents
	if len(evs) != 1 || last[len(last)-1].Parts[0].Text != "quiet please" {
		t.Errorf("on_user_message's rewrite did not reach the model: %+v", last[len(last)-1].Parts[0])
	}
	for _, line := range []string{"WARN blocked for agent root", "INFO run of u starts", "INFO agent root starts", "INFO agent root begins", "INFO run e-"} {
		if !strings.Contains(logs.all(), line) {
			t.Errorf("log lines lack %q:\n%s", line, logs.all())
		}
	}
}

// TestBuildErrors: what cannot become a module fails the build with what
// is wrong: a Node built-in import, an exception at the top level, a
// host function called at build time, a module declaring nothing, a bad
// tool name.
func TestBuildErrors(t *testing.T) {
	if _, err := modbuild.FindTSRuntime(""); err != nil {
		missing(t, "%v", err)
	}
	dir := t.TempDir()
	for name, c := range map[string]struct{ src, want string }{
		"node.ts":     {`import { readFileSync } from "fs"; readFileSync("x");`, "Node's built-in modules"},
		"throws.ts":   {`import { tool } from "adkhost"; throw new Error("top-level trouble");`, "Error: top-level trouble"},
		"hostcall.ts": {`import { log, tool } from "adkhost"; import { State } from "adkhost"; new State().get("x");`, "not available while the module is built"},
		"nothing.js":  {`export const x = 1;`, "the module declares nothing"},
		"empty.ts":    {`import { capabilities } from "adkhost"; capabilities("state");`, "declares no tool, callback or plugin"},
		"badname.ts":  {`import { tool } from "adkhost"; tool({name: "9 lives"}, () => 1);`, `tool name "9 lives"`},
	} {
		src := filepath.Join(dir, name)
		if err := os.WriteFile(src, []byte(c.src), 0o644); err != nil {
			t.Fatal(err)
		}
		err := modbuild.Build(context.Background(), modbuild.Options{Source: src, Output: filepath.Join(dir, name+".wasm")})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, c.want)
		}
		if _, err := os.Stat(filepath.Join(dir, name+".wasm")); err == nil {
			t.Errorf("%s: a module was written", name)
		}
	}
}

// TestFolderWithDependencies: a folder builds from its index.ts, with its
// sibling files and a package from a --path directory bundled in; each
// instance draws its own Math.random sequence under the random grant (the
// runtime reseeds on the first call), and the same one without it.
func TestFolderWithDependencies(t *testing.T) {
	if _, err := modbuild.FindTSRuntime(""); err != nil {
		missing(t, "%v", err)
	}
	out := filepath.Join(t.TempDir(), "m.wasm")
	var log bytes.Buffer
	if err := modbuild.Build(context.Background(), modbuild.Options{Source: "tests/folder", Output: out, Stderr: &log}); err == nil ||
		!strings.Contains(err.Error(), `Could not resolve "shout"`) {
		t.Errorf("without --path: %v", err)
	}
	if err := modbuild.Build(context.Background(), modbuild.Options{Source: "tests/folder", Paths: []string{"tests/deps"}, Output: out, Stderr: &log}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(t)
	m := load(t, rt, wasm, host.ModuleConfig{})
	if d := m.Describe(); d.Name != "folder" || len(d.Tools) != 2 || d.Tools[0].Name != "hi" {
		t.Fatalf("describe: %+v", d)
	}
	w := testkit.NewWorld(t, engine.LlmAgentConfig{Tools: m.Tools()}, nil,
		testkit.Calls(testkit.Call("c1", "hi", map[string]any{"name": "ada"})), testkit.Reply("ok"))
	if got := response(t, w.MustTurn("hi"), 1); got != `{"result":"HELLO ADA!"}` {
		t.Errorf("hi: %s", got)
	}

	// The same folder asking for the random capability (module build
	// --capabilities random).
	randOut := filepath.Join(t.TempDir(), "r.wasm")
	if err := modbuild.Build(context.Background(), modbuild.Options{Source: "tests/folder", Paths: []string{"tests/deps"},
		Capabilities: []string{"random"}, Output: randOut, Stderr: &log}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	randWasm, err := os.ReadFile(randOut)
	if err != nil {
		t.Fatal(err)
	}
	draw := func(wasm []byte, grants sandbox.Grants, owner string) string {
		sm, err := rt.Load(context.Background(), wasm)
		if err != nil {
			t.Fatal(err)
		}
		p, err := rt.Pool(context.Background(), sm, sandbox.PoolConfig{Owner: owner, Grants: grants})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close(context.Background())
		out, err := sandbox.Invoke[abi.ToolCallOutput](context.Background(), p, abi.HookToolCall, &abi.ToolCallInput{Tool: "rand"}, nil)
		if err != nil || out.Error != "" {
			t.Fatalf("rand: %v %+v", err, out)
		}
		return fmt.Sprint(out.Result)
	}
	if a, b := draw(randWasm, sandbox.Grants{Random: true}, "r1"), draw(randWasm, sandbox.Grants{Random: true}, "r2"); a == b {
		t.Errorf("two instances with the random grant drew the same number %s", a)
	}
	if a, b := draw(wasm, sandbox.Grants{}, "d1"), draw(wasm, sandbox.Grants{}, "d2"); a != b {
		t.Errorf("without the random grant the instances drew %s and %s, want the same", a, b)
	}
}

// TestZodParameters: adk-js FunctionTools imported from "@google/adk",
// with zod 4 schemas (zod bundled from a --path directory): the tool
// declares the schema's JSON Schema for
// its input, and parse() fills defaults and refuses bad arguments before
// the function runs.
func TestZodParameters(t *testing.T) {
	rt, err := modbuild.FindTSRuntime("")
	if err != nil {
		missing(t, "%v", err)
	}
	out := filepath.Join(t.TempDir(), "m.wasm")
	var log bytes.Buffer
	if err := modbuild.Build(context.Background(), modbuild.Options{Source: "tests/zod_tool.ts", Output: out,
		Paths: []string{filepath.Join(rt.Dir, "tools", "node_modules")}, Stderr: &log}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	m := load(t, newRuntime(t), wasm, host.ModuleConfig{})
	if tools := m.Describe().Tools; len(tools) != 2 || tools[0].LongRunning || tools[1].Name != "approve" || !tools[1].LongRunning {
		t.Errorf("tools: %+v", tools)
	}
	var decl any // keys sorted
	raw, _ := json.Marshal(m.Describe().Tools[0].Parameters)
	json.Unmarshal(raw, &decl)
	params, _ := json.Marshal(decl)
	const want = `{"properties":{"city":{"description":"the city","type":"string"},"days":{"default":1,"maximum":3,"minimum":1,"type":"integer"}},"required":["city"],"type":"object"}`
	if string(params) != want {
		t.Errorf("parameters\n got %s\nwant %s", params, want)
	}
	w := testkit.NewWorld(t, engine.LlmAgentConfig{Tools: m.Tools()}, nil,
		testkit.Calls(testkit.Call("c1", "get_weather", map[string]any{"city": "Rome"})), testkit.Reply("ok"),
		testkit.Calls(testkit.Call("c2", "get_weather", map[string]any{"city": "Rome", "days": 9})))
	if got := response(t, w.MustTurn("rome"), 1); got != `{"city":"Rome","days":1}` {
		t.Errorf("get_weather: %s", got)
	}
	if _, err := w.Turn("too far"); err == nil || !strings.Contains(err.Error(), "ZodError") || !strings.Contains(err.Error(), "too_big") {
		t.Errorf("days 9: run error %v, want zod's", err)
	}
}
