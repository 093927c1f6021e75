package engine_test

// Tool confirmation beyond what the conformance scenarios show: a per-call
// requirement, google-adk's wrapped answer format, an answer sent twice,
// and a malformed answer.

import (
	"errors"
	"sync"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model/scripted"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
)

// transferTool needs confirmation except for transfers to "self"; it
// records the confirmations it ran with.
func transferTool(t *testing.T, mu *sync.Mutex, seen *[]*session.ToolConfirmation) tool.Tool {
	t.Helper()
	f, err := tool.NewFunction(tool.FunctionConfig{
		Name: "transfer", Description: "Transfers money.", Parameters: objParams("to"),
		RequireConfirmationFn: func(_ callbacks.ToolContext, args map[string]any) (bool, error) {
			return args["to"] != "self", nil
		},
		Fn: func(ctx callbacks.ToolContext, args map[string]any) (any, error) {
			mu.Lock()
			defer mu.Unlock()
			*seen = append(*seen, ctx.ToolConfirmation())
			return map[string]any{"sent_to": args["to"]}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// confirmationCallID returns the id of the adk_request_confirmation call
// in events, failing the test when there is none.
func confirmationCallID(t *testing.T, events []*session.Event) string {
	t.Helper()
	for _, ev := range events {
		for _, fc := range ev.FunctionCalls() {
			if fc.Name == "adk_request_confirmation" {
				return fc.ID
			}
		}
	}
	t.Fatalf("no adk_request_confirmation call in %s", eventsJSON(events))
	return ""
}

func TestToolConfirmationFlow(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []*session.ToolConfirmation
	m := scripted.New("m",
		calls(fcallID("c0", "transfer", map[string]any{"to": "self"}), fcallID("c1", "transfer", map[string]any{"to": "bob"})),
		text("Sent."))
	agent := newLlm(t, engine.LlmAgentConfig{Name: "bank", Model: m, Tools: []tool.Tool{transferTool(t, &mu, &seen)}})
	r, svc := mustRunner(t, agent)

	// Turn 1: c0 needs no confirmation and runs; c1 is held back. The
	// settled response comes first, for the model (not skipped), and the
	// long-running confirmation request ends the turn.
	evs := mustRun(t, r, svc, "s", userText("Pay myself and bob."), engine.RunConfig{})
	if len(evs) != 3 {
		t.Fatalf("turn 1: got %d events, want call, responses, request: %s", len(evs), eventsJSON(evs))
	}
	resp := evs[1]
	if resp.Actions.SkipSummarization {
		t.Error("turn 1: a response event with a settled response must not skip summarization")
	}
	if _, ok := resp.Actions.RequestedToolConfirmations["c1"]; !ok || len(resp.Actions.RequestedToolConfirmations) != 1 {
		t.Errorf("turn 1: requested confirmations = %v, want only c1", resp.Actions.RequestedToolConfirmations)
	}
	if got := resp.FunctionResponses()[1].Response["error"]; got != "This tool call requires confirmation, please approve or reject." {
		t.Errorf("turn 1: c1's response error = %v", got)
	}
	req := evs[2]
	if len(req.LongRunningToolIDs) != 1 || req.LongRunningToolIDs[0] != confirmationCallID(t, evs) {
		t.Errorf("turn 1: the request call must be long-running: %s", eventsJSON([]*session.Event{req}))
	}
	orig, _ := req.FunctionCalls()[0].Args["originalFunctionCall"].(map[string]any)
	if orig["id"] != "c1" || orig["name"] != "transfer" {
		t.Errorf("turn 1: originalFunctionCall = %v, want c1/transfer", orig)
	}

	// Turn 2: the answer in google-adk's client wrapper format. c1 runs
	// with it, then the model answers.
	answer := userFuncResponse(confirmationCallID(t, evs), "adk_request_confirmation", map[string]any{"response": `{"confirmed": true, "payload": {"otp": "1234"}}`})
	evs = mustRun(t, r, svc, "s", answer, engine.RunConfig{})
	wantEvents(t, "turn 2", evs,
		`{"author":"bank","content":{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"transfer","response":{"sent_to":"bob"}}}]}}`,
		`{"author":"bank","content":{"role":"model","parts":[{"text":"Sent."}]}}`)
	mu.Lock()
	if len(seen) != 2 || seen[0] != nil || seen[1] == nil || !seen[1].Confirmed || jsonOf(seen[1].Payload) != `{"otp":"1234"}` {
		t.Errorf("confirmations seen by the tool = %s, want [nil, confirmed with payload]", jsonOf(seen))
	}
	mu.Unlock()

	// Turn 3: the same answer again. It was acted on already: nothing runs
	// (the script has no response left), and the invocation just ends.
	evs = mustRun(t, r, svc, "s", answer, engine.RunConfig{})
	if len(evs) != 0 {
		t.Errorf("turn 3: a consumed answer produced events: %s", eventsJSON(evs))
	}
	mu.Lock()
	if len(seen) != 2 {
		t.Errorf("turn 3: the tool ran again (%d runs)", len(seen))
	}
	mu.Unlock()
}

func TestToolConfirmationMalformedAnswer(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []*session.ToolConfirmation
	m := scripted.New("m", calls(fcallID("c1", "transfer", map[string]any{"to": "bob"})))
	agent := newLlm(t, engine.LlmAgentConfig{Name: "bank", Model: m, Tools: []tool.Tool{transferTool(t, &mu, &seen)}})
	r, svc := mustRunner(t, agent)
	evs := mustRun(t, r, svc, "s", userText("Pay bob."), engine.RunConfig{})

	// google-adk's ToolConfirmation forbids unknown fields: pydantic's
	// ValidationError, as google-adk 2.13 raises it.
	answer := userFuncResponse(confirmationCallID(t, evs), "adk_request_confirmation", map[string]any{"confirmed": true, "approved_by": "me"})
	_, err := run(t, r, svc, "s", answer, engine.RunConfig{})
	var ce *engine.ConfirmationError
	want := "1 validation error for ToolConfirmation\napproved_by\n  Extra inputs are not permitted [type=extra_forbidden, input_value='me', input_type=str]\n" +
		"    For further information visit https://errors.pydantic.dev/2.14/v/extra_forbidden"
	if !errors.As(err, &ce) || ce.ErrorCode() != "ValidationError" || ce.Error() != want {
		t.Fatalf("err = %v, want a ConfirmationError (ValidationError): %s", err, want)
	}
	if len(seen) != 0 {
		t.Errorf("the tool ran on a malformed answer")
	}
}

func TestToolConfirmationRejectedByAnswer(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []*session.ToolConfirmation
	m := scripted.New("m", calls(fcallID("c1", "transfer", map[string]any{"to": "bob"})), text("Not sent."))
	agent := newLlm(t, engine.LlmAgentConfig{Name: "bank", Model: m, Tools: []tool.Tool{transferTool(t, &mu, &seen)}})
	r, svc := mustRunner(t, agent)
	evs := mustRun(t, r, svc, "s", userText("Pay bob."), engine.RunConfig{})
	answer := &genai.Content{Role: "user", Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
		ID: confirmationCallID(t, evs), Name: "adk_request_confirmation", Response: map[string]any{"confirmed": false},
	}}}}
	evs = mustRun(t, r, svc, "s", answer, engine.RunConfig{})
	wantEvents(t, "rejection", evs,
		`{"author":"bank","content":{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"transfer","response":{"error":"This tool call is rejected."}}}]}}`,
		`{"author":"bank","content":{"role":"model","parts":[{"text":"Not sent."}]}}`)
	if len(seen) != 0 {
		t.Errorf("the gate let a rejected call run the tool")
	}
}
