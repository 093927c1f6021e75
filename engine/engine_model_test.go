package engine_test

// Model calls: the model callbacks, model failures, the call limit and the
// empty-response policy.

import (
	"errors"
	"slices"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/model/scripted"
	"github.com/adkhost/adkhost/engine/tool"
)

func TestBeforeModelResponseSkipsModel(t *testing.T) {
	t.Parallel()
	m := scripted.New("m", text("unused"))
	a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m,
		BeforeModel: []callbacks.BeforeModel{func(ctx callbacks.CallbackContext, req *model.Request) (*model.Response, error) {
			ctx.State().Set("cache_hit", true)
			return text("From cache."), nil
		}},
	})
	r, svc := mustRunner(t, a)
	evs := mustRun(t, r, svc, "s", userText("Hi"), engine.RunConfig{})
	// State written by the callback rides on the event of its response.
	wantEvents(t, "events", evs,
		`{"author":"assistant","content":{"parts":[{"text":"From cache."}],"role":"model"},"actions":{"stateDelta":{"cache_hit":true}}}`)
	if n := len(m.Requests()); n != 0 {
		t.Errorf("model got %d requests, want none", n)
	}
}

func TestAfterModelReplacesResponse(t *testing.T) {
	t.Parallel()
	var saw string
	m := scripted.New("m", text("original"))
	a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m,
		AfterModel: []callbacks.AfterModel{func(ctx callbacks.CallbackContext, resp *model.Response) (*model.Response, error) {
			saw = resp.Content.Parts[0].Text
			return text("replaced"), nil
		}},
	})
	r, svc := mustRunner(t, a)
	evs := mustRun(t, r, svc, "s", userText("Hi"), engine.RunConfig{})
	wantEvents(t, "events", evs, `{"author":"assistant","content":{"parts":[{"text":"replaced"}],"role":"model"}}`)
	if saw != "original" || len(m.Requests()) != 1 {
		t.Errorf("after_model saw %q after %d model calls", saw, len(m.Requests()))
	}
}

func TestOnModelErrorRecovers(t *testing.T) {
	t.Parallel()
	var saw error
	cause := errors.New("backend unavailable")
	m := scripted.FromSteps("m", scripted.Step{Err: cause})
	a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m,
		OnModelError: []callbacks.OnModelError{func(ctx callbacks.CallbackContext, req *model.Request, err error) (*model.Response, error) {
			saw = err
			return text("Fallback answer."), nil
		}},
	})
	r, svc := mustRunner(t, a)
	evs := mustRun(t, r, svc, "s", userText("Hi"), engine.RunConfig{})
	wantEvents(t, "events", evs, `{"author":"assistant","content":{"parts":[{"text":"Fallback answer."}],"role":"model"}}`)
	if !errors.Is(saw, cause) {
		t.Errorf("on_model_error saw %v, want the model's error", saw)
	}
}

func TestUnhandledModelErrorKeepsSessionUsable(t *testing.T) {
	t.Parallel()
	log := &hookLog{}
	cause := errors.New("quota exhausted")
	m := scripted.FromSteps("m", scripted.Step{Err: cause}, scripted.Step{Response: text("Working again.")})
	a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m,
		BeforeAgent:  []callbacks.BeforeAgent{logBeforeAgent(log, "assistant")},
		AfterAgent:   []callbacks.AfterAgent{logAfterAgent(log, "assistant")},
		OnModelError: []callbacks.OnModelError{logOnModelError(log, "assistant")},
	})
	r, svc := mustRunner(t, a, &testPlugin{name: "observer", log: log})
	evs, err := run(t, r, svc, "s", userText("First."), engine.RunConfig{})
	var me *engine.ModelError
	if !errors.As(err, &me) || me.Agent != "assistant" || !errors.Is(err, cause) {
		t.Fatalf("error = %v, want a ModelError of assistant wrapping the cause", err)
	}
	errEvent := `{"author":"assistant","errorCode":"Error","errorMessage":"quota exhausted"}`
	wantEvents(t, "turn 1", evs, errEvent)
	wantEvents(t, "stored", loadSession(t, svc, "s").Events()[1:], errEvent)
	want := []string{
		"observer.on_user_message", "observer.before_run",
		"observer.before_agent", "assistant.before_agent",
		"observer.before_model",
		"observer.on_model_error", "assistant.on_model_error",
		"observer.on_agent_error", "observer.on_event", "observer.on_run_error",
	}
	if got := log.get(); !slices.Equal(got, want) {
		t.Errorf("hooks:\ngot  %q\nwant %q", got, want)
	}

	evs = mustRun(t, r, svc, "s", userText("Second."), engine.RunConfig{})
	wantEvents(t, "turn 2", evs, `{"author":"assistant","content":{"parts":[{"text":"Working again."}],"role":"model"}}`)
	// The content-less error event is not sent back to the model.
	wantJSON(t, "turn 2 contents", m.Requests()[1].Contents,
		`[{"parts":[{"text":"First."}],"role":"user"},{"parts":[{"text":"Second."}],"role":"user"}]`)
}

