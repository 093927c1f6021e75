package host_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
	"github.com/adkhost/adkhost/host"
	"github.com/adkhost/adkhost/sandbox"
)

// canon re-encodes JSON with sorted keys, so expectations can be written
// in any order.
func canon(t *testing.T, v any) string {
	t.Helper()
	var b []byte
	switch s := v.(type) {
	case string:
		b = []byte(s)
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, b)
	}
	out, _ := json.Marshal(x)
	return string(out)
}

func findTool(t *testing.T, m *host.Module, name string) tool.Tool {
	t.Helper()
	for _, tl := range m.Tools() {
		if tl.Name() == name {
			return tl
		}
	}
	t.Fatalf("module %s has no tool %q", m.Name(), name)
	return nil
}

// probe runs the guest's probe tool with ops and returns its results.
func probe(t *testing.T, m *host.Module, ctx callbacks.ToolContext, ops string) string {
	t.Helper()
	var args map[string]any
	if err := json.Unmarshal([]byte(`{"ops":`+ops+`}`), &args); err != nil {
		t.Fatal(err)
	}
	res, err := findTool(t, m, "probe").Run(ctx, args)
	if err != nil {
		t.Fatal(err)
	}
	// A result whose keys are not sorted comes with their order.
	if or, ok := res.(tool.OrderedResult); ok {
		res = or.Value
	}
	return canon(t, res.(map[string]any)["results"])
}

