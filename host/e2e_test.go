package host_test

// End-to-end: the test module's tools, callbacks and plugin run inside the
// real engine (engine.NewRunner, the scripted model, the in-memory session
// service), and the events they leave are compared with what native Go
// tools and callbacks leave.

import (
	"bytes"
	"context"
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
	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/model/scripted"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
	"github.com/adkhost/adkhost/host"
	"github.com/adkhost/adkhost/sandbox"
)

// world is one runner over a fresh in-memory session service.
type world struct {
	t        *testing.T
	runner   *engine.Runner
	sessions *session.InMemoryService
	model    *scripted.Model
}

func newWorld(t *testing.T, cfg engine.LlmAgentConfig, plugins []callbacks.Plugin, script ...scripted.Step) *world {
	t.Helper()
	w := &world{t: t, sessions: session.NewInMemoryService(), model: scripted.FromSteps("scripted-model", script...)}
	cfg.Name = "root"
	cfg.Model = w.model
	a, err := engine.NewLlmAgent(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.runner, err = engine.NewRunner(engine.RunnerConfig{
		AppName: "app", Agent: a, Sessions: w.sessions, Artifacts: artifact.NewInMemoryService(),
		Plugins: plugins, AutoCreateSession: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// turn runs one user message and returns the events and the run's error.
func (w *world) turn(text string) ([]*session.Event, error) {
	var evs []*session.Event
	msg := &genai.Content{Role: "user", Parts: []*genai.Part{{Text: text}}}
	for ev, err := range w.runner.Run(context.Background(), "u", "s1", msg, engine.RunConfig{}) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

func (w *world) mustTurn(text string) []*session.Event {
	w.t.Helper()
	evs, err := w.turn(text)
	if err != nil {
		w.t.Fatalf("turn %q: %v\nevents: %s", text, err, views(evs))
	}
	return evs
}

func (w *world) session() *session.Session {
	w.t.Helper()
	s, err := w.sessions.Get(context.Background(), &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s1"})
	if err != nil {
		w.t.Fatal(err)
	}
	return s
}

// requests is the JSON of the requests the model received.
func (w *world) requests() string {
	b, _ := json.Marshal(w.model.Requests())
	return string(b)
}

// views are events' JSON without what is random: ids and timestamps.
func views(evs []*session.Event) string {
	var out []string
	for _, ev := range evs {
		b, _ := json.Marshal(ev)
		var m map[string]any
		json.Unmarshal(b, &m)
		delete(m, "id")
		delete(m, "invocationId")
		delete(m, "timestamp")
		b, _ = json.Marshal(m)
		out = append(out, string(b))
	}
	return strings.Join(out, "\n")
}

func reply(text string) scripted.Step {
	return scripted.Step{Response: &model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{{Text: text}}}}}
}

func calls(fcs ...*genai.FunctionCall) scripted.Step {
	c := &genai.Content{Role: "model"}
	for _, fc := range fcs {
		c.Parts = append(c.Parts, &genai.Part{FunctionCall: fc})
	}
	return scripted.Step{Response: &model.Response{Content: c}}
}

func call(id, name string, args map[string]any) *genai.FunctionCall {
	return &genai.FunctionCall{ID: id, Name: name, Args: args}
}

func textOf(ev *session.Event) string {
	if ev == nil || ev.Content == nil {
		return ""
	}
	var s string
	for _, p := range ev.Content.Parts {
		s += p.Text
	}
	return s
}

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
		return []scripted.Step{calls(
			call("call-1", "remember", map[string]any{"key": "user:color", "value": map[string]any{"shade": "blue", "n": 2}}),
			call("call-2", "remember", map[string]any{"key": "visits", "value": 3}),
		)}
	}
	run := func(tl tool.Tool) (*world, string) {
		w := newWorld(t, engine.LlmAgentConfig{Instruction: "Remember things.", Tools: []tool.Tool{tl}}, nil, script()...)
		return w, views(w.mustTurn("remember my color"))
	}
	nw, native := run(nativeTool)
	gw, guest := run(guestTool)
	if guest != native {
		t.Errorf("events differ:\nguest:\n%s\nnative:\n%s", guest, native)
	}
	if g, n := canon(t, gw.session().State()), canon(t, nw.session().State()); g != n {
		t.Errorf("state differs: guest %s, native %s", g, n)
	}
	if g, n := gw.requests(), nw.requests(); g != n {
		t.Errorf("requests differ:\nguest:  %s\nnative: %s", g, n)
	}
	// And the guest's run did what it should.
	if got, want := canon(t, gw.session().State()), `{"user:color":{"n":2,"shade":"blue"},"visits":3}`; got != want {
		t.Errorf("state = %s, want %s", got, want)
	}
	evs := gw.session().Events()
	last := evs[len(evs)-1]
	if !last.Actions.SkipSummarization || len(last.FunctionResponses()) != 2 || len(evs) != 3 {
		t.Errorf("events:\n%s", views(evs))
	}
}

// TestBeforeModelBlocks: a guest before_model answers instead of the model
// when the request contains "BLOCK".
func TestBeforeModelBlocks(t *testing.T) {
	t.Parallel()
	m := load(t, host.ModuleConfig{})
	w := newWorld(t, engine.LlmAgentConfig{BeforeModel: m.Callbacks().BeforeModel}, nil, reply("Hello!"), reply("unused"))
	if evs := w.mustTurn("hi"); len(evs) != 1 || textOf(evs[0]) != "Hello!" {
		t.Fatalf("first turn:\n%s", views(evs))
	}
	evs := w.mustTurn("please BLOCK this")
	want := `{"actions":{},"author":"root","content":{"parts":[{"text":"Request blocked by policy."}],"role":"model"},"nodeInfo":{"path":"root@1"}}`
	if got := views(evs); got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
	if n := len(w.model.Requests()); n != 1 {
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
		return []scripted.Step{calls(call("c1", "echo", map[string]any{"s": "x"})), reply("ok")}
	}
	plain := newWorld(t, cfg(), nil, script()...)
	plain.mustTurn("be BRIEF")
	c := cfg()
	c.BeforeModel = m.Callbacks().BeforeModel
	guarded := newWorld(t, c, nil, script()...)
	guarded.mustTurn("be BRIEF")

	want := plain.model.Requests()
	for _, r := range want {
		si := r.Config.SystemInstruction
		si.Parts = append(si.Parts, &genai.Part{Text: "Be brief."})
	}
	wb, _ := json.Marshal(want)
	if got := guarded.requests(); got != string(wb) {
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
	w := newWorld(t, engine.LlmAgentConfig{Tools: []tool.Tool{echo}, BeforeTool: m.Callbacks().BeforeTool}, nil,
		calls(call("c1", "echo", map[string]any{"q": "weather", "password": "hunter2"})), reply("done"))
	evs := w.mustTurn("log me in")
	if want := map[string]any{"q": "weather", "redacted": true}; canon(t, got) != canon(t, want) {
		t.Errorf("tool args = %v, want %v", got, want)
	}
	resp := evs[1].FunctionResponses()
	if len(resp) != 1 || canon(t, resp[0].Response) != `{"q":"weather","redacted":true}` {
		t.Errorf("events:\n%s", views(evs))
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
	w := newWorld(t, engine.LlmAgentConfig{Tools: m.Tools(), OnToolError: []callbacks.OnToolError{onErr}}, nil,
		calls(call("c1", "trap", nil)), reply("That failed."),
		calls(call("c2", "echo", map[string]any{"a": 1})), reply("done"))

	evs := w.mustTurn("trap please")
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
		t.Errorf("events:\n%s", views(evs))
	}

	evs = w.mustTurn("echo please")
	if r := evs[1].FunctionResponses(); len(r) != 1 || canon(t, r[0].Response) != `{"a":1}` || textOf(evs[2]) != "done" {
		t.Errorf("events:\n%s", views(evs))
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
	w := newWorld(t, engine.LlmAgentConfig{Tools: m.Tools()}, nil,
		calls(call("c1", "spin", nil)),
		calls(call("c2", "echo", map[string]any{"ok": true})), reply("done"))
	evs, err := w.turn("spin")
	if !errors.Is(err, sandbox.ErrTimeout) {
		t.Fatalf("err = %v, want a timeout", err)
	}
	last := evs[len(evs)-1]
	if last.ErrorCode != "Error" || !strings.HasPrefix(last.ErrorMessage, `module "testguest" hook tool_call (tool "spin"): `) ||
		!strings.Contains(last.ErrorMessage, "call timed out") {
		t.Errorf("error event: %s", views([]*session.Event{last}))
	}
	if evs := w.mustTurn("again"); textOf(evs[len(evs)-1]) != "done" {
		t.Errorf("events:\n%s", views(evs))
	}
}

// TestGuestErrorRecoveredByGuest: a tool's "error" output goes through the
// module's own on_tool_error, which answers with a result.
func TestGuestErrorRecoveredByGuest(t *testing.T) {
	t.Parallel()
	m := load(t, host.ModuleConfig{})
	w := newWorld(t, engine.LlmAgentConfig{Tools: m.Tools(), OnToolError: m.Callbacks().OnToolError}, nil,
		calls(call("c1", "fail", nil)), reply("ok"))
	evs := w.mustTurn("fail")
	want := `{"recovered":"module \"testguest\" hook tool_call (tool \"fail\"): guest reported an error: no luck"}`
	if r := evs[1].FunctionResponses(); len(r) != 1 || canon(t, r[0].Response) != want {
		t.Errorf("events:\n%s", views(evs))
	}
}

// TestLongRunningTool: a long-running guest tool without a result leaves
// no function response; the call is marked long-running.
func TestLongRunningTool(t *testing.T) {
	t.Parallel()
	m := load(t, host.ModuleConfig{})
	w := newWorld(t, engine.LlmAgentConfig{Tools: m.Tools()}, nil, calls(call("c1", "later", nil)))
	evs := w.mustTurn("start it")
	if len(evs) != 1 || len(evs[0].LongRunningToolIDs) != 1 || evs[0].LongRunningToolIDs[0] != "c1" {
		t.Errorf("events:\n%s", views(evs))
	}
}

// TestAgentAndModelCallbacks: before_agent, after_agent, after_model and
// on_model_error of the module inside the runner.
func TestAgentAndModelCallbacks(t *testing.T) {
	t.Parallel()
	m := load(t, host.ModuleConfig{})
	cb := m.Callbacks()
	cfg := engine.LlmAgentConfig{BeforeAgent: cb.BeforeAgent, AfterAgent: cb.AfterAgent, AfterModel: cb.AfterModel, OnModelError: cb.OnModelError}
	w := newWorld(t, cfg, nil,
		reply("hi"), reply("the secret is 42"),
		scripted.Step{Err: errors.New("quota exceeded")})

	var got []string
	for _, msg := range []string{"skip agent", "after agent", "tell me", "again"} {
		for _, ev := range w.mustTurn(msg) {
			got = append(got, ev.Author+": "+textOf(ev))
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
	w := newWorld(t, engine.LlmAgentConfig{}, []callbacks.Plugin{m.Plugin()}, reply("I will mark me."))
	evs := w.mustTurn("shout hello")
	if len(evs) != 1 || evs[0].CustomMetadata["marked"] != true {
		t.Errorf("events:\n%s", views(evs))
	}
	stored := w.session().Events()
	if len(stored) != 2 || textOf(stored[0]) != "SHOUT HELLO" || stored[1].CustomMetadata["marked"] != true {
		t.Errorf("stored events:\n%s", views(stored))
	}
	reqs := w.model.Requests()
	if len(reqs) != 1 || reqs[0].Contents[0].Parts[0].Text != "SHOUT HELLO" {
		t.Errorf("requests: %s", w.requests())
	}

	evs = w.mustTurn("stop")
	if len(evs) != 1 || evs[0].Author != "model" || textOf(evs[0]) != "stopped by guest" {
		t.Errorf("events:\n%s", views(evs))
	}
	if n := len(w.model.Requests()); n != 1 {
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
	w := newWorld(t, engine.LlmAgentConfig{}, []callbacks.Plugin{m.Plugin()}, scripted.Step{Err: modelErr})
	_, err := w.turn("hello")
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
