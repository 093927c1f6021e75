package host_test

// End-to-end: the test module's tools, callbacks and plugin run inside the
// real engine (engine.NewRunner, the scripted model, the in-memory session
// service), and the events they leave are compared with what native Go
// tools and callbacks leave.

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

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

// TestToolMatchesNativeTool runs the same turn twice, once with the guest's
// "remember" tool and once with its equivalent in Go: two parallel calls
// that write state and skip summarization. The events, the session state
// and the requests the model received must be identical.
func TestToolMatchesNativeTool(t *testing.T) {
	t.Parallel()
	m := load(t, host.ModuleConfig{WriteUserState: true})
	guestTool := findTool(t, m, "remember")
	nativeTool, err := tool.NewFunction(tool.FunctionConfig{
		Name:        "remember",
		Description: "Stores a value in session state and ends the turn.",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{
			"key": map[string]any{"type": "string"}, "value": map[string]any{}}, "required": []any{"key", "value"}},
		Fn: func(ctx callbacks.ToolContext, args map[string]any) (any, error) {
			key := args["key"].(string)
			ctx.State().Set(key, args["value"])
			ctx.Actions().SkipSummarization = true
			return map[string]any{"remembered": key}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	script := func() []scripted.Step {
		return []scripted.Step{testkit.Calls(
			testkit.Call("call-1", "remember", map[string]any{"key": "user:color", "value": map[string]any{"shade": "blue", "n": 2}}),
			testkit.Call("call-2", "remember", map[string]any{"key": "visits", "value": 3}),
		)}
	}
	run := func(tl tool.Tool) (*testkit.World, string) {
		w := testkit.NewWorld(t, engine.LlmAgentConfig{Instruction: "Remember things.", Tools: []tool.Tool{tl}}, nil, script()...)
		return w, testkit.Views(w.MustTurn("remember my color"))
	}
	nw, native := run(nativeTool)
	gw, guest := run(guestTool)
	if guest != native {
		t.Errorf("events differ:\nguest:\n%s\nnative:\n%s", guest, native)
	}
	if g, n := canon(t, gw.Session().State()), canon(t, nw.Session().State()); g != n {
		t.Errorf("state differs: guest %s, native %s", g, n)
	}
	if g, n := gw.Requests(), nw.Requests(); g != n {
		t.Errorf("requests differ:\nguest:  %s\nnative: %s", g, n)
	}
	// And the guest's run did what it should.
	if got, want := canon(t, gw.Session().State()), `{"user:color":{"n":2,"shade":"blue"},"visits":3}`; got != want {
		t.Errorf("state = %s, want %s", got, want)
	}
	evs := gw.Session().Events()
	last := evs[len(evs)-1]
	if !last.Actions.SkipSummarization || len(last.FunctionResponses()) != 2 || len(evs) != 3 {
		t.Errorf("events:\n%s", testkit.Views(evs))
	}
}

// TestBeforeModelBlocks: a guest before_model answers instead of the model
// when the request contains "BLOCK".
func TestBeforeModelBlocks(t *testing.T) {
	t.Parallel()
	m := load(t, host.ModuleConfig{})
	w := testkit.NewWorld(t, engine.LlmAgentConfig{BeforeModel: m.Callbacks().BeforeModel}, nil, testkit.Reply("Hello!"), testkit.Reply("unused"))
	if evs := w.MustTurn("hi"); len(evs) != 1 || testkit.TextOf(evs[0]) != "Hello!" {
		t.Fatalf("first turn:\n%s", testkit.Views(evs))
	}
	evs := w.MustTurn("please BLOCK this")
	want := `{"actions":{},"author":"root","content":{"parts":[{"text":"Request blocked by policy."}],"role":"model"},"nodeInfo":{"path":"root@1"}}`
	if got := testkit.Views(evs); got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
	if n := len(w.Model.Requests()); n != 1 {
		t.Errorf("model called %d times, want 1", n)
	}
}

// TestBeforeModelReplacesRequest: a guest before_model that adds an
// instruction changes nothing else of the request: contents, tool
// declarations and the config fields the ABI does not carry all reach the
// model as they would without it.
func TestBeforeModelReplacesRequest(t *testing.T) {
	t.Parallel()
	m := load(t, host.ModuleConfig{})
	echo, _ := tool.NewFunction(tool.FunctionConfig{Name: "echo", Description: "Echoes.",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"s": map[string]any{"type": "string"}}},
		Fn:         func(_ callbacks.ToolContext, args map[string]any) (any, error) { return args, nil }})
	budget := int32(128)
	cfg := func() engine.LlmAgentConfig {
		return engine.LlmAgentConfig{
			Instruction: "Answer questions.",
			Tools:       []tool.Tool{echo},
			GenerateContentConfig: &genai.GenerateContentConfig{
				Temperature:     genai.Ptr[float32](0.3),
				TopK:            genai.Ptr[float32](40),
				MaxOutputTokens: 256,
				StopSequences:   []string{"END"},
				ServiceTier:     genai.ServiceTier("flex"), // not carried by the ABI
				SafetySettings: []*genai.SafetySetting{{Category: genai.HarmCategoryHarassment,
					Threshold: genai.HarmBlockThresholdBlockOnlyHigh}},
				ThinkingConfig: &genai.ThinkingConfig{ThinkingBudget: &budget},
			},
		}
	}
	script := func() []scripted.Step {
		return []scripted.Step{testkit.Calls(testkit.Call("c1", "echo", map[string]any{"s": "x"})), testkit.Reply("ok")}
	}
	plain := testkit.NewWorld(t, cfg(), nil, script()...)
	plain.MustTurn("be BRIEF")
	c := cfg()
	c.BeforeModel = m.Callbacks().BeforeModel
	guarded := testkit.NewWorld(t, c, nil, script()...)
	guarded.MustTurn("be BRIEF")

	want := plain.Model.Requests()
	for _, r := range want {
		si := r.Config.SystemInstruction
		si.Parts = append(si.Parts, &genai.Part{Text: "Be brief."})
	}
	wb, _ := json.Marshal(want)
	if got := guarded.Requests(); got != string(wb) {
		t.Errorf("requests:\n got %s\nwant %s", got, wb)
	}
	if !strings.Contains(string(wb), `"serviceTier":"flex"`) || !strings.Contains(string(wb), `"temperature":0.3`) {
		t.Errorf("the test request lacks the config it means to check: %s", wb)
	}
}