// TestHostFunctions calls every host function from a guest tool and checks
// the statuses, the results, and that the effects land on the context as a
// Go tool's calls would.
func TestHostFunctions(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	m := load(t, host.ModuleConfig{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	ctx := newFakeCtx(map[string]any{"color": "blue"})
	got := probe(t, m, ctx, `[
		{"op":"state_get","arg":"color"},
		{"op":"state_get","arg":"missing"},
		{"op":"state_set","arg":"count","value":3},
		{"op":"state_get","arg":"count"},
		{"op":"state_set","arg":"temp:scratch","value":{"a":[1,true]}},
		{"op":"state_set","arg":"user:lang","value":"fr"},
		{"op":"state_delete","arg":"app:flag"},
		{"op":"state_set","arg":"app:","value":1},
		{"op":"state_delete","arg":"color"},
		{"op":"state_get","arg":"color"},
		{"op":"escalate"},
		{"op":"transfer_to_agent","arg":"helper"},
		{"op":"skip_summarization"},
		{"op":"request_confirmation","arg":"sure?","value":{"amount":5}},
		{"op":"artifact_save","arg":"notes.txt","value":{"text":"v0"}},
		{"op":"artifact_save","arg":"notes.txt","value":{"text":"v1"}},
		{"op":"artifact_load","arg":"notes.txt","version":-1},
		{"op":"artifact_load","arg":"notes.txt","version":0},
		{"op":"artifact_load","arg":"nope.txt","version":-1},
		{"op":"artifact_list"},
		{"op":"log","arg":"hello from the guest"},
		{"op":"invocation_info"},
		{"op":"config_get","arg":"greeting"},
		{"op":"config_get","arg":"nope"}
	]`)
	want := canon(t, `[
		{"op":"state_get","status":"OK","result":"blue"},
		{"op":"state_get","status":"NOT_FOUND"},
		{"op":"state_set","status":"OK"},
		{"op":"state_get","status":"OK","result":3},
		{"op":"state_set","status":"OK"},
		{"op":"state_set","status":"DENIED"},
		{"op":"state_delete","status":"DENIED"},
		{"op":"state_set","status":"INVALID_ARGUMENT"},
		{"op":"state_delete","status":"OK"},
		{"op":"state_get","status":"OK","result":null},
		{"op":"escalate","status":"OK"},
		{"op":"transfer_to_agent","status":"OK"},
		{"op":"skip_summarization","status":"OK"},
		{"op":"request_confirmation","status":"OK"},
		{"op":"artifact_save","status":"OK","result":0},
		{"op":"artifact_save","status":"OK","result":1},
		{"op":"artifact_load","status":"OK","result":{"text":"v1"}},
		{"op":"artifact_load","status":"OK","result":{"text":"v0"}},
		{"op":"artifact_load","status":"NOT_FOUND"},
		{"op":"artifact_list","status":"OK","result":["notes.txt"]},
		{"op":"log","status":"OK"},
		{"op":"invocation_info","status":"OK","result":{"appName":"app","userId":"u","sessionId":"s1","invocationId":"e-1",
			"agentName":"root","branch":"root","functionCallId":"call-1","userContent":{"role":"user","parts":[{"text":"hi"}]}}},
		{"op":"config_get","status":"OK","result":"hello"},
		{"op":"config_get","status":"NOT_FOUND"}
	]`)
	if got != want {
		t.Errorf("results:\n got %s\nwant %s", got, want)
	}

	wantActions := canon(t, `{
		"stateDelta":{"count":3,"temp:scratch":{"a":[1,true]},"color":null},
		"artifactDelta":{"notes.txt":1},
		"transferToAgent":"helper","escalate":true,"skipSummarization":true,
		"requestedToolConfirmations":{"call-1":{"hint":"sure?","confirmed":false,"payload":{"amount":5}}}
	}`)
	if got := canon(t, ctx.actions); got != wantActions {
		t.Errorf("actions:\n got %s\nwant %s", got, wantActions)
	}
	// Writes reach the session as State.Set's do.
	if v, ok := ctx.sess.StateValue("count"); !ok || v != int64(3) {
		t.Errorf("session count = %v, %v; want 3", v, ok)
	}

	var line map[string]any
	if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
		t.Fatalf("log line: %v (%q)", err, logs.String())
	}
	if line["msg"] != "hello from the guest" || line["level"] != "WARN" || line["module"] != "testguest" ||
		line["hook"] != "tool_call" || line["invocation"] != "e-1" {
		t.Errorf("log line = %v", line)
	}
}

// TestStateScopeGrants: user: and app: writes follow the module config.
func TestStateScopeGrants(t *testing.T) {
	t.Parallel()
	m := load(t, host.ModuleConfig{WriteUserState: true, WriteAppState: true})
	ctx := newFakeCtx(nil)
	got := probe(t, m, ctx, `[
		{"op":"state_set","arg":"user:lang","value":"fr"},
		{"op":"state_delete","arg":"app:flag"}
	]`)
	if want := canon(t, `[{"op":"state_set","status":"OK"},{"op":"state_delete","status":"OK"}]`); got != want {
		t.Errorf("results:\n got %s\nwant %s", got, want)
	}
	if got, want := canon(t, ctx.actions.StateDelta), `{"app:flag":null,"user:lang":"fr"}`; got != want {
		t.Errorf("delta = %s, want %s", got, want)
	}
}

// TestUserArtifactScope: a "user:" artifact is the user's, shared by every
// session as "user:" state is: saving one needs WriteUserState as that
// state does, while loading it and session artifacts need Artifacts
// alone.
func TestUserArtifactScope(t *testing.T) {
	t.Parallel()
	ops := `[
		{"op":"artifact_save","arg":"user:profile.txt","value":{"text":"forged"}},
		{"op":"artifact_save","arg":"notes.txt","value":{"text":"mine"}}
	]`
	ctx := newFakeCtx(nil)
	got := probe(t, load(t, host.ModuleConfig{}), ctx, ops)
	if want := canon(t, `[{"op":"artifact_save","status":"DENIED"},{"op":"artifact_save","status":"OK","result":0}]`); got != want {
		t.Errorf("without WriteUserState:\n got %s\nwant %s", got, want)
	}
	if got, want := canon(t, ctx.actions.ArtifactDelta), `{"notes.txt":0}`; got != want {
		t.Errorf("artifact delta = %s, want %s", got, want)
	}
	got = probe(t, load(t, host.ModuleConfig{Owner: t.Name() + "/user", WriteUserState: true}), newFakeCtx(nil), ops)
	if want := canon(t, `[{"op":"artifact_save","status":"OK","result":0},{"op":"artifact_save","status":"OK","result":0}]`); got != want {
		t.Errorf("with WriteUserState:\n got %s\nwant %s", got, want)
	}
}

// TestRunLevelHooksReadOnly: a plugin's on_user_message has no callback
// context: it reads state and nothing else.
func TestRunLevelHooksReadOnly(t *testing.T) {
	t.Parallel()
	m := load(t, host.ModuleConfig{})
	f := newFakeCtx(map[string]any{"color": "blue"})
	msg, err := m.Plugin().OnUserMessage(readonlyCtx{f}, &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "probe readonly"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `state_get=OK "blue" state_set=UNAVAILABLE skip_summarization=UNAVAILABLE artifact_list=UNAVAILABLE memory_add_session=UNAVAILABLE invocation=e-1`
	if msg == nil || len(msg.Parts) != 1 || msg.Parts[0].Text != want {
		t.Fatalf("message = %+v, want text %q", msg, want)
	}
	if len(f.actions.StateDelta) != 0 || f.actions.SkipSummarization {
		t.Errorf("actions changed: %+v", f.actions)
	}
}

// TestUserMessageAnswersKept: the guest's on_user_message rewrites a
// "shout" message as one text part. Beside a function response (the
// user's answer to a confirmation) that would drop the answer, so the
// replacement is refused, naming what it changes; the text alone may
// change.
func TestUserMessageAnswersKept(t *testing.T) {
	t.Parallel()
	m := load(t, host.ModuleConfig{})
	ctx := readonlyCtx{newFakeCtx(nil)}
	msg, err := m.Plugin().OnUserMessage(ctx, &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "shout hi"}}})
	if err != nil || msg == nil || msg.Parts[0].Text != "SHOUT HI" {
		t.Fatalf("text only: %+v, %v", msg, err)
	}
	answer := &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: "conf-1", Name: "adk_request_confirmation", Response: map[string]any{"confirmed": false}}}
	_, err = m.Plugin().OnUserMessage(ctx, &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "shout no"}, answer}})
	if !errors.Is(err, host.ErrNotPermitted) || !strings.Contains(err.Error(), "message's function calls and responses") {
		t.Fatalf("dropping the user's answer: err = %v, want ErrNotPermitted", err)
	}
}

