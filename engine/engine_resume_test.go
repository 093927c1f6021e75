package engine_test

// Resumable invocations beyond what the conformance scenarios show: calls
// stored but never run are replayed on resume, and bad resume requests fail
// with errors that say what to do.

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model/scripted"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
)

func resumableRunner(t *testing.T, root engine.Agent) (*engine.Runner, session.Service) {
	t.Helper()
	svc := session.NewInMemoryService()
	r, err := engine.NewRunner(engine.RunnerConfig{AppName: "app", Agent: root, Sessions: svc, Resumable: true})
	if err != nil {
		t.Fatal(err)
	}
	return r, svc
}

// A process that stopped after storing a model's call, before running the
// tool: resuming the invocation runs the call, then carries on.
func TestResumeReplaysCallStoredButNeverRun(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	lookup := newTool(t, "lookup", objParams("q"), func(ctx callbacks.ToolContext, args map[string]any) (any, error) {
		runs.Add(1)
		return map[string]any{"answer": "42"}, nil
	})
	m := scripted.New("m", text("The answer is 42."), text("Reported."))
	worker := newLlm(t, engine.LlmAgentConfig{Name: "worker", Model: m, Tools: []tool.Tool{lookup}})
	reporter := newLlm(t, engine.LlmAgentConfig{Name: "reporter", Model: m})
	r, svc := resumableRunner(t, newSeq(t, "pipeline", worker, reporter))

	ctx := context.Background()
	s, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	const inv = "e-crashed"
	user := session.NewEvent(inv, "user", "")
	user.Content = userText("Look it up.")
	start := session.NewEvent(inv, "pipeline", "")
	start.Actions.AgentState = map[string]any{"current_sub_agent": "worker"}
	call := session.NewEvent(inv, "worker", "")
	call.Content = &genai.Content{Role: "model", Parts: []*genai.Part{{FunctionCall: fcallID("call-1", "lookup", map[string]any{"q": "x"})}}}
	for _, ev := range []*session.Event{user, start, call} {
		if err := svc.AppendEvent(ctx, s, ev); err != nil {
			t.Fatal(err)
		}
	}

	evs := mustRun(t, r, svc, "s", nil, engine.RunConfig{InvocationID: inv})
	if runs.Load() != 1 {
		t.Fatalf("the stored call ran %d times, want 1", runs.Load())
	}
	wantEvents(t, "resumed", evs,
		`{"author":"worker","content":{"parts":[{"functionResponse":{"id":"call-1","name":"lookup","response":{"answer":"42"}}}],"role":"user"}}`,
		`{"author":"worker","content":{"parts":[{"text":"The answer is 42."}],"role":"model"}}`,
		`{"author":"worker","actions":{"endOfAgent":true}}`,
		`{"author":"pipeline","actions":{"agentState":{"current_sub_agent":"reporter"}}}`,
		`{"author":"reporter","content":{"parts":[{"text":"Reported."}],"role":"model"}}`,
		`{"author":"reporter","actions":{"endOfAgent":true}}`,
		`{"author":"pipeline","actions":{"endOfAgent":true}}`)
	for _, ev := range evs {
		if ev.InvocationID != inv {
			t.Errorf("event of %s has invocation %q, want the resumed %q", ev.Author, ev.InvocationID, inv)
		}
	}
	// The model saw the replayed call's response.
	if got := len(m.Requests()[0].Contents); got != 3 {
		t.Errorf("first request after the replay has %d contents, want 3 (question, call, response)", got)
	}
	// Resuming again: every agent ended, nothing runs.
	if evs := mustRun(t, r, svc, "s", nil, engine.RunConfig{InvocationID: inv}); len(evs) != 0 {
		t.Errorf("resuming an ended invocation yielded %s", eventsJSON(evs))
	}
	if runs.Load() != 1 || m.Remaining() != 0 {
		t.Errorf("after the second resume: tool runs %d, unplayed model steps %d", runs.Load(), m.Remaining())
	}
}