// TestBeforeToolReplacesArgs: a guest before_tool replaces the arguments a
// native tool receives.
func TestBeforeToolReplacesArgs(t *testing.T) {
	t.Parallel()
	m := load(t, host.ModuleConfig{})
	var got map[string]any
	echo, _ := tool.NewFunction(tool.FunctionConfig{Name: "echo", Description: "Echoes.",
		Fn: func(_ callbacks.ToolContext, args map[string]any) (any, error) { got = args; return args, nil }})
	w := testkit.NewWorld(t, engine.LlmAgentConfig{Tools: []tool.Tool{echo}, BeforeTool: m.Callbacks().BeforeTool}, nil,
		testkit.Calls(testkit.Call("c1", "echo", map[string]any{"q": "weather", "password": "hunter2"})), testkit.Reply("done"))
	evs := w.MustTurn("log me in")
	if want := map[string]any{"q": "weather", "redacted": true}; canon(t, got) != canon(t, want) {
		t.Errorf("tool args = %v, want %v", got, want)
	}
	resp := evs[1].FunctionResponses()
	if len(resp) != 1 || canon(t, resp[0].Response) != `{"q":"weather","redacted":true}` {
		t.Errorf("events:\n%s", testkit.Views(evs))
	}
}

// TestTrapIsAToolError: a guest tool that traps fails with an error naming
// the module and hook, which on_tool_error sees; the next call runs on a
// fresh instance and succeeds.
func TestTrapIsAToolError(t *testing.T) {
	t.Parallel()
	m := load(t, host.ModuleConfig{})
	var mu sync.Mutex
	var seen []error
	onErr := func(_ callbacks.ToolContext, _ callbacks.Tool, _ map[string]any, err error) (map[string]any, error) {
		mu.Lock()
		seen = append(seen, err)
		mu.Unlock()
		return map[string]any{"error": err.Error()}, nil
	}
	w := testkit.NewWorld(t, engine.LlmAgentConfig{Tools: m.Tools(), OnToolError: []callbacks.OnToolError{onErr}}, nil,
		testkit.Calls(testkit.Call("c1", "trap", nil)), testkit.Reply("That failed."),
		testkit.Calls(testkit.Call("c2", "echo", map[string]any{"a": 1})), testkit.Reply("done"))

	evs := w.MustTurn("trap please")
	if len(seen) != 1 {
		t.Fatalf("on_tool_error saw %v", seen)
	}
	var he *host.Error
	if !errors.As(seen[0], &he) || he.Module != "testguest" || he.Hook != abi.HookToolCall || he.Tool != "trap" ||
		!errors.Is(seen[0], sandbox.ErrTrap) ||
		!strings.HasPrefix(seen[0].Error(), `module "testguest" hook tool_call (tool "trap"): `) ||
		!strings.Contains(seen[0].Error(), "trap!") {
		t.Fatalf("on_tool_error saw %v", seen[0])
	}
	if r := evs[1].FunctionResponses(); len(r) != 1 || r[0].Response["error"] != seen[0].Error() {
		t.Errorf("events:\n%s", testkit.Views(evs))
	}

	evs = w.MustTurn("echo please")
	if r := evs[1].FunctionResponses(); len(r) != 1 || canon(t, r[0].Response) != `{"a":1}` || testkit.TextOf(evs[2]) != "done" {
		t.Errorf("events:\n%s", testkit.Views(evs))
	}
	if s := m.Pool().Stats(); s.Discarded != 1 || s.Created != 2 {
		t.Errorf("pool stats = %+v, want one instance discarded and a fresh one", s)
	}
}

