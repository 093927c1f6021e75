package python_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/host"
	"github.com/adkhost/adkhost/internal/testkit"
	"github.com/adkhost/adkhost/modbuild"
	"github.com/adkhost/adkhost/sandbox"
)

func buildModule(t testing.TB, src string) []byte {
	t.Helper()
	if _, err := modbuild.FindPythonRuntime(""); err != nil {
		missing(t, "%v", err)
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
	return b
}

// TestContextOverHostFunctions: google-adk's ToolContext API in a Python
// tool reaches the session (state with its prefix rules), the artifact and
// memory services, config values and the event's actions, behind the
// module's grants; an exception fails the tool.
func TestContextOverHostFunctions(t *testing.T) {
	wasm := buildModule(t, "tests/context_tools.py")
	ctx := context.Background()
	rt, err := sandbox.New(ctx, sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	m, err := host.Load(ctx, rt, wasm, host.ModuleConfig{Owner: "t", Grants: sandbox.Grants{
		State: true, Actions: true, Artifacts: true, Memory: true, Config: map[string]string{"greeting": "hello"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	w := testkit.NewWorldWith(t, testkit.Options{Memory: memory.NewInMemoryService()}, engine.LlmAgentConfig{Tools: m.Tools()}, nil,
		testkit.Calls(testkit.Call("c1", "context_tour", map[string]any{"note": "tea at five"})), testkit.Reply("ok"),
		testkit.Calls(testkit.Call("c2", "finish", map[string]any{})),
		testkit.Calls(testkit.Call("c3", "needs_ok", map[string]any{"amount": 5})), testkit.Reply("asked"),
		testkit.Calls(testkit.Call("c4", "fails", map[string]any{"x": 0})),
		testkit.Calls(testkit.Call("c5", "lazy_imports", map[string]any{"when": "2026-11-24"})), testkit.Reply("ok"))

	evs := w.MustTurn("tour")
	if len(evs) != 3 {
		t.Fatalf("events:\n%s", testkit.Views(evs))
	}
	got, _ := json.Marshal(evs[1].FunctionResponses()[0].Response)
	want := `{"artifact":{"absent":null,"names":["notes.txt"],"text":"tea at five","version":0},` +
		`"deleted":null,"greeting":"hello","has_note":true,"ids":["c1","root","u"],"memories":0,"missing":"default",` +
		`"read_back":"tea at five","user_write":"state_set: DENIED (the module needs the 'state' capability, asked for with adkhost.capabilities('state') or ` +
		"`module build --capabilities state`" + `, and granted by the app)"}`
	if string(got) != want {
		t.Errorf("context_tour:\n got %s\nwant %s", got, want)
	}
	delta, _ := json.Marshal(evs[1].Actions.StateDelta)
	// temp: keys live for the invocation only: the stored event has none.
	if string(delta) != `{"note":"tea at five"}` {
		t.Errorf("stateDelta %s", delta)
	}
	if v := evs[1].Actions.ArtifactDelta["notes.txt"]; v != 0 {
		t.Errorf("artifactDelta %v", evs[1].Actions.ArtifactDelta)
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

	_, err = w.Turn("fail")
	if err == nil || !strings.Contains(err.Error(), "ZeroDivisionError: integer division or modulo by zero") {
		t.Errorf("fails: run error %v, want the ZeroDivisionError", err)
	}

	// Imports at run time: preloaded modules only (sdk/python/README.md,
	// known limits); nothing is read from a filesystem.
	evs = w.MustTurn("lazy")
	got, _ = json.Marshal(evs[1].FunctionResponses()[0].Response)
	if want := `{"parsed":"24/11/2026","uuid_len":36,"wave":"ModuleNotFoundError"}`; string(got) != want {
		t.Errorf("lazy_imports:\n got %s\nwant %s", got, want)
	}
}

// TestFolderWithDependencies: a folder builds with --main, its sibling
// modules and a --path dependency imported at build time and called at run
// time; without --main the folder's two files are ambiguous.
func TestFolderWithDependencies(t *testing.T) {
	if _, err := modbuild.FindPythonRuntime(""); err != nil {
		missing(t, "%v", err)
	}
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "m.wasm")
	if err := modbuild.Build(ctx, modbuild.Options{Source: "tests/folder", Output: out}); err == nil || !strings.Contains(err.Error(), "--main") {
		t.Errorf("folder of two files without --main: %v", err)
	}
	var log bytes.Buffer
	if err := modbuild.Build(ctx, modbuild.Options{Source: "tests/folder", Main: "main", Paths: []string{"tests/site"}, Output: out, Stderr: &log}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := sandbox.New(ctx, sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	m, err := host.Load(ctx, rt, wasm, host.ModuleConfig{Owner: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	if d := m.Describe(); d.Name != "folder" || len(d.Tools) != 1 || d.Tools[0].Name != "hi" {
		t.Fatalf("describe: %+v", d)
	}
	w := testkit.NewWorld(t, engine.LlmAgentConfig{Tools: m.Tools()}, nil,
		testkit.Calls(testkit.Call("c1", "hi", map[string]any{"name": "ada"})), testkit.Reply("ok"))
	evs := w.MustTurn("hi")
	if got, _ := json.Marshal(evs[1].FunctionResponses()[0].Response); string(got) != `{"result":"HELLO ADA!"}` {
		t.Errorf("hi: %s", got)
	}
}