// TestConfirmedArgsKept: the guest's before_tool redacts echo's password
// argument. On a call the user has confirmed, the host tells it so
// (BeforeToolInput.confirmation) and refuses the change: the call runs
// with the arguments the user confirmed, or not at all.
func TestConfirmedArgsKept(t *testing.T) {
	t.Parallel()
	m := load(t, host.ModuleConfig{})
	before := m.Callbacks().BeforeTool[0]
	echo := findTool(t, m, "echo")
	args := map[string]any{"password": "hunter2"}
	if _, err := before(newFakeCtx(nil), echo, args); err != nil || args["redacted"] != true {
		t.Fatalf("unconfirmed call: args %v, err %v; want them redacted", args, err)
	}
	ctx := newFakeCtx(nil)
	ctx.confirm = &session.ToolConfirmation{Confirmed: true}
	args = map[string]any{"password": "hunter2"}
	_, err := before(ctx, echo, args)
	if !errors.Is(err, host.ErrNotPermitted) || !strings.Contains(err.Error(), "the user confirmed") {
		t.Fatalf("confirmed call: err = %v, want ErrNotPermitted", err)
	}
	if args["password"] != "hunter2" || len(args) != 1 {
		t.Errorf("confirmed call's args changed: %v", args)
	}
}

func TestToolDeclarations(t *testing.T) {
	t.Parallel()
	m := load(t, host.ModuleConfig{})
	var names []string
	for _, tl := range m.Tools() {
		names = append(names, tl.Name())
	}
	if got, want := strings.Join(names, ","), "remember,echo,probe,fail,trap,spin,later"; got != want {
		t.Errorf("tools = %s, want %s", got, want)
	}
	native, err := tool.NewFunction(tool.FunctionConfig{
		Name:        "remember",
		Description: "Stores a value in session state and ends the turn.",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{
			"key": map[string]any{"type": "string"}, "value": map[string]any{}}, "required": []any{"key", "value"}},
		Fn: func(callbacks.ToolContext, map[string]any) (any, error) { return nil, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := findTool(t, m, "remember").Declaration(), native.Declaration(); !reflect.DeepEqual(got, want) {
		t.Errorf("declaration = %+v, want %+v", got, want)
	}
	later := findTool(t, m, "later")
	d := later.Declaration()
	if !later.IsLongRunning() || d.Description != "Answers in a later turn."+tool.LongRunningNote ||
		!reflect.DeepEqual(d.ResponseJsonSchema, map[string]any{"type": "object"}) || d.ParametersJsonSchema != nil {
		t.Errorf("later: long-running %v, declaration %+v", later.IsLongRunning(), d)
	}
}

func TestToolResults(t *testing.T) {
	t.Parallel()
	m := load(t, host.ModuleConfig{})
	ctx := newFakeCtx(nil)
	res, err := findTool(t, m, "echo").Run(ctx, map[string]any{"n": 1.5, "s": "x"})
	if r, ok := res.(tool.OrderedResult); err != nil || !ok || !reflect.DeepEqual(r.Value, map[string]any{"n": 1.5, "s": "x"}) || string(r.KeyOrder) != `{"n":1.5,"s":"x"}` {
		t.Errorf("echo = %#v, %v; want the object with its JSON", res, err)
	}
	// A long-running tool without a result answers later: nil.
	if res, err := findTool(t, m, "later").Run(ctx, nil); res != nil || err != nil {
		t.Errorf("later = %v, %v; want nil, nil", res, err)
	}
	_, err = findTool(t, m, "fail").Run(ctx, map[string]any{})
	var he *host.Error
	if !errors.As(err, &he) || he.Module != "testguest" || he.Hook != abi.HookToolCall || he.Tool != "fail" ||
		!errors.Is(err, sandbox.ErrGuest) || err.Error() != `module "testguest" hook tool_call (tool "fail"): guest reported an error: no luck` {
		t.Errorf("fail: %v", err)
	}
}

// TestCallbacks runs each agent callback of the module outside a runner:
// no answer unless triggered, and the answer converted back.
func TestCallbacks(t *testing.T) {
	t.Parallel()
	m := load(t, host.ModuleConfig{})
	cb := m.Callbacks()
	if len(cb.BeforeAgent)+len(cb.AfterAgent)+len(cb.BeforeModel)+len(cb.AfterModel)+len(cb.OnModelError)+
		len(cb.BeforeTool)+len(cb.AfterTool)+len(cb.OnToolError) != 8 {
		t.Fatalf("callbacks = %+v, want one of each", cb)
	}
	ctx := newFakeCtx(nil)
	text := func(c *genai.Content) string {
		if c == nil || len(c.Parts) == 0 {
			return "<nil>"
		}
		return c.Role + ":" + c.Parts[0].Text
	}

	if c, err := cb.BeforeAgent[0](ctx); c != nil || err != nil {
		t.Errorf("before_agent = %v, %v; want no answer", c, err)
	}
	ctx.user = &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "skip agent"}}}
	if c, err := cb.BeforeAgent[0](ctx); text(c) != "model:skipped by guest" || err != nil {
		t.Errorf("before_agent = %v, %v", text(c), err)
	}
	ctx.user = &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "after agent"}}}
	if c, err := cb.AfterAgent[0](ctx); text(c) != "model:added by guest" || err != nil {
		t.Errorf("after_agent = %v, %v", text(c), err)
	}

	resp := &model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{{Text: "the secret is 42"}}}, ModelVersion: "v7"}
	if r, err := cb.AfterModel[0](ctx, resp); err != nil || r == nil || text(r.Content) != "model:[redacted]" || r.ModelVersion != "v7" {
		t.Errorf("after_model = %+v, %v", r, err)
	}
	resp.Content.Parts[0].Text = "nothing to hide"
	if r, err := cb.AfterModel[0](ctx, resp); r != nil || err != nil {
		t.Errorf("after_model = %+v, %v; want no answer", r, err)
	}
	if r, err := cb.OnModelError[0](ctx, &model.Request{}, errors.New("quota")); err != nil || text(r.Content) != "model:fallback: quota" {
		t.Errorf("on_model_error = %+v, %v", r, err)
	}

	echo := findTool(t, m, "echo")
	if r, err := cb.AfterTool[0](ctx, echo, nil, map[string]any{"annotate": 1}); err != nil ||
		!reflect.DeepEqual(r, map[string]any{"annotate": int64(1), "note": "seen by after_tool"}) {
		t.Errorf("after_tool = %v, %v", r, err)
	}
	if r, err := cb.AfterTool[0](ctx, echo, nil, map[string]any{"plain": 1}); r != nil || err != nil {
		t.Errorf("after_tool = %v, %v; want no answer", r, err)
	}
	if r, err := cb.OnToolError[0](ctx, findTool(t, m, "fail"), nil, errors.New("boom")); err != nil ||
		!reflect.DeepEqual(r, map[string]any{"recovered": "boom"}) {
		t.Errorf("on_tool_error = %v, %v", r, err)
	}
	cached := namedTool("cached")
	if r, err := cb.BeforeTool[0](ctx, cached, map[string]any{}); err != nil || !reflect.DeepEqual(r, map[string]any{"from": "cache"}) {
		t.Errorf("before_tool = %v, %v", r, err)
	}
}