// A resumed invocation whose events follow other invocations' and are
// interleaved with another's: its step finds its own stored call and
// replays it, though per-step scans start at its first event.
func TestResumeFindsInvocationAmidOthers(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	lookup := newTool(t, "lookup", objParams("q"), func(ctx callbacks.ToolContext, args map[string]any) (any, error) {
		runs.Add(1)
		return map[string]any{"answer": "42"}, nil
	})
	m := scripted.New("m", text("The answer is 42."))
	r, svc := resumableRunner(t, newLlm(t, engine.LlmAgentConfig{Name: "worker", Model: m, Tools: []tool.Tool{lookup}}))

	ctx := context.Background()
	s, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	const inv = "e-crashed"
	ev := func(id, author string, c *genai.Content) *session.Event {
		e := session.NewEvent(id, author, "")
		e.Content = c
		return e
	}
	stored := []*session.Event{
		ev("e-old", "user", userText("Hello.")),
		ev("e-old", "worker", &genai.Content{Role: "model", Parts: []*genai.Part{{Text: "Hi."}}}),
		ev(inv, "user", userText("Look it up.")),
		ev("e-other", "user", userText("Still there?")),
		ev(inv, "worker", &genai.Content{Role: "model", Parts: []*genai.Part{{FunctionCall: fcallID("call-1", "lookup", map[string]any{"q": "x"})}}}),
	}
	for _, e := range stored {
		if err := svc.AppendEvent(ctx, s, e); err != nil {
			t.Fatal(err)
		}
	}
	evs := mustRun(t, r, svc, "s", nil, engine.RunConfig{InvocationID: inv})
	if runs.Load() != 1 {
		t.Fatalf("the stored call ran %d times, want 1", runs.Load())
	}
	wantEvents(t, "resumed", evs,
		`{"author":"worker","content":{"parts":[{"functionResponse":{"id":"call-1","name":"lookup","response":{"answer":"42"}}}],"role":"user"}}`,
		`{"author":"worker","content":{"parts":[{"text":"The answer is 42."}],"role":"model"}}`,
		`{"author":"worker","actions":{"endOfAgent":true}}`)
}

func TestResumeErrors(t *testing.T) {
	t.Parallel()
	m := scripted.New("m", calls(fcallID("job-1", "start_job", nil)))
	job := newLongTool(t, "start_job", func(callbacks.ToolContext, map[string]any) (any, error) { return nil, nil })
	a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m, Tools: []tool.Tool{job}})

	// google-adk 2.13's legacy path (a workflow root) resumes by id only
	// in a resumable app; its node runtime (a root LlmAgent) in any app.
	plain, plainSvc := mustRunner(t, newSeq(t, "pipeline", newLlm(t, engine.LlmAgentConfig{Name: "step", Model: scripted.New("m2")})))
	var me *engine.MessageError
	if _, err := run(t, plain, plainSvc, "s", nil, engine.RunConfig{InvocationID: "e-1"}); !errors.As(err, &me) || me.Error() != "Running an agent requires a new_message or a resumable app. Session: s, User: u" {
		t.Errorf("resume without a message in a non-resumable app: err = %v, want google-adk's ValueError", err)
	}

	r, svc := resumableRunner(t, a)
	mustRun(t, r, svc, "s", userText("Start."), engine.RunConfig{})
	cases := []struct {
		name string
		msg  *genai.Content
		cfg  engine.RunConfig
		want string
	}{
		{"nothing to run", nil, engine.RunConfig{}, "invocation id to resume"},
		{"response without id", userFuncResponse("", "start_job", nil), engine.RunConfig{InvocationID: "e-1"}, "Function response id is required to resume an invocation."},
		{"response to no call", userFuncResponse("job-9", "start_job", nil), engine.RunConfig{}, "Function call not found for function response ids: {'job-9'}."},
		{"response beside text", &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "hi"}, {FunctionResponse: &genai.FunctionResponse{ID: "job-1", Name: "start_job"}}}}, engine.RunConfig{}, "Message cannot contain both function responses and text."},
		{"unknown invocation", nil, engine.RunConfig{InvocationID: "e-none"}, "no user message available for resuming invocation e-none"},
	}
	for _, c := range cases {
		if _, err := run(t, r, svc, "s", c.msg, c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to contain %q", c.name, err, c.want)
		}
	}
}
