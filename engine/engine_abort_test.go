package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model/scripted"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
)

// A run whose context is cancelled while a tool runs (a client that
// disconnects) is sealed: the calls without a response get the abort
// error, from the agent that made them, after_run still runs, the run ends
// with the context's error, and the next turn's request shows the sealed
// calls.
func TestAbortWhileToolRunsSealsDanglingCalls(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	slow := newTool(t, "slow", nil, func(ctx callbacks.ToolContext, _ map[string]any) (any, error) {
		close(started)
		<-ctx.Done() // runs until the client goes away
		return nil, ctx.Err()
	})
	fast := newTool(t, "fast", nil, func(callbacks.ToolContext, map[string]any) (any, error) { return map[string]any{"ok": true}, nil })
	m := scripted.New("m", calls(fcall("slow", nil), fcall("fast", nil)), text("Sorry about that."))
	log := &hookLog{}
	a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m, Tools: []tool.Tool{slow, fast}})
	r, svc := mustRunner(t, a, &testPlugin{name: "p", log: log})
	if _, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	go func() {
		<-started
		cancel()
	}()
	var evs []*session.Event
	var runErr error
	for ev, err := range r.Run(ctx, "u", "s", userText("Go."), engine.RunConfig{}) {
		if err != nil {
			runErr = err
			break
		}
		evs = append(evs, ev)
	}
	if !errors.Is(runErr, context.Canceled) {
		t.Fatalf("run error = %v, want context.Canceled", runErr)
	}
	sealed := `{"author":"assistant","content":{"parts":[
		{"functionResponse":{"id":"adk-*","name":"slow","response":{"error":"Invocation was aborted by client."}}},
		{"functionResponse":{"id":"adk-*","name":"fast","response":{"error":"Invocation was aborted by client."}}}],"role":"user"},
		"errorCode":"INVOCATION_ABORTED","errorMessage":"Invocation was aborted by client."}`
	wantEvents(t, "events", evs,
		`{"author":"assistant","content":{"parts":[{"functionCall":{"id":"adk-*","name":"slow"}},{"functionCall":{"id":"adk-*","name":"fast"}}],"role":"model"}}`,
		sealed)
	if len(evs) == 2 {
		fcs, frs := evs[0].FunctionCalls(), evs[1].FunctionResponses()
		for i := range fcs {
			if i >= len(frs) || frs[i].ID != fcs[i].ID {
				t.Fatalf("sealing response %d does not answer call %d", i, i)
			}
		}
	}
	stored := loadSession(t, svc, "s").Events()
	if n := len(stored); n != 3 || stored[2].ErrorCode != "INVOCATION_ABORTED" {
		t.Fatalf("stored events:%s", eventsJSON(stored))
	}
	if log.count("p.after_run") != 1 {
		t.Errorf("after_run did not run once after the abort: %v", log.get())
	}

	// The next turn: the model sees the sealed calls, and no tool runs.
	evs = mustRun(t, r, svc, "s", userText("Hello?"), engine.RunConfig{})
	wantEvents(t, "next turn", evs, `{"author":"assistant","content":{"parts":[{"text":"Sorry about that."}],"role":"model"}}`)
	reqs := m.Requests()
	last := reqs[len(reqs)-1].Contents
	if len(last) != 4 || len(last[2].Parts) != 2 || last[2].Parts[0].FunctionResponse == nil {
		t.Fatalf("next request contents = %s", jsonOf(last))
	}
}

// A caller that stops reading is not an abort: nothing is sealed.
func TestStoppingEarlyIsNoAbort(t *testing.T) {
	t.Parallel()
	m := scripted.New("m", calls(fcall("noop", nil)), text("Done."))
	noop := newTool(t, "noop", nil, func(callbacks.ToolContext, map[string]any) (any, error) { return map[string]any{}, nil })
	a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m, Tools: []tool.Tool{noop}})
	r, svc := mustRunner(t, a)
	ctx := context.Background()
	if _, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	for _, err := range r.Run(ctx, "u", "s", userText("Go."), engine.RunConfig{}) {
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	for _, ev := range loadSession(t, svc, "s").Events() {
		if ev.ErrorCode != "" {
			t.Fatalf("stored an error event after an early stop: %s", evView(ev))
		}
	}
}