// TestPluginRunHooks: before_run and after_run, and on_event replacing an
// event, keeping what the ABI does not carry.
func TestPluginRunHooks(t *testing.T) {
	t.Parallel()
	p := load(t, host.ModuleConfig{}).Plugin()
	if p.Name() != "testguest" {
		t.Errorf("name = %q", p.Name())
	}
	f := newFakeCtx(nil)
	ro := readonlyCtx{f}
	if c, err := p.BeforeRun(ro); c != nil || err != nil {
		t.Errorf("before_run = %v, %v", c, err)
	}
	f.user = &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "stop"}}}
	if c, err := p.BeforeRun(ro); err != nil || c == nil || c.Parts[0].Text != "stopped by guest" {
		t.Errorf("before_run = %v, %v", c, err)
	}
	f.user = &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "fail after run"}}}
	if err := p.AfterRun(ro); err == nil || err.Error() != `module "testguest" hook after_run: guest reported an error: after_run refused` {
		t.Errorf("after_run = %v", err)
	}

	ev := session.NewEvent("e-1", "root", "root")
	ev.NodeInfo = &session.NodeInfo{Path: "root@1"}
	ev.Content = &genai.Content{Role: "model", Parts: []*genai.Part{{Text: "please mark me", PartMetadata: map[string]any{"k": "v"}}}}
	r, err := p.OnEvent(ro, ev)
	if err != nil || r == nil {
		t.Fatalf("on_event = %v, %v", r, err)
	}
	// The guest sent the content back unchanged: it is the host's, with
	// the part metadata the ABI does not carry; so are the node info and
	// the exact timestamp.
	if r.CustomMetadata["marked"] != true || r.NodeInfo != ev.NodeInfo || !r.Timestamp.Equal(ev.Timestamp) ||
		r.Content != ev.Content || r.ID != ev.ID {
		t.Errorf("on_event = %+v", r)
	}
}

// namedTool is a callbacks.Tool that is only a name.
type namedTool string

func (n namedTool) Name() string        { return string(n) }
func (n namedTool) Description() string { return "" }
func (n namedTool) IsLongRunning() bool { return false }