// TestTimeoutFailsTheRun: without on_tool_error, a guest that runs past its
// time limit fails the run; the error event names the module, hook and
// tool, and the next turn works. The timeout is short: making the Go
// guest's instance, slow under the race detector and load, runs under
// InitTimeout instead.
func TestTimeoutFailsTheRun(t *testing.T) {
	t.Parallel()
	m := load(t, host.ModuleConfig{Limits: sandbox.Limits{Timeout: 300 * time.Millisecond}})
	w := testkit.NewWorld(t, engine.LlmAgentConfig{Tools: m.Tools()}, nil,
		testkit.Calls(testkit.Call("c1", "spin", nil)),
		testkit.Calls(testkit.Call("c2", "echo", map[string]any{"ok": true})), testkit.Reply("done"))
	evs, err := w.Turn("spin")
	if !errors.Is(err, sandbox.ErrTimeout) {
		t.Fatalf("err = %v, want a timeout", err)
	}
	last := evs[len(evs)-1]
	if last.ErrorCode != "Error" || !strings.HasPrefix(last.ErrorMessage, `module "testguest" hook tool_call (tool "spin"): `) ||
		!strings.Contains(last.ErrorMessage, "call timed out") {
		t.Errorf("error event: %s", testkit.Views([]*session.Event{last}))
	}
	if evs := w.MustTurn("again"); testkit.TextOf(evs[len(evs)-1]) != "done" {
		t.Errorf("events:\n%s", testkit.Views(evs))
	}
}

// TestGuestErrorRecoveredByGuest: a tool's "error" output goes through the
// module's own on_tool_error, which answers with a result.
func TestGuestErrorRecoveredByGuest(t *testing.T) {
	t.Parallel()
	m := load(t, host.ModuleConfig{})
	w := testkit.NewWorld(t, engine.LlmAgentConfig{Tools: m.Tools(), OnToolError: m.Callbacks().OnToolError}, nil,
		testkit.Calls(testkit.Call("c1", "fail", nil)), testkit.Reply("ok"))
	evs := w.MustTurn("fail")
	want := `{"recovered":"module \"testguest\" hook tool_call (tool \"fail\"): guest reported an error: no luck"}`
	if r := evs[1].FunctionResponses(); len(r) != 1 || canon(t, r[0].Response) != want {
		t.Errorf("events:\n%s", testkit.Views(evs))
	}
}

// TestLongRunningTool: a long-running guest tool without a result leaves
// no function response; the call is marked long-running.
func TestLongRunningTool(t *testing.T) {
	t.Parallel()
	m := load(t, host.ModuleConfig{})
	w := testkit.NewWorld(t, engine.LlmAgentConfig{Tools: m.Tools()}, nil, testkit.Calls(testkit.Call("c1", "later", nil)))
	evs := w.MustTurn("start it")
	if len(evs) != 1 || len(evs[0].LongRunningToolIDs) != 1 || evs[0].LongRunningToolIDs[0] != "c1" {
		t.Errorf("events:\n%s", testkit.Views(evs))
	}
}

// TestPendingCallNotAnswered: the guest's after_tool answers the pending
// call of its long-running tool "later" (an approval nobody gave). In the
// real engine the hook is refused and the turn fails; no answer is stored.
func TestPendingCallNotAnswered(t *testing.T) {
	t.Parallel()
	m := load(t, host.ModuleConfig{})
	w := testkit.NewWorld(t, engine.LlmAgentConfig{Tools: m.Tools(), AfterTool: m.Callbacks().AfterTool}, nil,
		testkit.Calls(testkit.Call("c1", "later", map[string]any{"approve": true})))
	evs, err := w.Turn("start it")
	if !errors.Is(err, host.ErrNotPermitted) {
		t.Fatalf("err = %v, want ErrNotPermitted\nevents:\n%s", err, testkit.Views(evs))
	}
	for _, ev := range w.Session().Events() {
		for _, fr := range ev.FunctionResponses() {
			t.Errorf("stored a response for the pending call: %+v", fr.Response)
		}
	}
}