func TestMaxLLMCallsExceeded(t *testing.T) {
	t.Parallel()
	stepTool := func(t *testing.T) tool.Tool {
		return newTool(t, "step", nil, func(callbacks.ToolContext, map[string]any) (any, error) { return map[string]any{"ok": true}, nil })
	}
	call := `{"author":"assistant","content":{"parts":[{"functionCall":{"id":"adk-*","name":"step"}}],"role":"model"}}`
	resp := `{"author":"assistant","content":{"parts":[{"functionResponse":{"id":"adk-*","name":"step","response":{"ok":true}}}],"role":"user"}}`
	t.Run("one agent", func(t *testing.T) {
		t.Parallel()
		m := scripted.New("m", calls(fcall("step", nil)), calls(fcall("step", nil)), text("unused"))
		r, svc := mustRunner(t, newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m, Tools: []tool.Tool{stepTool(t)}}))
		evs, err := run(t, r, svc, "s", userText("Go."), engine.RunConfig{MaxLLMCalls: 2})
		var le *engine.LLMCallsLimitExceededError
		if !errors.As(err, &le) || le.Limit != 2 || le.Error() != "Max number of llm calls limit of `2` exceeded" {
			t.Fatalf("error = %v, want LLMCallsLimitExceededError with limit 2", err)
		}
		wantEvents(t, "events", evs, call, resp, call, resp,
			`{"author":"assistant","errorCode":"LlmCallsLimitExceededError","errorMessage":"Max number of llm calls limit of `+"`2`"+` exceeded"}`)
		// The limit is checked before the call: no request reaches the model.
		if n := len(m.Requests()); n != 2 {
			t.Errorf("model got %d requests, want 2", n)
		}
	})
	t.Run("counted across the agents of the invocation", func(t *testing.T) {
		t.Parallel()
		mRoot := scripted.New("root-model", calls(transferCall("child")))
		mChild := scripted.New("child-model", text("unused"))
		child := newLlm(t, engine.LlmAgentConfig{Name: "child", Description: "Child.", Model: mChild})
		r, svc := mustRunner(t, newLlm(t, engine.LlmAgentConfig{Name: "root", Model: mRoot, SubAgents: []engine.Agent{child}}))
		evs, err := run(t, r, svc, "s", userText("Go."), engine.RunConfig{MaxLLMCalls: 1})
		var le *engine.LLMCallsLimitExceededError
		if !errors.As(err, &le) || le.Limit != 1 {
			t.Fatalf("error = %v, want LLMCallsLimitExceededError with limit 1", err)
		}
		if len(evs) != 3 {
			t.Fatalf("events:%s", eventsJSON(evs))
		}
		// The child failed before yielding anything: its run carries the
		// author it inherited from root's run (google-adk 2.13).
		wantEvents(t, "error event", evs[2:],
			`{"author":"root","errorCode":"LlmCallsLimitExceededError","errorMessage":"Max number of llm calls limit of `+"`1`"+` exceeded"}`)
		if n := len(mChild.Requests()); n != 0 {
			t.Errorf("child model got %d requests, want none", n)
		}
	})
}

func TestEmptyStopResponse(t *testing.T) {
	t.Parallel()
	const noContent = `"errorCode":"MODEL_RETURNED_NO_CONTENT","errorMessage":"The model returned no content (finish_reason=STOP with empty parts).","finishReason":"STOP"`
	tests := []struct {
		name string
		resp *model.Response
		want string
	}{
		{
			name: "no content",
			resp: &model.Response{FinishReason: genai.FinishReasonStop},
			want: `{"author":"assistant",` + noContent + `}`,
		},
		{
			name: "empty parts",
			resp: &model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{}}, FinishReason: genai.FinishReasonStop},
			want: `{"author":"assistant","content":{"role":"model"},` + noContent + `}`,
		},
		{
			name: "thought only",
			resp: &model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{{Text: "only thinking", Thought: true}}}, FinishReason: genai.FinishReasonStop},
			want: `{"author":"assistant","content":{"parts":[{"text":"only thinking","thought":true}],"role":"model"},"errorCode":"MODEL_RETURNED_NO_CONTENT","errorMessage":"The model returned no actionable content (finish_reason=STOP with thought-only or whitespace-only parts).","finishReason":"STOP"}`,
		},
		{
			name: "real answer",
			resp: &model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{{Text: "A real answer."}}}, FinishReason: genai.FinishReasonStop},
			want: `{"author":"assistant","content":{"parts":[{"text":"A real answer."}],"role":"model"},"finishReason":"STOP"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := scripted.New("m", tt.resp)
			r, svc := mustRunner(t, newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m}))
			evs := mustRun(t, r, svc, "s", userText("Hi"), engine.RunConfig{})
			wantEvents(t, "events", evs, tt.want)
			if n := len(m.Requests()); n != 1 {
				t.Errorf("model called %d times, want 1", n)
			}
		})
	}
}