// TestAgentAndModelCallbacks: before_agent, after_agent, after_model and
// on_model_error of the module inside the runner.
func TestAgentAndModelCallbacks(t *testing.T) {
	t.Parallel()
	m := load(t, host.ModuleConfig{})
	cb := m.Callbacks()
	cfg := engine.LlmAgentConfig{BeforeAgent: cb.BeforeAgent, AfterAgent: cb.AfterAgent, AfterModel: cb.AfterModel, OnModelError: cb.OnModelError}
	w := testkit.NewWorld(t, cfg, nil,
		testkit.Reply("hi"), testkit.Reply("the secret is 42"),
		scripted.Step{Err: errors.New("quota exceeded")})

	var got []string
	for _, msg := range []string{"skip agent", "after agent", "tell me", "again"} {
		for _, ev := range w.MustTurn(msg) {
			got = append(got, ev.Author+": "+testkit.TextOf(ev))
		}
	}
	want := []string{
		"root: skipped by guest",
		"root: hi", "root: added by guest",
		"root: [redacted]",
		"root: fallback: quota exceeded",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestPlugin: the module as a runner plugin rewrites the user's message
// before it is stored, marks an event, and ends a run early; its other
// hooks run on every agent, model call and event without changing them.
func TestPlugin(t *testing.T) {
	t.Parallel()
	m := load(t, host.ModuleConfig{})
	w := testkit.NewWorld(t, engine.LlmAgentConfig{}, []callbacks.Plugin{m.Plugin()}, testkit.Reply("I will mark me."))
	evs := w.MustTurn("shout hello")
	if len(evs) != 1 || evs[0].CustomMetadata["marked"] != true {
		t.Errorf("events:\n%s", testkit.Views(evs))
	}
	stored := w.Session().Events()
	if len(stored) != 2 || testkit.TextOf(stored[0]) != "SHOUT HELLO" || stored[1].CustomMetadata["marked"] != true {
		t.Errorf("stored events:\n%s", testkit.Views(stored))
	}
	reqs := w.Model.Requests()
	if len(reqs) != 1 || reqs[0].Contents[0].Parts[0].Text != "SHOUT HELLO" {
		t.Errorf("requests: %s", w.Requests())
	}

	evs = w.MustTurn("stop")
	if len(evs) != 1 || evs[0].Author != "model" || testkit.TextOf(evs[0]) != "stopped by guest" {
		t.Errorf("events:\n%s", testkit.Views(evs))
	}
	if n := len(w.Model.Requests()); n != 1 {
		t.Errorf("model called %d times, want 1", n)
	}
}

// TestPluginErrorHooks: a model error no callback handles fails the agent
// and the run; the module as a plugin is told both (on_agent_error, then
// on_run_error), and the errors its outputs report are only logged: the
// run's error stays the model's.
func TestPluginErrorHooks(t *testing.T) {
	t.Parallel()
	var logs lockedBuffer
	m := load(t, host.ModuleConfig{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	modelErr := errors.New("unhandled quota")
	w := testkit.NewWorld(t, engine.LlmAgentConfig{}, []callbacks.Plugin{m.Plugin()}, scripted.Step{Err: modelErr})
	_, err := w.Turn("hello")
	if !errors.Is(err, modelErr) {
		t.Fatalf("err = %v, want the model's", err)
	}
	got := logs.String()
	// The engine wraps the model's error: agent "root": model call: ….
	const told = `error=agent \"root\": model call: unhandled quota"`
	agentLine := strings.Index(got, `msg="on_agent_error agent=root `+told)
	runLine := strings.Index(got, ` user=hello `+told)
	if agentLine < 0 || runLine < agentLine {
		t.Errorf("the guest was not told, in order:\n%s", got)
	}
	for _, hook := range []string{"on_agent_error", "on_run_error"} {
		if !strings.Contains(got, `level=WARN msg="notification hook failed" module=testguest hook=`+hook) ||
			!strings.Contains(got, `guest reported an error: `+hook+` refused`) {
			t.Errorf("the %s error was not logged:\n%s", hook, got)
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
